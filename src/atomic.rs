//! Atomic file output: the files one command writes (`run -o DIR`'s outputs, `build`'s library
//! or object and header, `autotune`'s tuning file) appear complete and together, or not at all.
//!
//! Each file is first written in full to a temporary file in its own directory, with a random
//! name and created exclusively (`.NAME.RANDOM.tmp`, `O_EXCL`: a symbolic link or file planted
//! under a predictable name is never written through). At the commit all of them are flushed to
//! disk (at once, on one thread each: the file system's journal commits then serve several files,
//! instead of one commit after another); each destination that exists is kept under a second
//! name (a hard link, else a copy); then the temporaries are renamed to their names, which on one
//! file system replaces a file in one step: a reader (or a concurrent `ogham build`) sees, for
//! each file, the old file or the new one, never a partial one. When a rename fails (a
//! destination that another user owns in a sticky directory, say), the files already renamed are
//! put back to their old versions (or removed where there was none), so the directory holds
//! exactly what it held before. A failure while writing (a full disk, a file size limit, which the
//! CLI reports as `EFBIG` instead of dying of `SIGXFSZ`, an unwritable directory) leaves no file
//! behind, not even the files staged before it; so does a failure found by the checks before the
//! first rename (a destination that is a directory, an old version that cannot be kept).
//! Destinations that exist and are not regular files (`/dev/stdout`, `/dev/full`, a FIFO) are
//! written directly: they cannot be replaced.
//!
//! Invariant: a [`Staged`] dropped without [`Staged::commit`] removes its temporary files.

use ogham_runtime::cache_file::{create_exclusive, random_hex};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Files written to temporaries, waiting to be renamed to their names together.
#[derive(Default)]
pub struct Staged {
    /// (temporary, destination) pairs, in the order staged.
    files: Vec<(PathBuf, PathBuf)>,
}

/// Whether `path` exists and is something other than a regular file (a device, a FIFO).
fn special(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// A new file for `path` with a random name in the same directory, created exclusively.
fn temporary(path: &Path, extension: &str) -> std::io::Result<(PathBuf, File)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    create_exclusive(dir, &name, extension, 0o666)
}

impl Staged {
    pub fn new() -> Staged {
        Staged::default()
    }

    /// Stages `bytes` as the contents of `path`.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), String> {
        let failed = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        if special(path) {
            return fs::write(path, bytes).map_err(failed);
        }
        let (tmp, mut file) = temporary(path, "tmp").map_err(failed)?;
        // Registered first, so that a failed write's partial temporary is removed too.
        self.files.push((tmp, path.to_path_buf()));
        file.write_all(bytes).map_err(failed)
    }

    /// Flushes every staged file to disk and renames it to its name; on failure, removes the
    /// temporaries and puts back the old versions of the files already renamed by this call.
    pub fn commit(mut self) -> Result<(), String> {
        let files = std::mem::take(&mut self.files);
        let temporaries = || files.iter().map(|(tmp, _)| tmp);
        if let Some((_, dest)) = files.iter().find(|(_, dest)| dest.is_dir()) {
            remove_all(temporaries());
            return Err(format!(
                "cannot write {}: it is a directory",
                dest.display()
            ));
        }
        let synced: Vec<std::io::Result<()>> = std::thread::scope(|s| {
            let syncs: Vec<_> = files
                .iter()
                .map(|(tmp, _)| s.spawn(move || File::open(tmp)?.sync_all()))
                .collect();
            syncs
                .into_iter()
                .map(|t| {
                    t.join()
                        .unwrap_or_else(|_| Err(std::io::Error::other("panicked")))
                })
                .collect()
        });
        for ((_, dest), synced) in files.iter().zip(synced) {
            if let Err(e) = synced {
                remove_all(temporaries());
                return Err(format!("cannot write {}: {e}", dest.display()));
            }
        }
        // The old version of each destination, kept until every new file is in place.
        let mut olds: Vec<Option<PathBuf>> = Vec::new();
        for (_, dest) in &files {
            match keep_old(dest) {
                Ok(old) => olds.push(old),
                Err(e) => {
                    remove_all(temporaries());
                    remove_all(olds.iter().flatten());
                    return Err(format!(
                        "cannot write {}: cannot keep its old version while writing: {e}",
                        dest.display()
                    ));
                }
            }
        }
        for (k, (tmp, dest)) in files.iter().enumerate() {
            if let Err(e) = fs::rename(tmp, dest) {
                for ((_, done), old) in files[..k].iter().zip(&olds) {
                    match old {
                        Some(old) => {
                            let _ = fs::rename(old, done);
                        }
                        None => {
                            let _ = fs::remove_file(done);
                        }
                    }
                }
                remove_all(files[k..].iter().map(|(tmp, _)| tmp));
                remove_all(olds[k..].iter().flatten());
                return Err(format!("cannot write {}: {e}", dest.display()));
            }
        }
        remove_all(olds.iter().flatten());
        Ok(())
    }
}

