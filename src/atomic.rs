//! Atomic file output: the files one command writes (`run -o DIR`'s outputs, `build`'s library
//! or object and header, `autotune`'s tuning file) appear complete and together, or not at all.
//!
//! Each file is first written in full to a temporary file in its own directory (`.NAME.PID.tmp`);
//! at the commit all of them are flushed to disk (at once, on one thread each: the file
//! system's journal commits then serve several files, instead of one commit after another), then
//! renamed to their names, which on one file system
//! replaces a file in one step: a reader (or a concurrent `ogham build`) sees the old file or the
//! new one, never a partial one. A failure while writing (a full disk, a file size limit, an
//! unwritable directory) leaves no file behind, not even the files staged before it; so does a
//! failure of a rename found by the checks before the first one (a destination that is a
//! directory). Destinations that exist and are not regular files (`/dev/stdout`, `/dev/full`,
//! a FIFO) are written directly: they cannot be replaced.
//!
//! Invariant: a [`Staged`] dropped without [`Staged::commit`] removes its temporary files.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// Files written to temporaries, waiting to be renamed to their names together.
#[derive(Default)]
pub struct Staged {
    /// (temporary, destination) pairs, in the order staged.
    files: Vec<(PathBuf, PathBuf)>,
}

/// The temporary file for `path`: hidden, in the same directory, unique to this process.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Whether `path` exists and is something other than a regular file (a device, a FIFO).
fn special(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

impl Staged {
    pub fn new() -> Staged {
        Staged::default()
    }

    /// Stages `bytes` as the contents of `path`.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), String> {
        self.write_with(path, |at| {
            fs::write(at, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
        })
    }

    /// Stages the file that `write` writes at the path it is given (its error is reported as
    /// it is: it should name the file).
    pub fn write_with(
        &mut self,
        path: &Path,
        write: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<(), String> {
        if special(path) {
            return write(path);
        }
        let tmp = temporary(path);
        // Registered first, so that a failed write's partial temporary is removed too.
        self.files.push((tmp.clone(), path.to_path_buf()));
        write(&tmp)
    }

    /// Flushes every staged file to disk and renames it to its name; on failure, removes the
    /// temporaries and the files already renamed by this call.
    pub fn commit(mut self) -> Result<(), String> {
        let files = std::mem::take(&mut self.files);
        if let Some((_, dest)) = files.iter().find(|(_, dest)| dest.is_dir()) {
            remove_all(files.iter().map(|(tmp, _)| tmp));
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
                remove_all(files.iter().map(|(tmp, _)| tmp));
                return Err(format!("cannot write {}: {e}", dest.display()));
            }
        }
        for (k, (tmp, dest)) in files.iter().enumerate() {
            if let Err(e) = fs::rename(tmp, dest) {
                remove_all(files[..k].iter().map(|(_, dest)| dest));
                remove_all(files[k..].iter().map(|(tmp, _)| tmp));
                return Err(format!("cannot write {}: {e}", dest.display()));
            }
        }
        Ok(())
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
        let e = s
            .write_with(&d.join("b"), |tmp| {
                fs::write(tmp, b"partial").unwrap();
                Err("disk full".to_string())
            })
            .unwrap_err();
        assert!(e.contains("disk full"), "{e}");
        drop(s);
        assert!(entries(&d).is_empty(), "{:?}", entries(&d));
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
