//! Files of the on-disk caches of compiled code (the `cpu` backend's programs in `ogham`'s
//! `cache/disk.rs`; the CUDA backend's CUBINs and the CUDA emulator's shared libraries): kept in
//! a directory that only this user can write, authenticated with this user's secret key, written
//! whole or not at all, and named in every complaint about them.
//!
//! **Trust** ([`Store::open`]). A cache entry becomes machine code that this process runs, so an
//! entry is used only if this user made it:
//! - the cache's directories (the root [`crate::cache_root`] and its subdirectory) are created
//!   with mode 0700 and used only when they are owned by this user and not writable by group or
//!   others; each of their ancestors must be owned by this user or root and be either not
//!   writable by group or others, or sticky (`/tmp`). Otherwise the cache is refused, with the
//!   reason, once per process, and the program runs without it (the rule of ssh's `StrictModes`);
//! - every entry is authenticated by a MAC (keyed BLAKE3) under a secret key of 32 random bytes
//!   kept in the root as `key`, mode 0600, made once (written under a random name and linked into
//!   place, so concurrent first runs agree on one key). Anyone who cannot read the key cannot
//!   make an entry that passes, nor move one to another name (the MAC covers the name);
//! - entries are opened with `O_NOFOLLOW | O_NONBLOCK` and used only if they are regular files
//!   owned by this user and not writable by group or others: a symbolic link, a FIFO or a device
//!   in an entry's place is reported and removed, never followed or waited on.
//!
//! **Writing** ([`Store::write`]): the bytes go to a temporary file with a random name, created
//! exclusively (`O_EXCL`, mode 0600), then renamed to the entry's name: a reader sees a whole
//! file or none. A write that fails (a full disk, `EFBIG` under a file size limit, which the CLI
//! reports instead of dying of `SIGXFSZ`) removes its temporary file.
//!
//! **Artefacts that a library loads by path** (a shared library, a CUBIN) are stored by
//! [`Store::store_artefact`] with a file `NAME.sum` beside them holding the MAC of their name and
//! bytes (64 hex digits), written after the artefact. [`Store::load_artefact`] returns an
//! artefact's bytes only when its MAC file exists and matches. Two writers racing on one entry may
//! leave one's MAC beside the other's artefact: the next reader takes that for damage and builds
//! the entry again.
//!
//! **Damage**: a damaged, truncated, foreign or unverifiable entry is reported once on standard
//! error (naming the file), removed, and `None` tells the caller to build it again.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The length of the secret key and of a MAC, in bytes.
pub const KEY_LEN: usize = 32;
/// The key's file name in the cache's root.
const KEY_FILE: &str = "key";

/// A verified cache directory and the user's key: where entries are read and written.
#[derive(Clone)]
pub struct Store {
    dir: PathBuf,
    key: Arc<[u8; KEY_LEN]>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

impl PartialEq for Store {
    fn eq(&self, other: &Store) -> bool {
        self.dir == other.dir && self.key == other.key
    }
}

impl Eq for Store {}

impl Store {
    /// The cache subdirectory `sub` of the environment's cache root ([`crate::cache_root`]), or
    /// `None` when there is none or it cannot be trusted or made (then reported once).
    pub fn open(sub: &str) -> Option<Store> {
        let root = crate::cache_root()?;
        Store::at(&root, sub)
            .map_err(|why| report(&root, &format!("not using the cache: {why}")))
            .ok()
    }

    /// The cache subdirectory `sub` of `root` (created private where missing), after the checks
    /// of the module's documentation; the error says which check failed and how to fix it.
    pub fn at(root: &Path, sub: &str) -> Result<Store, String> {
        if !root.is_absolute() {
            return Err(format!(
                "the cache directory {} is not an absolute path",
                root.display()
            ));
        }
        let dir = root.join(sub);
        // The part that exists already is checked before anything is made inside it, and the
        // whole path again once made (it may have changed meanwhile).
        let existing = dir
            .ancestors()
            .find(|d| d.exists())
            .unwrap_or(Path::new("/"));
        check_directories(existing, root)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let real_root = check_directories(&dir, root)?;
        let key = key(&real_root)?;
        Ok(Store {
            dir,
            key: Arc::new(key),
        })
    }

