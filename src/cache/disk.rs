//! The on-disk cache of programs compiled for the `cpu` backend: a later process runs a cached
//! program without the compiler's front and middle end and without Cranelift.
//!
//! Location: `$OGHAM_CACHE_DIR/cpu`, else `$XDG_CACHE_HOME/ogham/cpu`, else
//! `~/.cache/ogham/cpu`; `OGHAM_CACHE=0` turns it off ([`Disk::from_env`]). A program is one
//! file `<key>.ogc` (the key of `cache.rs`, 16 hex digits) holding, as JSON, its sources, doc
//! comments, thresholds and entry points' signatures ([`Skeleton`]), then each entry point's
//! kernel IR (read only when that entry point first runs: [`Cached`]); and one file
//! `<key>-<entry>.ogk` per entry point that has run (`<entry>`: a hash of the program file's
//! contents and the entry's name)
//! holding its kernel table (JSON) and its kernels' machine code as a relocatable ELF object
//! (`ogham_runtime::cpu::native`), made at the entry point's first call. Writing a program
//! removes the code files of the program it replaces. Every file starts with a header of eight little-endian
//! `u64`s: magic (`OGHAMPRG` or `OGHAMKER`), [`FORMAT`], the build id, the key, the entry's
//! hash (0 for the program), a hash (`ogham_runtime::content_hash`) of everything after the header, and the lengths of
//! its two parts.
//!
//! Invariants: a file is written to a temporary file in the same directory and renamed into
//! place, so readers see a whole file or none, and concurrent writers of one program each
//! install a whole file (the last rename wins). A file is used only if its header and hash
//! match (and a program's sources are current); a damaged, truncated or foreign file is
//! reported once on standard error (naming it), removed, and compiled and written again.
//! The cache is an optimisation: when it cannot be written the program still runs (the failure
//! is reported once).

