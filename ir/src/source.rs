//! Source files and spans.
//!
//! Every file the compiler reads (the root program, its imports, the embedded standard library)
//! is registered once in a [`SourceMap`] and named by a [`FileId`]. A [`Span`] is a byte range in
//! one file; spans are carried by every AST node and by every diagnostic and run-time error, so a
//! message can always point at the source text that caused it.

use std::path::PathBuf;

/// Index of a file in a [`SourceMap`].
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct FileId(pub u32);

/// A half-open byte range `start..end` in one source file.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both `self` and `other` (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One registered source file.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SourceFile {
    /// The name shown in diagnostics (a path relative to where the user ran the tool, or
    /// `<stdlib>/lib/prelude.og` for embedded library files).
    pub name: String,
    /// The path on disk, if the file came from disk.
    pub path: Option<PathBuf>,
    pub text: String,
}

/// All source files of one compilation.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(
        &mut self,
        name: impl Into<String>,
        path: Option<PathBuf>,
        text: impl Into<String>,
    ) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            path,
            text: text.into(),
        });
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }

    /// 1-based line and column of a byte offset, for short "file:line:col" locations.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = &self.get(file).text;
        let offset = (offset as usize).min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// `name:line:col` of the start of a span.
    pub fn location(&self, span: Span) -> String {
        let (line, col) = self.line_col(span.file, span.start);
        format!("{}:{}:{}", self.get(span.file).name, line, col)
    }
}