    /// A store in a fresh private directory under the system's temporary directory, with a key
    /// of this process alone: for artefacts that must be files (a shared library to load) when
    /// there is no usable cache. Nothing in it is found by another process.
    pub fn private_temporary(prefix: &str) -> Result<Store, String> {
        let base = std::env::temp_dir();
        for _ in 0..8 {
            let dir = base.join(format!("{prefix}-{}", random_hex()?));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => {
                    let mut key = [0u8; KEY_LEN];
                    random(&mut key)?;
                    return Ok(Store {
                        dir,
                        key: Arc::new(key),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
            }
        }
        Err(format!(
            "cannot create a private directory in {}",
            base.display()
        ))
    }

    /// The directory of the entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of entry `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The MAC of the concatenation of `parts` under this user's key.
    pub fn mac(&self, parts: &[&[u8]]) -> [u8; KEY_LEN] {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        for part in parts {
            hasher.update(part);
        }
        *hasher.finalize().as_bytes()
    }

    /// The bytes of entry `name`: `None` when there is none; when it is not a private regular
    /// file of this user, it is reported, removed and `None`.
    pub fn read(&self, name: &str) -> Option<Vec<u8>> {
        let path = self.path(name);
        match read_private(&path) {
            Ok((bytes, _)) => Some(bytes),
            Err(Unusable::Missing) => None,
            Err(Unusable::Untrusted(why)) => {
                self.damaged(name, &why);
                None
            }
            Err(Unusable::Unreadable(why)) => {
                report(
                    &path,
                    &format!("cannot read the cache entry {}: {why}", path.display()),
                );
                None
            }
        }
    }

    /// Writes entry `name` atomically (see the module's documentation).
    pub fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let (temp, mut file) = self.create_temporary(name, "tmp")?;
        let written = file
            .write_all(bytes)
            .and_then(|()| std::fs::rename(&temp, self.path(name)));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    /// A new file of this store with a random name `.{stem}.{random}.{extension}`, created
    /// exclusively with mode 0600 (for a tool's intermediate files, such as `g++`'s input).
    pub fn create_temporary(
        &self,
        stem: &str,
        extension: &str,
    ) -> std::io::Result<(PathBuf, File)> {
        create_exclusive(&self.dir, stem, extension, 0o600)
    }

    /// Reports the damaged entry `name` (why, and that it is built again) and removes it, with
    /// its MAC file if it has one.
    pub fn damaged(&self, name: &str, why: &str) {
        let path = self.path(name);
        report(
            &path,
            &format!(
                "the cache entry {} is damaged ({why}); compiling it again",
                path.display()
            ),
        );
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(self.path(&sum_name(name)));
    }

    /// Removes entry `name` (nothing when there is none).
    pub fn remove(&self, name: &str) {
        let _ = std::fs::remove_file(self.path(name));
    }

    /// The names of the entries whose names start with `prefix`.
    pub fn names_starting_with(&self, prefix: &str) -> Vec<String> {
        std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| name.starts_with(prefix))
            .collect()
    }

    /// Stores artefact `bytes` as entry `name`, with its MAC file.
    pub fn store_artefact(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.write(name, bytes)?;
        let mac = self.mac(&[name.as_bytes(), b"\0", bytes]);
        self.write(&sum_name(name), format!("{}\n", hex(&mac)).as_bytes())
    }

    /// The bytes of artefact `name` when it is there and matches its MAC; `None` when there is
    /// none, or when it is damaged (then reported and removed).
    pub fn load_artefact(&self, name: &str) -> Option<Vec<u8>> {
        let bytes = self.read(name)?;
        let sum = self.read(&sum_name(name)).unwrap_or_default();
        let expected = hex(&self.mac(&[name.as_bytes(), b"\0", &bytes]));
        let why = match std::str::from_utf8(&sum).map(str::trim) {
            Ok(sum) if sum.len() == 2 * KEY_LEN => {
                if mac_eq(sum.as_bytes(), expected.as_bytes()) {
                    return Some(bytes);
                }
                "its contents do not match their MAC"
            }
            _ => "its MAC file is missing or unreadable",
        };
        self.damaged(name, why);
        None
    }
}

/// Why a file cannot be used.
enum Unusable {
    /// There is none.
    Missing,
    /// It is not a private regular file of this user (a link, a FIFO, another owner, a mode).
    Untrusted(String),
    /// It could not be read (permissions, I/O).
    Unreadable(String),
}

/// The bytes of `path` if it is a regular file of this user that group and others cannot write;
/// never follows a symbolic link at `path` nor blocks on a FIFO.
fn read_private(path: &Path) -> Result<(Vec<u8>, std::fs::Metadata), Unusable> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => Unusable::Missing,
            Some(libc::ELOOP) => Unusable::Untrusted("a symbolic link".to_string()),
            _ => Unusable::Unreadable(e.to_string()),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Unusable::Unreadable(e.to_string()))?;
    if !meta.file_type().is_file() {
        return Err(Unusable::Untrusted("not a regular file".to_string()));
    }
    private(&meta).map_err(Unusable::Untrusted)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| Unusable::Unreadable(e.to_string()))?;
    Ok((bytes, meta))
}

