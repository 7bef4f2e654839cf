//! The on-disk cache of programs compiled for the `cpu` backend: a later process runs a cached
//! program without the compiler's front and middle end and without Cranelift.
//!
//! Location: `$OGHAM_CACHE_DIR/cpu`, else `$XDG_CACHE_HOME/ogham/cpu`, else
//! `~/.cache/ogham/cpu`; `OGHAM_CACHE=0` turns it off ([`Disk::from_env`]). One file per
//! program, `<key>.ogc` (the key of `cache.rs`, 16 hex digits), laid out as a header of eight
//! little-endian `u64`s — magic `OGHAMCPU`, [`FORMAT`], the build id, the key, a hash
//! (FNV-1a) of everything after the header, and the lengths of the three parts — then the
//! library's JSON text (as in a `.ogl` file), the kernel table (JSON) and the kernels' machine
//! code as a relocatable ELF object (`ogham_runtime::cpu::native`).
//!
//! Invariants: an entry is written to a temporary file in the same directory and renamed into
//! place, so readers see a whole entry or none, and concurrent writers of one program each
//! install a whole entry (the last rename wins). An entry is used only if its header and hash
//! match and its program's sources are current; a damaged, truncated or foreign entry is
//! reported once on standard error (naming the file), removed, and compiled and written again.
//! The cache is an optimisation: when it cannot be written the program still runs (the failure
//! is reported once).

use ogham_compiler::source::SourceMap;
use ogham_runtime::library::{Library, Native};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bumped whenever the entry layout changes.
pub const FORMAT: u64 = 1;
const MAGIC: &[u8; 8] = b"OGHAMCPU";
const HEADER: usize = 64;

/// Where compiled programs are kept between processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disk {
    /// Not kept.
    Off,
    /// Entries in this directory (created when first written).
    Dir(PathBuf),
}

impl Disk {
    /// The cache the environment asks for (see the module's documentation).
    pub fn from_env() -> Disk {
        if std::env::var_os("OGHAM_CACHE").is_some_and(|v| v == "0") {
            return Disk::Off;
        }
        match ogham_runtime::cache_dir("cpu") {
            Some(dir) => Disk::Dir(dir),
            None => Disk::Off,
        }
    }

    fn path(&self, key: u64) -> Option<PathBuf> {
        match self {
            Disk::Off => None,
            Disk::Dir(dir) => Some(dir.join(format!("{key:016x}.ogc"))),
        }
    }

    /// The library cached under `key`, if there is an intact entry whose sources pass
    /// `current`.
    pub(super) fn load(&self, key: u64, current: impl Fn(&SourceMap) -> bool) -> Option<Library> {
        let path = self.path(key)?;
        let bytes = std::fs::read(&path).ok()?;
        match decode(&bytes, key).and_then(|(text, native)| Library::from_native(text, &native)) {
            Ok(library) => current(library.sources()).then_some(library),
            Err(why) => {
                report(
                    &path,
                    &format!(
                        "the cache entry {} is damaged ({why}); compiling the program again",
                        path.display()
                    ),
                );
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Compiles `library`'s kernels to native code, writes them under `key` and returns the
    /// library running that code (or `library` itself, whose kernels the JIT compiles, when
    /// the cache is off or the code cannot be made).
    pub(super) fn store(&self, key: u64, library: Library) -> Library {
        let Some(path) = self.path(key) else {
            return library;
        };
        let made = library.to_json().and_then(|text| {
            let native = library.compile_native()?;
            let loaded = Library::from_native(&text, &native)?;
            Ok((encode(key, &text, &native), loaded))
        });
        match made {
            Ok((bytes, loaded)) => {
                if let Err(e) = write_atomically(&path, &bytes) {
                    report(
                        &path,
                        &format!("cannot write the cache entry {}: {e}", path.display()),
                    );
                }
                loaded
            }
            Err(e) => {
                report(
                    &path,
                    &format!(
                        "cannot cache the compiled program ({e}); running it without the cache"
                    ),
                );
                library
            }
        }
    }
}

/// Prints `message` on standard error, once per entry and process.
fn report(path: &Path, message: &str) {
    static REPORTED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if reported.get_or_insert_default().insert(path.to_path_buf()) {
        eprintln!("warning: {message}");
    }
}

/// An entry's bytes.
fn encode(key: u64, text: &str, native: &Native) -> Vec<u8> {
    let mut body = Vec::with_capacity(text.len() + native.table.len() + native.object.len());
    body.extend(text.as_bytes());
    body.extend(native.table.as_bytes());
    body.extend(&native.object);
    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend(MAGIC);
    for field in [
        FORMAT,
        ogham_runtime::build_id(),
        key,
        ogham_runtime::fnv1a(&body),
        text.len() as u64,
        native.table.len() as u64,
        native.object.len() as u64,
    ] {
        bytes.extend(field.to_le_bytes());
    }
    bytes.extend(body);
    bytes
}

/// The library text and native code of entry `bytes` stored under `key`, or why it cannot be
/// used.
fn decode(bytes: &[u8], key: u64) -> Result<(&str, Native), String> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err("not a cache entry".to_string());
    }
    let field = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    if field(1) != FORMAT || field(2) != ogham_runtime::build_id() {
        return Err("written by another version of ogham".to_string());
    }
    if field(3) != key {
        return Err("the entry of another program".to_string());
    }
    let body = &bytes[HEADER..];
    if ogham_runtime::fnv1a(body) != field(4) {
        return Err("its contents do not match their hash".to_string());
    }
    let (text_len, table_len) = (field(5) as usize, field(6) as usize);
    if text_len
        .checked_add(table_len)
        .is_none_or(|n| n > body.len())
    {
        return Err("truncated".to_string());
    }
    let text = std::str::from_utf8(&body[..text_len]).map_err(|_| "not UTF-8 text".to_string())?;
    let table = std::str::from_utf8(&body[text_len..text_len + table_len])
        .map_err(|_| "not UTF-8 text".to_string())?;
    Ok((
        text,
        Native {
            object: body[text_len + table_len..].to_vec(),
            table: table.to_string(),
        },
    ))
}

/// Writes `bytes` to a temporary file next to `path` and renames it to `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frontend;
    use ogham_runtime::value::{Array, Value};

