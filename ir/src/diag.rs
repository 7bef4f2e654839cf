//! Diagnostics: rustc-style error reports with codes, spans, labels and help.
//!
//! Every user-facing error of the compiler (syntax, imports, types, sizes, uniqueness) and of the
//! runtime (out-of-bounds, shape mismatch, bad input) is a [`Diagnostic`]. Passes collect several
//! diagnostics per run instead of stopping at the first. [`render`] turns them into text with
//! `codespan-reporting` (no colour for snapshots and pipes; colour on a terminal).
//!
//! Error codes are stable and documented in `docs/errors.md`; ranges:
//! `E01xx` syntax, `E02xx` imports and names, `E03xx` types, `E04xx` sizes, `E05xx` uniqueness,
//! `E06xx` entry points and arguments, `R07xx` run-time errors.

use crate::source::{SourceMap, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A message attached to a span.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code such as `E0301`.
    pub code: &'static str,
    pub message: String,
    /// The span the error is about, with a short message under the caret.
    pub primary: Option<Label>,
    /// Other relevant places ("expected because of this", "defined here").
    pub secondary: Vec<Label>,
    /// Free-form notes printed after the source snippet.
    pub notes: Vec<String>,
    /// A suggestion for how to fix the problem.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The primary span, if any.
    pub fn span(&self) -> Option<Span> {
        self.primary.as_ref().map(|l| l.span)
    }
}

/// Adapter so codespan-reporting can read our [`SourceMap`]. A span of a file that is not
/// there, or not on character boundaries (a program read from a damaged library), is an error
/// the renderer reports in the text, never a panic.
struct CsFiles<'a>(&'a SourceMap);

impl<'a> CsFiles<'a> {
    fn file(&self, id: u32) -> Result<&'a crate::source::SourceFile, FilesError> {
        self.0
            .files()
            .nth(id as usize)
            .map(|(_, f)| f)
            .ok_or(FilesError::FileMissing)
    }
}

impl<'a> Files<'a> for CsFiles<'a> {
    type FileId = u32;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: u32) -> Result<&'a str, FilesError> {
        Ok(&self.file(id)?.name)
    }

    fn source(&'a self, id: u32) -> Result<&'a str, FilesError> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'a self, id: u32, byte_index: usize) -> Result<usize, FilesError> {
        let text = self.source(id)?;
        let before = text
            .get(..byte_index.min(text.len()))
            .ok_or(FilesError::InvalidCharBoundary { given: byte_index })?;
        Ok(before.matches('\n').count())
    }

    fn line_range(
        &'a self,
        id: u32,
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, FilesError> {
        let text = self.source(id)?;
        let mut start = 0;
        for _ in 0..line_index {
            match text[start..].find('\n') {
                Some(i) => start += i + 1,
                None => {
                    return Err(FilesError::LineTooLarge {
                        given: line_index,
                        max: text.matches('\n').count(),
                    });
                }
            }
        }
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        Ok(start..end)
    }
}

fn to_codespan(d: &Diagnostic) -> cs::Diagnostic<u32> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut labels = Vec::new();
    if let Some(p) = &d.primary {
        labels.push(cs::Label::primary(p.span.file.0, p.span.range()).with_message(&p.message));
    }
    for s in &d.secondary {
        labels.push(cs::Label::secondary(s.span.file.0, s.span.range()).with_message(&s.message));
    }
    let mut notes = d.notes.clone();
    if let Some(h) = &d.help {
        notes.push(format!("help: {h}"));
    }
    cs::Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}

/// Renders diagnostics as plain text (no colour), exactly as shown to users in a pipe.
/// This is the form used by snapshot tests.
pub fn render(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut buf = term::termcolor::NoColor::new(Vec::new());
    let config = term::Config::default();
    let files = CsFiles(sources);
    for d in diags {
        // Writing into a Vec cannot fail; a span outside its file is reported in the text.
        if let Err(e) = term::emit_to_write_style(&mut buf, &config, &files, &to_codespan(d)) {
            use std::io::Write;
            let _ = writeln!(
                buf,
                "error[{}]: {} (could not render source: {e})",
                d.code, d.message
            );
        }
    }
    String::from_utf8_lossy(&buf.into_inner()).into_owned()
}

/// Renders diagnostics to standard error, with colour when it is a terminal.
pub fn emit_to_stderr(sources: &SourceMap, diags: &[Diagnostic]) {
    use term::termcolor::{ColorChoice, StandardStream};
    let choice = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let mut stream = StandardStream::stderr(choice);
    let config = term::Config::default();
    let files = CsFiles(sources);
    for d in diags {
        if term::emit_to_write_style(&mut stream, &config, &files, &to_codespan(d)).is_err() {
            eprintln!("error[{}]: {}", d.code, d.message);
        }
    }
}
