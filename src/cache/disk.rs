//! The on-disk cache of programs compiled for the `cpu` backend: a later process runs a cached
//! program without the compiler's front and middle end and without Cranelift.
//!
//! Location: `$OGHAM_CACHE_DIR/cpu`, else `$XDG_CACHE_HOME/ogham/cpu`, else
//! `~/.cache/ogham/cpu`; `OGHAM_CACHE=0` turns it off ([`Disk::from_env`]). A program is one
//! file `<key>.ogc` (the key of `cache.rs`, 16 hex digits) holding the library packed
//! (`ogham_runtime::cpu::packed`: sources, doc comments, thresholds and entry points' signatures, then
//! each entry point's kernel IR, read only when that entry point first runs); and one file
//! `<key>-<entry>.ogk` per entry point that has run (`<entry>`: a hash of the program file's
//! contents and the entry's name) holding its kernel table (JSON) and its kernels' machine code
//! as a relocatable ELF object (`ogham_runtime::cpu::native`), made at the entry point's first
//! call. Writing a program removes the code files of the program it replaces. Every file starts
//! with a header of eight little-endian `u64`s: magic (`OGHAMPRG` or `OGHAMKER`), [`FORMAT`],
//! the build id, the key, the entry's hash (0 for the program), a hash
//! (`ogham_runtime::content_hash`) of everything after the header, and the lengths of its two
//! parts (a program file's second part is empty).
//!
//! Invariants: a file is written to a temporary file in the same directory and renamed into
//! place, so readers see a whole file or none, and concurrent writers of one program each
//! install a whole file (the last rename wins). A file is used only if its header and hash
//! match (and a program's sources are current); a damaged, truncated or foreign file is
//! reported once on standard error (naming it), removed, and compiled and written again.
//! The cache is an optimisation: when it cannot be written the program still runs (the failure
//! is reported once).

use ogham_ir::source::SourceMap;
use ogham_runtime::cache_file::{damaged, report, write_atomically};
use ogham_runtime::cpu::native::{self, Native};
use ogham_runtime::cpu::packed::{self, Packed};
use ogham_runtime::cpu::{Executable, NativeStore};
use ogham_runtime::library::Library;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Bumped whenever the layout of the files changes (3: the program packed by
/// `ogham_runtime::cpu::packed`).
pub const FORMAT: u64 = 3;
const PROGRAM: &[u8; 8] = b"OGHAMPRG";
const KERNELS: &[u8; 8] = b"OGHAMKER";
const HEADER: usize = 64;

/// Where compiled programs are kept between processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disk {
    /// Not kept.
    Off,
    /// Files in this directory (created when first written).
    Dir(PathBuf),
}

impl Disk {
    /// The cache the environment asks for (see the module's documentation); off where this
    /// runtime cannot load native code.
    pub fn from_env() -> Disk {
        if !native::SUPPORTED || std::env::var_os("OGHAM_CACHE").is_some_and(|v| v == "0") {
            return Disk::Off;
        }
        match ogham_runtime::cache_dir("cpu") {
            Some(dir) => Disk::Dir(dir),
            None => Disk::Off,
        }
    }

    /// The program cached under `key`, if there is an intact file whose sources pass
    /// `current`.
    pub(super) fn load(&self, key: u64, current: impl Fn(&SourceMap) -> bool) -> Option<Packed> {
        let Disk::Dir(dir) = self else {
            return None;
        };
        let path = program_path(dir, key);
        let bytes = std::fs::read(&path).ok()?;
        let hash = decode(&bytes, PROGRAM, key, 0).map(|(_, _, hash)| hash);
        let packed = hash.and_then(|hash| {
            let store = EntryStore {
                dir: dir.clone(),
                key,
                program: hash,
            };
            Packed::open(
                Cow::Owned(bytes),
                HEADER,
                Box::new(move |program, _| {
                    Ok(Executable::with_store(program, Box::new(store.clone())))
                }),
            )
        });
        match packed {
            Ok(packed) => current(packed.sources()).then_some(packed),
            Err(why) => {
                damaged(&path, &why);
                None
            }
        }
    }

