//! Where "go to definition" sends a client for a definition of the built-in standard library,
//! whose modules are embedded in the binary rather than read from disk.
//!
//! The file on disk is preferred when there is one with the embedded text: `lib/NAME.og` in
//! the import directories (`--lib`, `OGHAM_PATH`), then beside the binary or in a directory
//! above it (a checkout running `target/debug/ogham` finds the repository's `lib/`). Otherwise a
//! copy is written under the cache directory (`$OGHAM_CACHE_DIR`, else `$XDG_CACHE_HOME/ogham`,
//! else `~/.cache/ogham`), in `lsp-stdlib/BUILD/lib/NAME.og` where BUILD identifies the build,
//! and made read-only: it is for reading, and editing it would change nothing.
//!
//! Invariants: a path is returned only for a file whose text is the embedded module's text,
//! so the ranges the server computes on the embedded text are right in the file shown.

use std::path::{Path, PathBuf};

/// A file with the text of the standard library module `module` (`lib/linalg`), if one exists
/// or can be written.
pub fn locate(module: &str) -> Option<PathBuf> {
    let text = ogham_compiler::stdlib::lookup(module)?;
    let relative = format!("{module}.og");
    let matches = |p: &Path| std::fs::read_to_string(p).is_ok_and(|t| t == text);
    let import_dirs = ogham_compiler::loader::search_path()
        .into_iter()
        .map(|(d, _)| d);
    let exe = std::env::current_exe().ok();
    let beside_binary = exe
        .iter()
        .flat_map(|e| e.ancestors().skip(1))
        .map(Path::to_path_buf);
    if let Some(found) = import_dirs
        .chain(beside_binary)
        .map(|d| d.join(&relative))
        .find(|p| matches(p))
    {
        return Some(found);
    }
    let copy = ogham_runtime::cache_root()?
        .join("lsp-stdlib")
        .join(ogham_runtime::BUILD_ID)
        .join(&relative);
    if matches(&copy) {
        return Some(copy);
    }
    materialise(&copy, text).then_some(copy)
}

/// Writes `text` to `path` (through a temporary file, so a reader never sees half of it) and
/// makes it read-only.
fn materialise(path: &Path, text: &str) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    let temp = dir.join(format!(".tmp-{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&temp, text))
        .and_then(|()| {
            let mut perms = std::fs::metadata(&temp)?.permissions();
            perms.set_readonly(true);
            std::fs::set_permissions(&temp, perms)
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_module_is_found_with_its_embedded_text() {
        let path = locate("lib/linalg").expect("a file for lib/linalg");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            Some(text.as_str()),
            ogham_compiler::stdlib::lookup("lib/linalg")
        );
        assert_eq!(locate("lib/no-such-module"), None);
    }
}
