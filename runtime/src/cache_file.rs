//! Files of the on-disk caches of compiled code (the `cpu` backend's programs in `ogham`'s
//! `cache/disk.rs`; the CUDA backend's CUBINs and the CUDA emulator's shared libraries): written
//! whole or not at all, verified before use, and named in every complaint about them.
//!
//! Writing: [`write_atomically`] writes a temporary file in the same directory and renames it to
//! its name, so a reader sees a whole file or none. Artefacts that a library loads by path (a
//! shared library, a CUBIN) are stored by [`store`] with a checksum file `NAME.sum` beside them:
//! the content hash ([`crate::content_hash`], 16 hex digits) of their bytes, written after the
//! artefact. [`load`] returns an artefact's bytes only when its checksum file exists and
//! matches; a damaged, truncated or unverifiable entry is reported once on standard error
//! (naming the file), removed, and `None` tells the caller to build it again. Two writers racing
//! on one entry may leave one's checksum beside the other's artefact: the next reader takes that
//! for damage and builds the entry again.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Writes `bytes` to a temporary file next to `path` and renames it to `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Prints `message` as a warning on standard error, once per file `path` and process.
pub fn report(path: &Path, message: &str) {
    static REPORTED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if reported.get_or_insert_default().insert(path.to_path_buf()) {
        eprintln!("warning: {message}");
    }
}

/// Reports the damaged cache entry `path` (why, and that it is built again) and removes it, with
/// its checksum file if it has one.
pub fn damaged(path: &Path, why: &str) {
    report(
        path,
        &format!(
            "the cache entry {} is damaged ({why}); compiling it again",
            path.display()
        ),
    );
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(sum_path(path));
}

/// The checksum file of artefact `path`.
fn sum_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sum");
    path.with_file_name(name)
}

/// Stores artefact `bytes` at `path` with its checksum file.
pub fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically(path, bytes)?;
    write_atomically(
        &sum_path(path),
        format!("{:016x}\n", crate::content_hash(bytes)).as_bytes(),
    )
}

/// The bytes of the artefact cached at `path` when it is there and matches its checksum;
/// `None` when there is none, or when it is damaged (then reported and removed).
pub fn load(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let sum = std::fs::read_to_string(sum_path(path)).unwrap_or_default();
    let why = match u64::from_str_radix(sum.trim(), 16) {
        Err(_) => "its checksum file is missing or unreadable",
        Ok(hash) if hash != crate::content_hash(&bytes) => "its contents do not match their hash",
        Ok(_) => return Some(bytes),
    };
    damaged(path, why);
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ogham-cache-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn stored_artefacts_load_and_damaged_ones_are_removed() {
        let dir = scratch("artefacts");
        let path = dir.join("k.so");
        assert_eq!(load(&path), None, "nothing cached yet");
        store(&path, b"machine code").unwrap();
        assert_eq!(load(&path).as_deref(), Some(&b"machine code"[..]));

        // One changed byte, a truncation, a missing checksum: refused and removed.
        for damage in [
            |p: &Path| std::fs::write(p, b"machine codf").unwrap(),
            |p: &Path| std::fs::write(p, b"machine").unwrap(),
            |p: &Path| std::fs::remove_file(sum_path(p)).unwrap(),
        ] {
            store(&path, b"machine code").unwrap();
            damage(&path);
            assert_eq!(load(&path), None);
            assert!(!path.exists() && !sum_path(&path).exists());
        }
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "no temporaries left: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