    /// Writes `library` under `key` and returns it with its entry points' code kept in the
    /// cache (or unchanged, its kernels JIT-compiled, when the cache is off).
    pub(super) fn store(&self, key: u64, library: Library) -> Library {
        let Disk::Dir(dir) = self else {
            return library;
        };
        let path = program_path(dir, key);
        let packed = library
            .program()
            .ok_or("not a whole program")
            .and_then(|program| {
                packed::pack(library.sources(), library.docs(), program, None)
                    .map_err(|_| "cannot encode it")
            });
        let packed = match packed {
            Ok(packed) => packed,
            Err(e) => {
                report(&path, &format!("cannot cache the program ({e})"));
                return library;
            }
        };
        // The code of the program this one replaces is of no further use.
        let stale = format!("{key:016x}-");
        for file in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if file.file_name().to_string_lossy().starts_with(&stale) {
                let _ = std::fs::remove_file(file.path());
            }
        }
        let bytes = encode(PROGRAM, key, 0, &packed, &[]);
        write(&path, &bytes);
        let hash = decode(&bytes, PROGRAM, key, 0).map_or(0, |(_, _, hash)| hash);
        library.with_store(Box::new(EntryStore {
            dir: dir.clone(),
            key,
            program: hash,
        }))
    }
}

fn program_path(dir: &Path, key: u64) -> PathBuf {
    dir.join(format!("{key:016x}.ogc"))
}

/// The entry points' code of the program cached under `key` in `dir`, whose program file's
/// contents hash to `program` (the hash in its header).
#[derive(Clone)]
struct EntryStore {
    dir: PathBuf,
    key: u64,
    program: u64,
}

impl EntryStore {
    fn path(&self, entry: &str) -> PathBuf {
        self.dir.join(format!(
            "{:016x}-{:016x}.ogk",
            self.key,
            self.entry_id(entry)
        ))
    }

    /// The id of entry point `entry`'s code in its file's name and header: a hash of the
    /// program's text and the entry's name (never 0, the program file's).
    fn entry_id(&self, entry: &str) -> u64 {
        let mut bytes = self.program.to_le_bytes().to_vec();
        bytes.extend(entry.as_bytes());
        ogham_runtime::fnv1a(&bytes).max(1)
    }
}

impl NativeStore for EntryStore {
    fn load(&self, entry: &str) -> Option<Native> {
        let path = self.path(entry);
        let bytes = std::fs::read(&path).ok()?;
        let code = decode(&bytes, KERNELS, self.key, self.entry_id(entry)).and_then(
            |(table, object, _)| {
                Ok(Native {
                    table: String::from_utf8(table.to_vec())
                        .map_err(|_| "not UTF-8 text".to_string())?,
                    object: object.to_vec(),
                })
            },
        );
        code.map_err(|why| damaged(&path, &why)).ok()
    }

    fn store(&self, entry: &str, code: &Native) {
        let bytes = encode(
            KERNELS,
            self.key,
            self.entry_id(entry),
            code.table.as_bytes(),
            &code.object,
        );
        write(&self.path(entry), &bytes);
    }

    fn reject(&self, entry: &str, why: &str) {
        damaged(&self.path(entry), why);
    }
}

/// A file's bytes: the header, then parts `a` and `b`.
fn encode(magic: &[u8; 8], key: u64, entry: u64, a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(a.len() + b.len());
    body.extend(a);
    body.extend(b);
    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend(magic);
    for field in [
        FORMAT,
        ogham_runtime::build_id(),
        key,
        entry,
        ogham_runtime::content_hash(&body),
        a.len() as u64,
        b.len() as u64,
    ] {
        bytes.extend(field.to_le_bytes());
    }
    bytes.extend(body);
    bytes
}

/// The two parts of file `bytes` of kind `magic` for `key` and `entry`, and the hash of its
/// contents, or why it cannot be used.
fn decode<'b>(
    bytes: &'b [u8],
    magic: &[u8; 8],
    key: u64,
    entry: u64,
) -> Result<(&'b [u8], &'b [u8], u64), String> {
    if bytes.len() < HEADER || &bytes[..8] != magic {
        return Err("not a cache file of this kind".to_string());
    }
    let field = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    if field(1) != FORMAT || field(2) != ogham_runtime::build_id() {
        return Err("written by another version of ogham".to_string());
    }
    if (field(3), field(4)) != (key, entry) {
        return Err("the file of another program".to_string());
    }
    let body = &bytes[HEADER..];
    if field(6).checked_add(field(7)) != Some(body.len() as u64) {
        return Err("truncated".to_string());
    }
    if ogham_runtime::content_hash(body) != field(5) {
        return Err("its contents do not match their hash".to_string());
    }
    let (a, b) = body.split_at(field(6) as usize);
    Ok((a, b, field(5)))
}

