//! The on-disk cache of programs compiled for the `cpu` backend: a later process runs a cached
//! program without the compiler's front and middle end and without Cranelift.
//!
//! Location: the `cpu` subdirectory of the cache (`$OGHAM_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/ogham`, else `~/.cache/ogham`), used only when it passes the checks of
//! `ogham_runtime::cache_file` (a directory only this user can write, entries authenticated with
//! this user's key); `OGHAM_CACHE=0` turns it off ([`Disk::from_env`]). A program is one
//! file `<key>.ogc` (the key of `cache.rs`, 16 hex digits) holding the library packed
//! (`ogham_runtime::cpu::packed`: sources, doc comments, thresholds and entry points' signatures, then
//! each entry point's kernel IR, read and verified only when that entry point first runs); and one file
//! `<key>-<entry>.ogk` per entry point that has run (`<entry>`: a hash of the program file's
//! MAC and the entry's name) holding its kernel table (JSON) and its kernels' machine code
//! as a relocatable ELF object (`ogham_runtime::cpu::native`), made at the entry point's first
//! call. Writing a program removes the code files of the program it replaces. Every file starts
//! with a header of seven little-endian `u64`s: magic (`OGHAMPRG` or `OGHAMKER`), [`FORMAT`],
//! the build id, the key, the entry's id (0 for the program) and the lengths of its two parts
//! (a program file's second part is empty); then the MAC (32 bytes, the user's key) of the
//! header's seven words and everything after the MAC.
//!
//! Invariants: a file is written to a fresh temporary file in the same directory and renamed
//! into place, so readers see a whole file or none, and concurrent writers of one program each
//! install a whole file (the last rename wins). A file is used only if its header and MAC
//! match (and a program's sources are current); a damaged, truncated, foreign or forged file is
//! reported once on standard error (naming it), removed, and compiled and written again.
//! The cache is an optimisation: when it cannot be written the program still runs (the failure
//! is reported once).

use crate::codegen::cpu::CPU;
use ogham_ir::source::SourceMap;
use ogham_runtime::cache_file::{Store, mac_eq, report};
use ogham_runtime::cpu::native::{self, Native};
use ogham_runtime::cpu::packed::{self, Packed};
use ogham_runtime::cpu::{Executable, NativeStore};
use ogham_runtime::library::Library;
use std::borrow::Cow;

/// Bumped whenever the layout of the files changes (3: the program packed by
/// `ogham_runtime::cpu::packed`; 4: a MAC instead of an unkeyed hash).
pub const FORMAT: u64 = 4;
const PROGRAM: &[u8; 8] = b"OGHAMPRG";
const KERNELS: &[u8; 8] = b"OGHAMKER";
/// The header's words (magic and six numbers), then the MAC.
const WORDS: usize = 56;
const MAC: usize = ogham_runtime::cache_file::KEY_LEN;
const HEADER: usize = WORDS + MAC;

/// Where compiled programs are kept between processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disk {
    /// Not kept.
    Off,
    /// Files in this verified cache directory.
    Dir(Store),
}

impl Disk {
    /// The cache the environment asks for (see the module's documentation); off where this
    /// runtime cannot load native code, or where the directory cannot be trusted (reported).
    pub fn from_env() -> Disk {
        if !native::SUPPORTED || std::env::var_os("OGHAM_CACHE").is_some_and(|v| v == "0") {
            return Disk::Off;
        }
        match Store::open("cpu") {
            Some(store) => Disk::Dir(store),
            None => Disk::Off,
        }
    }

    /// The program cached under `key`, if there is an intact file whose sources pass
    /// `current`.
    pub(super) fn load(&self, key: u64, current: impl Fn(&SourceMap) -> bool) -> Option<Packed> {
        let Disk::Dir(store) = self else {
            return None;
        };
        let name = program_name(key);
        let bytes = store.read(&name)?;
        let id = decode(store, &bytes, PROGRAM, key, 0).map(|(_, _, id)| id);
        let packed = id.and_then(|id| {
            let entries = EntryStore {
                store: store.clone(),
                key,
                program: id,
            };
            Packed::open(
                Cow::Owned(bytes),
                HEADER,
                Some(CPU),
                Box::new(move |program, _| {
                    Ok(Executable::with_store(
                        program,
                        Box::new(entries.clone()),
                        CPU,
                    ))
                }),
            )
        });
        match packed {
            Ok(packed) => current(packed.sources()).then_some(packed),
            Err(why) => {
                store.damaged(&name, &why);
                None
            }
        }
    }

