//! The compiler's diagnostics as the protocol's: code, range, severity, the secondary labels
//! and the notes as related information, and quick fixes from the help texts that name a
//! replacement.
//!
//! The compiler's [`Diagnostic`] carries its help as text, without a machine-readable edit; a
//! help of the form "... did you mean `X`? ..." is the one kind that names the text to put in
//! place of the primary span (an unknown name's closest match, `r [i]` written for `r[i]`), and
//! becomes a quick fix. A diagnostic about another file (an import that does not parse) is
//! shown at the start of the document, its message prefixed with its location.
//!
//! Invariants: every range is computed with [`LineIndex`] of the file the span is in, so it is
//! valid whatever the span; the quick fix's edit replaces exactly the primary span.

use super::analysis::Analysis;
use super::text::{LineIndex, path_to_uri};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, DiagnosticRelatedInformation,
    DiagnosticSeverity, Location, NumberOrString, Range, TextEdit, Uri, WorkspaceEdit,
};
use ogham_ir::diag::{Diagnostic, Severity};
use std::collections::HashMap;

/// The diagnostics of a document, for `textDocument/publishDiagnostics`.
pub fn diagnostics(a: &Analysis, uri: &Uri) -> Vec<lsp_types::Diagnostic> {
    a.diagnostics
        .iter()
        .map(|d| diagnostic(a, uri, d))
        .collect()
}

fn diagnostic(a: &Analysis, uri: &Uri, d: &Diagnostic) -> lsp_types::Diagnostic {
    let idx = LineIndex::new(&a.text);
    let primary = d.primary.as_ref();
    let here = primary.filter(|l| l.span.file == a.root);
    let range = here.map_or_else(Range::default, |l| {
        idx.range(l.span.start as usize, l.span.end as usize)
    });
    let mut message = d.message.clone();
    if let Some(l) = primary.filter(|l| l.span.file != a.root) {
        message = format!("{}: {message}", location_name(a, l.span));
    }
    if let Some(l) = primary.filter(|l| !l.message.is_empty()) {
        message.push_str(&format!("\n{}", l.message));
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    let mut related: Vec<DiagnosticRelatedInformation> = d
        .secondary
        .iter()
        .filter_map(|l| {
            Some(DiagnosticRelatedInformation {
                location: location(a, uri, l.span)?,
                message: l.message.clone(),
            })
        })
        .collect();
    related.extend(d.notes.iter().map(|n| DiagnosticRelatedInformation {
        location: Location::new(uri.clone(), range),
        message: format!("note: {n}"),
    }));
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("ogham".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

/// `name:line:col` of a span.
fn location_name(a: &Analysis, span: ogham_ir::source::Span) -> String {
    if a.sources.files().any(|(id, _)| id == span.file) {
        a.sources.location(span)
    } else {
        "another file".to_string()
    }
}

/// The protocol's location of a span: in the document, or in the file on disk it came from.
pub fn location(a: &Analysis, uri: &Uri, span: ogham_ir::source::Span) -> Option<Location> {
    if span.file == a.root {
        let idx = LineIndex::new(&a.text);
        return Some(Location::new(
            uri.clone(),
            idx.range(span.start as usize, span.end as usize),
        ));
    }
    let (_, file) = a.sources.files().find(|(id, _)| *id == span.file)?;
    let module = a
        .program
        .as_ref()?
        .modules
        .iter()
        .find(|m| m.file == span.file)?;
    let path = match &file.path {
        Some(p) => p.clone(),
        None => super::stdlib_files::locate(&module.name)?,
    };
    let idx = LineIndex::new(&file.text);
    Some(Location::new(
        path_to_uri(&path)?,
        idx.range(span.start as usize, span.end as usize),
    ))
}

/// The replacement a help text names: the `X` of "did you mean `X`?".
fn suggestion(help: &str) -> Option<&str> {
    let rest = &help[help.find("did you mean `")? + "did you mean `".len()..];
    let end = rest.find("`?")?;
    Some(&rest[..end]).filter(|s| !s.is_empty())
}

/// The quick fixes of the document's diagnostics whose primary span overlaps `range`.
pub fn code_actions(a: &Analysis, uri: &Uri, range: Range) -> Vec<CodeActionOrCommand> {
    let idx = LineIndex::new(&a.text);
    let (from, to) = (idx.offset(range.start), idx.offset(range.end));
    a.diagnostics
        .iter()
        .filter_map(|d| {
            let span = d.span().filter(|s| s.file == a.root)?;
            let (start, end) = (span.start as usize, span.end as usize);
            if end < from || start > to {
                return None;
            }
            let new_text = suggestion(d.help.as_deref()?)?.to_string();
            let edit = TextEdit::new(idx.range(start, end), new_text.clone());
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Replace with `{new_text}`"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic(a, uri, d)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_read_from_help_texts() {
        assert_eq!(suggestion("did you mean `length`?"), Some("length"));
        assert_eq!(
            suggestion("`r [i]` applies `r`: did you mean `r[i]`? indexing must"),
            Some("r[i]")
        );
        assert_eq!(suggestion("convert with `f32.i64`"), None);
    }
}