/// Writes `bytes` to a temporary file next to `path` and renames it to `path`; a failure is
/// reported (once).
fn write(path: &Path, bytes: &[u8]) {
    if let Err(e) = write_atomically(path, bytes) {
        report(
            path,
            &format!("cannot write the cache entry {}: {e}", path.display()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frontend;
    use ogham_runtime::ireval::Thresholds;
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
            .compile_kernel(ogham_compiler::pipeline::Options::KERNEL)
            .expect("compiles");
        Library::new(fe.sources.clone(), program)
    }

    fn args() -> Vec<Value> {
        let xs = Array::from_f32(vec![5], vec![0.5, -1.25, 2.0, 3.5, f32::NAN]).expect("shape");
        vec![Value::Array(xs)]
    }

    fn outputs(library: &Library) -> String {
        format!("{:?}", library.call("main", args()).expect("runs"))
    }

    fn cached_outputs(cached: &Packed) -> String {
        let out = cached.call("main", args(), &Thresholds::default());
        format!("{:?}", out.expect("runs"))
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ogham-disk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The files in `dir`, sorted.
    fn files(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.map(|e| e.expect("an entry").path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }

    #[test]
    fn a_stored_program_loads_and_runs_the_same() {
        let dir = temp_dir("hit");
        let disk = Disk::Dir(dir.clone());
        let expected = outputs(&library());
        assert!(disk.load(1, |_| true).is_none(), "an empty cache misses");
        let stored = disk.store(1, library());
        assert_eq!(files(&dir).len(), 1, "the program");
        assert_eq!(outputs(&stored), expected);
        let written = files(&dir);
        assert_eq!(written.len(), 2, "the program and its entry point's code");
        let modified = std::fs::metadata(&written[1])
            .and_then(|m| m.modified())
            .expect("a time");
        let loaded = disk.load(1, |_| true).expect("a hit");
        assert_eq!(cached_outputs(&loaded), expected);
        let other = loaded.call("other", args(), &Thresholds::default());
        assert_eq!(other.expect_err("no such entry").code, "E0610");
        assert_eq!(files(&dir), written);
        let again = std::fs::metadata(&written[1])
            .and_then(|m| m.modified())
            .expect("a time");
        assert_eq!(again, modified, "the code is loaded, not compiled again");
        assert!(disk.load(1, |_| false).is_none(), "changed sources miss");
        assert!(disk.load(2, |_| true).is_none(), "another key misses");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_files_are_refused_and_replaced() {
        let dir = temp_dir("damaged");
        let disk = Disk::Dir(dir.clone());
        let expected = outputs(&library());
        outputs(&disk.store(7, library()));
        let written = files(&dir);
        for path in &written {
            let good = std::fs::read(path).expect("written");
            let mut flipped = good.clone();
            let last = flipped.len() - 100;
            flipped[last] ^= 0x40;
            let mut foreign = good.clone();
            foreign[24] ^= 1; // the key
            for bad in [
                flipped,
                good[..good.len() / 2].to_vec(),
                foreign,
                good[..8].to_vec(),
            ] {
                std::fs::write(path, bad).expect("written");
                // A damaged program misses; a damaged entry point's code is compiled again.
                if let Some(cached) = disk.load(7, |_| true) {
                    assert_eq!(cached_outputs(&cached), expected);
                    assert_eq!(std::fs::read(path).expect("rewritten"), good);
                } else {
                    assert!(!path.exists(), "the damaged file is removed");
                    assert_eq!(outputs(&disk.store(7, library())), expected);
                }
                assert_eq!(files(&dir), written);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_writers_leave_whole_files() {
        let dir = temp_dir("writers");
        let disk = Disk::Dir(dir.clone());
        let expected = outputs(&library());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| assert_eq!(outputs(&disk.store(3, library())), expected));
            }
        });
        assert_eq!(
            cached_outputs(&disk.load(3, |_| true).expect("a hit")),
            expected
        );
        let files = files(&dir);
        assert_eq!(files.len(), 2, "no temporary files are left: {files:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