    /// Writes `library` under `key` and returns it with its entry points' code kept in the
    /// cache (or unchanged, its kernels JIT-compiled, when the cache is off).
    pub(super) fn store(&self, key: u64, library: Library) -> Library {
        let Disk::Dir(store) = self else {
            return library;
        };
        let name = program_name(key);
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
                report(
                    &store.path(&name),
                    &format!("cannot cache the program ({e})"),
                );
                return library;
            }
        };
        // The code of the program this one replaces is of no further use.
        for stale in store.names_starting_with(&format!("{key:016x}-")) {
            store.remove(&stale);
        }
        let bytes = encode(store, PROGRAM, key, 0, &packed, &[]);
        write(store, &name, &bytes);
        library.with_store(Box::new(EntryStore {
            store: store.clone(),
            key,
            program: id_of(&bytes[WORDS..HEADER]),
        }))
    }
}

fn program_name(key: u64) -> String {
    format!("{key:016x}.ogc")
}

/// A file's id: the first eight bytes of its MAC (which covers its header and contents).
fn id_of(mac: &[u8]) -> u64 {
    u64::from_le_bytes(mac[..8].try_into().expect("a MAC has 32 bytes"))
}

/// The entry points' code of the program cached under `key` in `store`, whose program file's
/// id ([`id_of`]) is `program`.
#[derive(Clone)]
struct EntryStore {
    store: Store,
    key: u64,
    program: u64,
}

impl EntryStore {
    fn name(&self, entry: &str) -> String {
        format!("{:016x}-{:016x}.ogk", self.key, self.entry_id(entry))
    }

    /// The id of entry point `entry`'s code in its file's name and header: a hash of the
    /// program's id and the entry's name (never 0, the program file's).
    fn entry_id(&self, entry: &str) -> u64 {
        let mut bytes = self.program.to_le_bytes().to_vec();
        bytes.extend(entry.as_bytes());
        ogham_runtime::fnv1a(&bytes).max(1)
    }
}

impl NativeStore for EntryStore {
    fn load(&self, entry: &str) -> Option<Native> {
        let name = self.name(entry);
        let bytes = self.store.read(&name)?;
        let code = decode(&self.store, &bytes, KERNELS, self.key, self.entry_id(entry)).and_then(
            |(table, object, _)| {
                Ok(Native {
                    table: String::from_utf8(table.to_vec())
                        .map_err(|_| "not UTF-8 text".to_string())?,
                    object: object.to_vec(),
                })
            },
        );
        code.map_err(|why| self.store.damaged(&name, &why)).ok()
    }

    fn store(&self, entry: &str, code: &Native) {
        let bytes = encode(
            &self.store,
            KERNELS,
            self.key,
            self.entry_id(entry),
            code.table.as_bytes(),
            &code.object,
        );
        write(&self.store, &self.name(entry), &bytes);
    }

    fn reject(&self, entry: &str, why: &str) {
        self.store.damaged(&self.name(entry), why);
    }
}

/// A file's bytes: the header (with the MAC under `store`'s key), then parts `a` and `b`.
fn encode(store: &Store, magic: &[u8; 8], key: u64, entry: u64, a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER + a.len() + b.len());
    bytes.extend(magic);
    for field in [
        FORMAT,
        ogham_runtime::build_id(),
        key,
        entry,
        a.len() as u64,
        b.len() as u64,
    ] {
        bytes.extend(field.to_le_bytes());
    }
    let mac = store.mac(&[&bytes, a, b]);
    bytes.extend(mac);
    bytes.extend(a);
    bytes.extend(b);
    bytes
}

/// The two parts of file `bytes` of kind `magic` for `key` and `entry`, and the file's id
/// ([`id_of`]), or why it cannot be used.
fn decode<'b>(
    store: &Store,
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
    if field(5).checked_add(field(6)) != Some(body.len() as u64) {
        return Err("truncated".to_string());
    }
    let mac = &bytes[WORDS..HEADER];
    if !mac_eq(mac, &store.mac(&[&bytes[..WORDS], body])) {
        return Err("its MAC does not match: damaged, or not made by you".to_string());
    }
    let (a, b) = body.split_at(field(5) as usize);
    Ok((a, b, id_of(mac)))
}