    const PROGRAM: &str = "\
entry main [n] (xs: [n]f32) : ([n]f32, f32) =
  let ys = map (\\x -> f32.exp x * 2 + f32.floor x) xs
  in (ys, reduce (+) 0 ys)
";

    fn library() -> Library {
        let fe = Frontend::load_source("disk-test.og", PROGRAM)
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let program = fe
            .compile(ogham_compiler::pipeline::Options::KERNEL)
            .expect("compiles");
        Library::new(fe.sources.clone(), program)
    }

    fn outputs(library: &Library) -> String {
        let xs = Array::from_f32(vec![5], vec![0.5, -1.25, 2.0, 3.5, f32::NAN]).expect("shape");
        format!(
            "{:?}",
            library.call("main", vec![Value::Array(xs)]).expect("runs")
        )
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ogham-disk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_stored_program_loads_and_runs_the_same() {
        let dir = temp_dir("hit");
        let disk = Disk::Dir(dir.clone());
        let expected = outputs(&library());
        assert!(disk.load(1, |_| true).is_none(), "an empty cache misses");
        let stored = disk.store(1, library());
        assert_eq!(outputs(&stored), expected);
        let loaded = disk.load(1, |_| true).expect("a hit");
        assert_eq!(outputs(&loaded), expected);
        assert!(disk.load(1, |_| false).is_none(), "changed sources miss");
        assert!(disk.load(2, |_| true).is_none(), "another key misses");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_entries_are_refused_and_removed() {
        let dir = temp_dir("damaged");
        let disk = Disk::Dir(dir.clone());
        disk.store(7, library());
        let path = disk.path(7).expect("a path");
        let good = std::fs::read(&path).expect("written");
        let mut flipped = good.clone();
        let last = flipped.len() - 100;
        flipped[last] ^= 0x40;
        let mut foreign = good.clone();
        foreign[24] ^= 1; // the key
        for bad in [
            flipped,
            good[..good.len() / 2].to_vec(),
            foreign,
            b"OGHAMCPU".to_vec(),
        ] {
            std::fs::write(&path, bad).expect("written");
            assert!(disk.load(7, |_| true).is_none());
            assert!(!path.exists(), "the damaged entry is removed");
        }
        // The program is compiled and stored again.
        let expected = outputs(&library());
        assert_eq!(outputs(&disk.store(7, library())), expected);
        assert_eq!(outputs(&disk.load(7, |_| true).expect("a hit")), expected);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_writers_leave_a_whole_entry() {
        let dir = temp_dir("writers");
        let disk = Disk::Dir(dir.clone());
        let expected = outputs(&library());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| assert_eq!(outputs(&disk.store(3, library())), expected));
            }
        });
        assert_eq!(outputs(&disk.load(3, |_| true).expect("a hit")), expected);
        let names: Vec<_> = std::fs::read_dir(&dir)
            .expect("the directory")
            .map(|e| e.expect("an entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary files are left: {names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