/// This process's effective user id.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether a file or directory with `meta` is this user's and not writable by group or others.
fn private(meta: &std::fs::Metadata) -> Result<(), String> {
    if meta.uid() != euid() {
        return Err(format!(
            "owned by user id {}, not by you ({})",
            meta.uid(),
            euid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "writable by group or others (mode {:o})",
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Checks that directory `path` and every directory above it can be trusted
/// ([`trusted_directory`]; those at or below the cache's `root` are its own) and returns `root`'s
/// real path.
fn check_directories(path: &Path, root: &Path) -> Result<PathBuf, String> {
    let real = |p: &Path| {
        p.canonicalize()
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let real_path = real(path)?;
    let real_root = if root.exists() {
        real(root)?
    } else {
        root.to_path_buf()
    };
    if root.exists() && path.starts_with(root) && !real_path.starts_with(&real_root) {
        return Err(format!(
            "{} leads out of the cache directory {}",
            path.display(),
            root.display()
        ));
    }
    for ancestor in real_path.ancestors() {
        let meta =
            std::fs::metadata(ancestor).map_err(|e| format!("{}: {e}", ancestor.display()))?;
        trusted_directory(ancestor, &meta, ancestor.starts_with(&real_root))?;
    }
    Ok(real_root)
}

/// Whether directory `path` (with `meta`) can be trusted: the cache's `own` directories must be
/// private to this user; an ancestor must be this user's or root's and not writable by group or
/// others unless sticky.
fn trusted_directory(path: &Path, meta: &std::fs::Metadata, own: bool) -> Result<(), String> {
    let advice = |why: String| {
        format!(
            "{} is {why}; make it yours and private (`chmod 700 {}`), or choose another with \
             OGHAM_CACHE_DIR",
            path.display(),
            path.display()
        )
    };
    if own {
        return private(meta).map_err(advice);
    }
    if meta.uid() != euid() && meta.uid() != 0 {
        return Err(advice(format!("owned by user id {}", meta.uid())));
    }
    let sticky = meta.mode() & 0o1000 != 0;
    if meta.mode() & 0o022 != 0 && !sticky {
        return Err(advice(format!(
            "writable by group or others (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// The user's secret key in cache root `root` (a verified directory), made if missing.
fn key(root: &Path) -> Result<[u8; KEY_LEN], String> {
    let path = root.join(KEY_FILE);
    let invalid = |why: &str| {
        format!(
            "the cache key {} {why}: remove it (`rm {}`) and a new one is made",
            path.display(),
            path.display()
        )
    };
    loop {
        match read_private(&path) {
            Ok((bytes, meta)) => {
                if meta.mode() & 0o077 != 0 {
                    return Err(invalid("is readable by group or others"));
                }
                return bytes
                    .try_into()
                    .map_err(|_| invalid(&format!("is not {KEY_LEN} bytes long")));
            }
            Err(Unusable::Missing) => {}
            Err(Unusable::Untrusted(why)) => return Err(invalid(&format!("is {why}"))),
            Err(Unusable::Unreadable(why)) => {
                return Err(invalid(&format!("cannot be read: {why}")));
            }
        }
        // Made under a random name, then linked to its name: a concurrent process that links
        // first wins, and both read its key.
        let mut key = [0u8; KEY_LEN];
        random(&mut key)?;
        let maker = Store {
            dir: root.to_path_buf(),
            key: Arc::new(key),
        };
        let (temp, mut file) = maker
            .create_temporary(KEY_FILE, "new")
            .map_err(|e| format!("cannot write a cache key in {}: {e}", root.display()))?;
        let written = file.write_all(&key).and_then(|()| file.sync_all());
        let linked = written.and_then(|()| std::fs::hard_link(&temp, &path));
        let _ = std::fs::remove_file(&temp);
        match linked {
            Ok(()) => return Ok(key),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "cannot write the cache key {}: {e}",
                    path.display()
                ));
            }
        }
    }
}

/// A new file `.{stem}.{random}.{extension}` in `dir` (16 random hex digits), created
/// exclusively (`O_EXCL`: never through a symbolic link or over another file) with permissions
/// `mode` (less the umask), open for writing.
pub fn create_exclusive(
    dir: &Path,
    stem: &str,
    extension: &str,
    mode: u32,
) -> std::io::Result<(PathBuf, File)> {
    loop {
        let random = random_hex().map_err(std::io::Error::other)?;
        let temp = dir.join(format!(".{stem}.{random}.{extension}"));
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp);
        match created {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Fills `bytes` with random bytes from the operating system.
fn random(bytes: &mut [u8]) -> Result<(), String> {
    getrandom::fill(bytes).map_err(|e| format!("no random numbers from the system: {e}"))
}

/// 16 random hex digits (names of temporary files).
pub fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 8];
    random(&mut bytes)?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether MACs `a` and `b` are equal, in a time that does not depend on where they differ.
pub fn mac_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Prints `message` as a warning on standard error, once per file `path` and process.
pub fn report(path: &Path, message: &str) {
    static REPORTED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if reported.get_or_insert_default().insert(path.to_path_buf()) {
        eprintln!("warning: {message}");
    }
}

/// The name of the MAC file of artefact `name`.
fn sum_name(name: &str) -> String {
    format!("{name}.sum")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ogham-cache-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn directories_and_key_are_private() {
        let root = scratch("private");
        let store = Store::at(&root, "cpu").unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(store.dir()), 0o700);
        assert_eq!(mode(&root.join(KEY_FILE)), 0o600);
        assert_eq!(std::fs::read(root.join(KEY_FILE)).unwrap().len(), KEY_LEN);
        // The same key for every subdirectory and every later open.
        let again = Store::at(&root, "cuda").unwrap();
        assert_eq!(store.key, again.key);
        assert_eq!(store, Store::at(&root, "cpu").unwrap());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn untrusted_directories_and_keys_are_refused() {
        let root = scratch("untrusted");
        Store::at(&root, "cpu").unwrap();
        for (path, bad, expected) in [
            (root.clone(), 0o777, "writable by group or others"),
            (root.join("cpu"), 0o720, "writable by group or others"),
            (root.join(KEY_FILE), 0o644, "readable by group or others"),
            (root.join(KEY_FILE), 0o622, "writable by group or others"),
        ] {
            let good = mode(&path);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bad)).unwrap();
            let e = Store::at(&root, "cpu").unwrap_err();
            assert!(e.contains(expected), "{e}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(good)).unwrap();
        }
        // A key of the wrong length, a key that is a symbolic link.
        let key = root.join(KEY_FILE);
        std::fs::remove_file(&key).unwrap();
        std::fs::write(&key, b"short").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Store::at(&root, "cpu").unwrap_err().contains("bytes long"));
        std::fs::remove_file(&key).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &key).unwrap();
        assert!(
            Store::at(&root, "cpu")
                .unwrap_err()
                .contains("symbolic link")
        );
        std::fs::remove_file(&key).unwrap();
        assert!(Store::at(Path::new("relative/cache"), "cpu").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_world_writable_ancestor_needs_the_sticky_bit() {
        let base = scratch("ancestor");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = Store::at(&base.join("cache"), "cpu").unwrap_err();
        assert!(e.contains("writable by group or others"), "{e}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Store::at(&base.join("cache"), "cpu").expect("a sticky ancestor is fine");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn stored_artefacts_load_and_damaged_ones_are_removed() {
        let root = scratch("artefacts");
        let store = Store::at(&root, "emu").unwrap();
        let sum = store.path("k.so.sum");
        assert_eq!(store.load_artefact("k.so"), None, "nothing cached yet");
        store.store_artefact("k.so", b"machine code").unwrap();
        assert_eq!(
            store.load_artefact("k.so").as_deref(),
            Some(&b"machine code"[..])
        );

        // One changed byte, a truncation, a missing MAC, a MAC recomputed without the key, an
        // artefact under another name: refused and removed.
        let unkeyed = format!("{:064x}\n", crate::content_hash(b"machine codf"));
        for damage in [
            Box::new(|s: &Store| std::fs::write(s.path("k.so"), b"machine codf").unwrap())
                as Box<dyn Fn(&Store)>,
            Box::new(|s: &Store| std::fs::write(s.path("k.so"), b"machine").unwrap()),
            Box::new(|s: &Store| std::fs::remove_file(s.path("k.so.sum")).unwrap()),
            Box::new(move |s: &Store| {
                std::fs::write(s.path("k.so"), b"machine codf").unwrap();
                std::fs::write(s.path("k.so.sum"), &unkeyed).unwrap();
            }),
            Box::new(|s: &Store| {
                s.store_artefact("other.so", b"other code").unwrap();
                std::fs::rename(s.path("other.so"), s.path("k.so")).unwrap();
                std::fs::rename(s.path("other.so.sum"), s.path("k.so.sum")).unwrap();
            }),
        ] {
            store.store_artefact("k.so", b"machine code").unwrap();
            damage(&store);
            assert_eq!(store.load_artefact("k.so"), None);
            assert!(!store.path("k.so").exists() && !sum.exists());
        }
        let left: Vec<_> = std::fs::read_dir(store.dir()).unwrap().collect();
        assert!(left.is_empty(), "no temporaries left: {left:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn links_fifos_and_foreign_modes_are_not_followed() {
        let root = scratch("special");
        let store = Store::at(&root, "cpu").unwrap();
        let victim = root.join("victim");
        std::fs::write(&victim, b"the user's file").unwrap();
        // A symbolic link in an entry's place is neither read nor written through.
        std::os::unix::fs::symlink(&victim, store.path("e")).unwrap();
        assert_eq!(store.read("e"), None);
        assert!(
            std::fs::symlink_metadata(store.path("e")).is_err(),
            "removed"
        );
        std::os::unix::fs::symlink(&victim, store.path("e")).unwrap();
        store.write("e", b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"the user's file");
        assert_eq!(store.read("e").as_deref(), Some(&b"new"[..]));
        // A FIFO does not block.
        let fifo =
            std::ffi::CString::new(store.path("f").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(store.read("f"), None);
        assert!(!store.path("f").exists(), "removed");
        // A file writable by others.
        store.write("g", b"code").unwrap();
        std::fs::set_permissions(store.path("g"), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(store.read("g"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn concurrent_first_opens_agree_on_one_key() {
        let root = scratch("race");
        let stores: Vec<Store> = std::thread::scope(|s| {
            let opens: Vec<_> = (0..8)
                .map(|_| s.spawn(|| Store::at(&root, "cpu").unwrap()))
                .collect();
            opens.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(stores.iter().all(|s| s == &stores[0]));
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names.len(),
            2,
            "the key and cpu/, no temporaries: {names:?}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