/// Writes entry `name` atomically; a failure is reported (once).
fn write(store: &Store, name: &str, bytes: &[u8]) {
    if let Err(e) = store.write(name, bytes) {
        let path = store.path(name);
        report(
            &path,
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
    use std::path::{Path, PathBuf};

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
        Library::new(fe.sources.clone(), program, CPU)
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

    /// A fresh cache root for test `name`, its `cpu` directory and the disk cache there.
    fn cache(name: &str) -> (PathBuf, PathBuf, Disk) {
        let root = std::env::temp_dir().join(format!("ogham-disk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = Store::at(&root, "cpu").expect("a private cache");
        (root, store.dir().to_path_buf(), Disk::Dir(store))
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
        let (root, dir, disk) = cache("hit");
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
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn damaged_files_are_refused_and_replaced() {
        let (root, dir, disk) = cache("damaged");
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
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn concurrent_writers_leave_whole_files() {
        let (root, dir, disk) = cache("writers");
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
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn entries_made_under_another_key_are_refused() {
        // Another user's cache (another key) holds files of the same program: copied into this
        // user's cache, which is what an attacker who could write there would plant, they are
        // refused as forged and replaced by this user's own.
        let (other_root, other_dir, other) = cache("forger");
        let (root, dir, disk) = cache("victim");
        let expected = outputs(&library());
        outputs(&other.store(5, library()));
        let planted = files(&other_dir);
        assert_eq!(planted.len(), 2);
        for file in &planted {
            std::fs::copy(file, dir.join(file.file_name().expect("a name"))).expect("copied");
        }
        assert!(
            disk.load(5, |_| true).is_none(),
            "a forged program is refused"
        );
        assert!(
            files(&dir)
                .iter()
                .all(|f| f.extension() != Some("ogc".as_ref()))
        );
        outputs(&disk.store(5, library()));
        // The forged code file of the program was removed when the program was written; plant
        // it again under the name this user's program looks for.
        let mine = files(&dir);
        let code = mine.iter().find(|f| f.extension() == Some("ogk".as_ref()));
        let code = code.expect("this user's code file").clone();
        let forged = planted
            .iter()
            .find(|f| f.extension() == Some("ogk".as_ref()));
        std::fs::copy(forged.expect("a code file"), &code).expect("copied");
        let loaded = disk.load(5, |_| true).expect("this user's program");
        assert_eq!(cached_outputs(&loaded), expected, "compiled again");
        assert_ne!(
            std::fs::read(&code).expect("rewritten"),
            std::fs::read(forged.expect("a code file")).expect("read"),
            "the forged code was replaced"
        );
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&other_root);
    }

    /// Rewrites the code file in `dir` with `patch` applied to its object, under a valid MAC
    /// (what only a holder of the key could make): the loader's own checks must still refuse
    /// it, and the program is compiled again.
    fn plant_patched_object(root: &Path, dir: &Path, patch: impl Fn(&mut Vec<u8>)) {
        let store = Store::at(root, "cpu").expect("the cache");
        let file = files(dir)
            .into_iter()
            .find(|f| f.extension() == Some("ogk".as_ref()))
            .expect("a code file");
        let bytes = std::fs::read(&file).expect("read");
        let field = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
        let (table, object) = bytes[HEADER..].split_at(field(5) as usize);
        let mut object = object.to_vec();
        patch(&mut object);
        let forged = encode(&store, KERNELS, field(3), field(4), table, &object);
        std::fs::write(&file, forged).expect("written");
    }

    /// A change to an object's bytes.
    type Patch = Box<dyn Fn(&mut Vec<u8>)>;

    /// The byte range of the `n`-th relocation of `.rela.text` in `object`.
    fn relocation(object: &[u8], n: usize) -> std::ops::Range<usize> {
        use object::{Object, ObjectSection};
        let file = object::File::parse(object).expect("an object");
        let rela = file
            .sections()
            .find(|s| s.name().is_ok_and(|n| n.starts_with(".rela.text")))
            .expect("relocations");
        let (start, _) = rela.file_range().expect("in the file");
        let start = start as usize + 24 * n;
        start..start + 24
    }

    #[test]
    fn authentic_looking_objects_with_bad_relocations_or_imports_are_refused() {
        let (root, dir, disk) = cache("loader");
        let expected = outputs(&library());
        outputs(&disk.store(9, library()));
        let patches: [(&str, Patch); 3] = [
            (
                "a relocation far outside its section",
                Box::new(|o: &mut Vec<u8>| {
                    let r = relocation(o, 0);
                    o[r.start..r.start + 8].copy_from_slice(&0x7fff_0000_0000u64.to_le_bytes());
                }),
            ),
            (
                "a relocation at the last bytes of its section",
                Box::new(|o: &mut Vec<u8>| {
                    let r = relocation(o, 0);
                    o[r.start..r.start + 8].copy_from_slice(&u64::MAX.to_le_bytes());
                }),
            ),
            (
                "an import of `system`",
                Box::new(|o: &mut Vec<u8>| {
                    let name = b"ogham_exp_f32\0";
                    let at = o
                        .windows(name.len())
                        .position(|w| w == name)
                        .expect("the helper's name");
                    o[at..at + name.len()].copy_from_slice(b"system\0\0\0\0\0\0\0\0");
                }),
            ),
        ];
        let code = files(&dir)
            .into_iter()
            .find(|f| f.extension() == Some("ogk".as_ref()))
            .expect("a code file");
        let good = std::fs::read(&code).expect("read");
        for (what, patch) in patches {
            plant_patched_object(&root, &dir, patch);
            assert_ne!(std::fs::read(&code).expect("read"), good, "{what}: planted");
            let loaded = disk.load(9, |_| true).expect("the program");
            assert_eq!(cached_outputs(&loaded), expected, "{what}");
            assert_eq!(
                std::fs::read(&code).expect("compiled again"),
                good,
                "{what}: the planted code was refused and replaced"
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
