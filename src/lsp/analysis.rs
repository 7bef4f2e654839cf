//! One open document, analysed: the buffer loaded as the root of a program (its imports from
//! disk and the standard library), type-checked as far as it goes, and indexed for queries.
//!
//! A file that does not parse still gets hovers for what did parse: the declarations holding
//! syntax errors are blanked (their characters replaced by spaces, so every offset stays
//! where it was) and the rest is loaded and checked again. Only the syntax errors are reported
//! then, since the blanked declarations would make names unknown elsewhere.
//!
//! Invariants: `program` and `checked` describe `text` byte for byte (blanking preserves
//! offsets); the root module's file is `root`; `checked` may hold partial types, so it is only
//! ever read for display, never given to later compiler passes.

use super::index::Index;
use ogham_compiler::syntax::ast::Program;
use ogham_compiler::typeck::{self, Checked};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{FileId, SourceMap};
use std::path::{Path, PathBuf};

/// How many times syntax errors are blanked before giving up on a program.
const RECOVERY_ROUNDS: usize = 3;

/// A document and what the compiler makes of it.
pub struct Analysis {
    pub path: PathBuf,
    pub text: String,
    /// What to report: every diagnostic of the load and check (only the syntax errors when the
    /// file does not parse).
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
    /// The program (recovered from syntax errors if need be), if any could be loaded.
    pub program: Option<Program>,
    pub checked: Option<Checked>,
    pub root: FileId,
    pub index: Index,
    /// The diagnostics are empty: the program can be run (evaluation comments).
    pub clean: bool,
}

impl Analysis {
    /// Loads and checks `text` as the file `path`.
    pub fn new(path: &Path, text: &str) -> Analysis {
        let name = path.display().to_string();
        let mut sources = SourceMap::new();
        let loaded = ogham_compiler::loader::load_source(&mut sources, &name, text);
        let (sources, program, diagnostics) = match loaded {
            Ok(program) => (sources, Some(program), Vec::new()),
            Err(diagnostics) => {
                let recovered = recover(&name, text, &sources, &diagnostics);
                let (sources, program) = recovered.unwrap_or((sources, None));
                (sources, program, diagnostics)
            }
        };
        let parsed = diagnostics.is_empty();
        let (checked, diagnostics) = match &program {
            Some(p) => {
                let (checked, errors) = typeck::check_partial(&sources, p);
                (Some(checked), if parsed { errors } else { diagnostics })
            }
            None => (None, diagnostics),
        };
        let root = program
            .as_ref()
            .and_then(|p| p.modules.last())
            .map_or_else(|| root_file(&sources, &name), |m| m.file);
        let index = match (&program, &checked) {
            (Some(p), Some(c)) => Index::build(p, c),
            _ => Index::default(),
        };
        Analysis {
            path: path.to_path_buf(),
            text: text.to_string(),
            clean: parsed && diagnostics.is_empty() && checked.is_some(),
            diagnostics,
            sources,
            program,
            checked,
            root,
            index,
        }
    }
}

/// The file registered for the root module named `name` (the first one when nothing loaded).
fn root_file(sources: &SourceMap, name: &str) -> FileId {
    sources
        .files()
        .find(|(_, f)| f.name == name)
        .map_or(FileId(0), |(id, _)| id)
}

/// The program loaded from `text` with the declarations holding the root file's syntax errors
/// blanked, if that loads within a few rounds.
fn recover(
    name: &str,
    text: &str,
    sources: &SourceMap,
    diagnostics: &[Diagnostic],
) -> Option<(SourceMap, Option<Program>)> {
    let mut text = text.to_string();
    let mut root = root_file(sources, name);
    let mut errors = diagnostics.to_vec();
    for _ in 0..RECOVERY_ROUNDS {
        let offsets: Vec<usize> = errors
            .iter()
            .filter(|d| d.code.starts_with("E01"))
            .filter_map(|d| d.span())
            .filter(|s| s.file == root)
            .map(|s| s.start as usize)
            .collect();
        if offsets.is_empty() {
            return None;
        }
        for offset in offsets {
            blank_declaration(&mut text, offset);
        }
        let mut sources = SourceMap::new();
        match ogham_compiler::loader::load_source(&mut sources, name, &text) {
            Ok(program) => return Some((sources, Some(program))),
            Err(again) => {
                root = root_file(&sources, name);
                errors = again;
            }
        }
    }
    None
}

/// Whether a line starts a declaration (at its first column, as the library writes them).
fn starts_declaration(line: &str) -> bool {
    ["def ", "entry ", "type ", "import ", "#["]
        .iter()
        .any(|k| line.starts_with(k))
}

/// Replaces the declaration around `offset` (from the start of its first line to the next
/// declaration or the end) with spaces, keeping the newlines and the byte offsets. An error at
/// the keyword that starts a declaration is the previous declaration's (it was not finished).
fn blank_declaration(text: &mut String, offset: usize) {
    let offset = offset.min(text.len());
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&s| starts_declaration(&text[s..]))
        .collect();
    let mut at = starts.partition_point(|&s| s <= offset);
    let keyword = |s: usize| text[s..].find([' ', '[']).unwrap_or(0);
    if at >= 2 && offset < starts[at - 1] + keyword(starts[at - 1]) {
        at -= 1;
    }
    let start = at.checked_sub(1).map_or(0, |i| starts[i]);
    let end = starts.get(at).copied().unwrap_or(text.len());
    let blank: String = text[start..end]
        .chars()
        .map(|c| match c {
            '\n' => "\n".to_string(),
            c => " ".repeat(c.len_utf8()),
        })
        .collect();
    text.replace_range(start..end, &blank);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_declaration_is_blanked_and_the_rest_checks() {
        let text = "def f (x: f32) = x + 1f32\n\ndef g (y: i32) = y +\n\ndef h = f 2f32\n";
        let a = Analysis::new(Path::new("/nonexistent/dir/t.og"), text);
        assert!(a.diagnostics.iter().all(|d| d.code.starts_with("E01")));
        assert!(!a.diagnostics.is_empty());
        assert!(!a.clean);
        let p = a.program.as_ref().expect("recovered");
        assert_eq!(p.root().decls.len(), 2);
    }

    #[test]
    fn blanking_keeps_offsets_and_newlines() {
        let mut text = "def a = 1\ndef b = é +\n  2\ndef c = 3\n".to_string();
        let len = text.len();
        blank_declaration(&mut text, 15);
        assert_eq!(text.len(), len);
        assert!(text.starts_with("def a = 1\n"));
        assert!(text.ends_with("\ndef c = 3\n"));
        assert_eq!(text.matches('\n').count(), 4);
    }
}
