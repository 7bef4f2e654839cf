//! Sets `OGHAM_BUILD_ID`: a hash of everything that decides what the compiler generates and how
//! the runtime runs it (the IR's, the compiler's and the runtime's sources, the embedded standard library,
//! the locked dependency versions, the package version). Compiled code is only reused by a
//! runtime of the same build id (`ogham_runtime::BUILD_ID`): on-disk caches and ahead-of-time
//! images record it.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for entry in entries {
            files(&entry, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut hasher = DefaultHasher::new();
    hasher.write(env!("CARGO_PKG_VERSION").as_bytes());
    for input in [
        "src",
        "build.rs",
        "../ir/src",
        "../compiler/src",
        "../compiler/build.rs",
        "../lib",
        "../Cargo.lock",
    ] {
        let path = root.join(input);
        println!("cargo:rerun-if-changed={}", path.display());
        let mut found = Vec::new();
        files(&path, &mut found);
        for file in found {
            let text = std::fs::read(&file).unwrap_or_default();
            hasher.write(
                file.strip_prefix(&root)
                    .unwrap_or(&file)
                    .as_os_str()
                    .as_encoded_bytes(),
            );
            hasher.write_usize(text.len());
            hasher.write(&text);
        }
    }
    println!("cargo:rustc-env=OGHAM_BUILD_ID={:016x}", hasher.finish());
}