/// Keeps the file at `dest`, if there is one, under a second name in its directory (a hard
/// link, else a copy) and returns that name.
fn keep_old(dest: &Path) -> std::io::Result<Option<PathBuf>> {
    if fs::symlink_metadata(dest).is_err() {
        return Ok(None);
    }
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let random = random_hex().map_err(std::io::Error::other)?;
    // A link never follows a file that appears under its new name: it fails.
    let link = dest.with_file_name(format!(".{name}.{random}.old"));
    if fs::hard_link(dest, &link).is_ok() {
        return Ok(Some(link));
    }
    let (copy, mut file) = temporary(dest, "old")?;
    let copied = File::open(dest).and_then(|mut old| std::io::copy(&mut old, &mut file));
    match copied {
        Ok(_) => Ok(Some(copy)),
        Err(e) => {
            let _ = fs::remove_file(&copy);
            Err(e)
        }
    }
}

fn remove_all<'p>(paths: impl Iterator<Item = &'p PathBuf>) {
    for p in paths {
        let _ = fs::remove_file(p);
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        remove_all(self.files.iter().map(|(tmp, _)| tmp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ogham-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn commits_all_files() {
        let d = dir("all");
        let mut s = Staged::new();
        s.write(&d.join("a"), b"1").unwrap();
        s.write(&d.join("b"), b"2").unwrap();
        assert!(!d.join("a").exists(), "nothing appears before the commit");
        s.commit().unwrap();
        assert_eq!(entries(&d), ["a", "b"]);
        assert_eq!(fs::read(d.join("b")).unwrap(), b"2");
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let d = dir("fail");
        let mut s = Staged::new();
        s.write(&d.join("a"), b"1").unwrap();
        let e = s.write(&d.join("missing").join("b"), b"2").unwrap_err();
        assert!(e.contains("missing/b"), "{e}");
        drop(s);
        assert!(entries(&d).is_empty(), "{:?}", entries(&d));
    }

    #[test]
    fn a_failed_rename_puts_the_old_files_back() {
        let d = dir("rollback");
        fs::write(d.join("a"), b"old a").unwrap();
        fs::write(d.join("b"), b"old b").unwrap();
        let mut s = Staged::new();
        s.write(&d.join("a"), b"new a").unwrap();
        s.write(&d.join("c"), b"new c").unwrap();
        s.write(&d.join("b"), b"new b").unwrap();
        // The last rename fails (its temporary is gone), after `a` and `c` were renamed.
        fs::remove_file(&s.files[2].0).unwrap();
        let e = s.commit().unwrap_err();
        assert!(e.contains("cannot write") && e.contains("/b"), "{e}");
        assert_eq!(entries(&d), ["a", "b"], "no new file, no temporaries");
        assert_eq!(fs::read(d.join("a")).unwrap(), b"old a");
        assert_eq!(fs::read(d.join("b")).unwrap(), b"old b");
    }

    #[test]
    fn a_planted_link_is_not_written_through() {
        let d = dir("link");
        let victim = d.join("victim");
        fs::write(&victim, b"the user's file").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("out")).unwrap();
        // Where earlier versions put the temporary file: a predictable name.
        let predictable = format!(".out.{}.tmp", std::process::id());
        std::os::unix::fs::symlink(&victim, d.join(predictable)).unwrap();
        let mut s = Staged::new();
        s.write(&d.join("out"), b"output").unwrap();
        s.commit().unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"the user's file");
        assert_eq!(fs::read(d.join("out")).unwrap(), b"output");
        assert!(!fs::symlink_metadata(d.join("out")).unwrap().is_symlink());
    }

    #[test]
    fn a_directory_in_the_way_leaves_nothing() {
        let d = dir("isdir");
        fs::create_dir(d.join("b")).unwrap();
        let mut s = Staged::new();
        s.write(&d.join("a"), b"1").unwrap();
        s.write(&d.join("b"), b"2").unwrap();
        let e = s.commit().unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        assert_eq!(entries(&d), ["b"]);
    }
}