use ogham_compiler::diag::Diagnostic;
use ogham_compiler::ir::{Program, Signature};
use ogham_compiler::kir::Threshold;
use ogham_compiler::source::{SourceMap, Span};
use ogham_runtime::cache_file::{damaged, report, write_atomically};
use ogham_runtime::cpu::native::{self, Native};
use ogham_runtime::cpu::{Executable, NativeStore};
use ogham_runtime::ireval::Thresholds;
use ogham_runtime::library::Library;
use ogham_runtime::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Bumped whenever the layout of the files changes.
pub const FORMAT: u64 = 2;
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
    pub(super) fn load(&self, key: u64, current: impl Fn(&SourceMap) -> bool) -> Option<Cached> {
        let Disk::Dir(dir) = self else {
            return None;
        };
        let path = program_path(dir, key);
        let bytes = std::fs::read(&path).ok()?;
        let parts = decode(&bytes, PROGRAM, key, 0).and_then(|(skeleton, functions, hash)| {
            let skeleton: Skeleton = serde_json::from_slice(skeleton).map_err(|e| e.to_string())?;
            let text_len = functions.len() as u64;
            if skeleton
                .functions
                .iter()
                .any(|f| f.start.checked_add(f.len).is_none_or(|end| end > text_len))
            {
                return Err("a function outside the file".to_string());
            }
            Ok((skeleton, bytes.len() - functions.len(), hash))
        });
        let cached = parts.map(|(skeleton, functions_at, hash)| Cached {
            executables: skeleton.functions.iter().map(|_| OnceLock::new()).collect(),
            skeleton,
            functions_at,
            store: EntryStore {
                dir: dir.clone(),
                key,
                program: hash,
            },
            bytes,
        });
        match cached {
            Ok(cached) => current(&cached.skeleton.sources).then_some(cached),
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
        let (skeleton, functions) = match split(&library) {
            Ok(parts) => parts,
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
        let bytes = encode(PROGRAM, key, 0, skeleton.as_bytes(), &functions);
        write(&path, &bytes);
        let hash = decode(&bytes, PROGRAM, key, 0).map_or(0, |(_, _, hash)| hash);
        library.with_store(Box::new(EntryStore {
            dir: dir.clone(),
            key,
            program: hash,
        }))
    }
}

/// What a program file holds besides its functions' kernel IR: everything needed before an
/// entry point runs.
#[derive(Serialize, Deserialize)]
struct Skeleton {
    sources: SourceMap,
    docs: BTreeMap<String, String>,
    thresholds: Vec<Threshold>,
    unchecked: Vec<Span>,
    /// The functions (entry points) in order, and where their JSON text is in the file's
    /// second part.
    functions: Vec<FunctionAt>,
}

#[derive(Serialize, Deserialize)]
struct FunctionAt {
    name: String,
    signature: Signature,
    start: u64,
    len: u64,
}

/// The skeleton's JSON text and the functions' JSON texts, one after the other, of `library`.
fn split(library: &Library) -> Result<(String, Vec<u8>), String> {
    let program = library.program();
    let mut texts = Vec::new();
    let mut functions = Vec::new();
    for f in &program.functions {
        let text = serde_json::to_vec(f).map_err(|e| e.to_string())?;
        functions.push(FunctionAt {
            name: f.name.clone(),
            signature: f.signature.clone(),
            start: texts.len() as u64,
            len: text.len() as u64,
        });
        texts.extend(text);
    }
    let skeleton = Skeleton {
        sources: library.sources().clone(),
        docs: library.docs().clone(),
        thresholds: program.thresholds.clone(),
        unchecked: program.unchecked.clone(),
        functions,
    };
    let skeleton = serde_json::to_string(&skeleton).map_err(|e| e.to_string())?;
    Ok((skeleton, texts))
}

/// A program from the disk cache: an entry point's kernel IR is read, and its code loaded (or
/// compiled and stored), at its first call; the others' are never read.
pub struct Cached {
    skeleton: Skeleton,
    /// The program file; the functions' JSON texts start at `functions_at`.
    bytes: Vec<u8>,
    functions_at: usize,
    store: EntryStore,
    /// Per function: the executable of a program of that function alone.
    executables: Vec<OnceLock<Result<Executable, String>>>,
}

impl Cached {
    pub fn sources(&self) -> &SourceMap {
        &self.skeleton.sources
    }

    pub fn doc(&self, entry: &str) -> Option<&str> {
        self.skeleton.docs.get(entry).map(String::as_str)
    }

    /// The entry points and their signatures, in source order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Signature)> {
        self.skeleton
            .functions
            .iter()
            .map(|f| (f.name.as_str(), &f.signature))
    }

    pub fn thresholds(&self) -> &[Threshold] {
        &self.skeleton.thresholds
    }

    /// The kernel-IR program of entry point `entry` alone, once a call has loaded it.
    pub fn program(&self, entry: &str) -> Option<&Program> {
        let i = self
            .skeleton
            .functions
            .iter()
            .position(|f| f.name == entry)?;
        match self.executables[i].get()? {
            Ok(executable) => Some(executable.program()),
            Err(_) => None,
        }
    }

    /// Runs entry point `entry` (see `ogham_runtime::library::Library::call_tuned`).
    pub fn call(
        &self,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        let Some(i) = self.skeleton.functions.iter().position(|f| f.name == entry) else {
            return Err(ogham_runtime::ireval::no_entry(
                entry,
                self.entries().map(|(name, _)| name),
            ));
        };
        let executable = self.executables[i].get_or_init(|| {
            let at = &self.skeleton.functions[i];
            let start = self.functions_at + at.start as usize;
            let text = &self.bytes[start..start + at.len as usize];
            let function = serde_json::from_slice(text)
                .map_err(|e| format!("the cached program's entry point `{entry}`: {e}"))?;
            let program = Program {
                functions: vec![function],
                thresholds: self.skeleton.thresholds.clone(),
                unchecked: self.skeleton.unchecked.clone(),
            };
            Ok(Executable::with_store(
                program,
                Box::new(self.store.clone()),
            ))
        });
        match executable {
            Ok(executable) => executable.call(entry, args, thresholds),
            Err(message) => Err(Box::new(Diagnostic::error(
                ogham_runtime::error::R_INTERNAL,
                message.clone(),
            ))),
        }
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

    fn args() -> Vec<Value> {
        let xs = Array::from_f32(vec![5], vec![0.5, -1.25, 2.0, 3.5, f32::NAN]).expect("shape");
        vec![Value::Array(xs)]
    }

    fn outputs(library: &Library) -> String {
        format!("{:?}", library.call("main", args()).expect("runs"))
    }

    fn cached_outputs(cached: &Cached) -> String {
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
