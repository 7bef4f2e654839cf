//! The compiler's diagnostics as the protocol's: code, range, severity, the secondary labels
//! and the notes as related information, and quick fixes from the help texts that name a
//! replacement.
//!
//! The compiler's [`Diagnostic`] carries its help as text, without a machine-readable edit. Two
//! kinds of help name one and become quick fixes: "did you mean `X`?" where the primary span is
//! the name to replace (unknown names, types and members: [`NAME_CODES`]) or differs from `X`
//! only in spaces (`r [i]` for `r[i]`); and "add `import "M"`", which inserts the line after
//! the last import (else before the first declaration and its doc comment). A diagnostic about another file (an import that does not parse) is
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
use ogham_compiler::syntax::ast::Decl;
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

/// The text between `` `before `` and `` `after `` in `help`: the `X` of "did you mean `X`?".
fn quoted<'a>(help: &'a str, before: &str, after: &str) -> Option<&'a str> {
    let rest = &help[help.find(before)? + before.len()..];
    Some(&rest[..rest.find(after)?]).filter(|s| !s.is_empty())
}

/// Codes whose primary span is exactly the name a "did you mean" suggestion replaces (unknown
/// name, unknown type, unknown member of a numeric module).
const NAME_CODES: [&str; 3] = ["E0204", "E0205", "E0208"];

/// The fixes a diagnostic's help names: its title and its edit.
fn fixes(a: &Analysis, d: &Diagnostic) -> Vec<(String, TextEdit)> {
    let idx = LineIndex::new(&a.text);
    let (Some(span), Some(help)) = (d.span().filter(|s| s.file == a.root), d.help.as_deref())
    else {
        return Vec::new();
    };
    let range = idx.range(span.start as usize, span.end as usize);
    let written = a.text.get(span.range()).unwrap_or_default();
    let mut out = Vec::new();
    if let Some(x) = quoted(help, "did you mean `", "`?") {
        // A name, or text that differs from the suggestion only in spaces (`r [i]` for `r[i]`).
        let unspaced = |t: &str| t.split_whitespace().collect::<String>();
        if NAME_CODES.contains(&d.code) || unspaced(written) == unspaced(x) {
            out.push((
                format!("Replace with `{x}`"),
                TextEdit::new(range, x.to_string()),
            ));
        }
    }
    if let Some(module) = quoted(help, "add `import \"", "\"`") {
        let at = idx.position(import_offset(a));
        let line = format!("import \"{module}\"\n");
        out.push((
            format!("Add `import \"{module}\"`"),
            TextEdit::new(Range::new(at, at), line),
        ));
    }
    out
}

/// Where a new `import` line goes: after the last import, else before the first declaration
/// and the comment lines right above it (its doc comment), else at the start.
pub fn import_offset(a: &Analysis) -> usize {
    let idx = LineIndex::new(&a.text);
    let decls = a
        .program
        .as_ref()
        .and_then(|p| p.modules.last())
        .map_or(&[][..], |m| &m.decls);
    let last_import = decls.iter().rev().find_map(|d| match d {
        Decl::Import(i) => Some(i.span.end as usize),
        _ => None,
    });
    if let Some(end) = last_import {
        return idx.line_start(idx.position(end).line as usize + 1);
    }
    let first = decls.iter().map(|d| match d {
        Decl::Def(def) => def.span.start,
        Decl::TypeAlias(t) => t.span.start,
        Decl::Import(i) => i.span.start,
    });
    let Some(first) = first.min() else {
        return 0;
    };
    let mut line = idx.position(first as usize).line as usize;
    while line > 0 && idx.line(line - 1).trim_start().starts_with("--") {
        line -= 1;
    }
    idx.line_start(line)
}

/// The quick fixes of the document's diagnostics whose primary span overlaps `range`.
pub fn code_actions(a: &Analysis, uri: &Uri, range: Range) -> Vec<CodeActionOrCommand> {
    let idx = LineIndex::new(&a.text);
    let (from, to) = (idx.offset(range.start), idx.offset(range.end));
    let overlaps = |d: &&Diagnostic| {
        d.span()
            .is_some_and(|s| s.end as usize >= from && s.start as usize <= to)
    };
    let mut actions = Vec::new();
    for d in a.diagnostics.iter().filter(overlaps) {
        for (title, edit) in fixes(a, d) {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic(a, uri, d)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            }));
        }
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_read_from_help_texts() {
        let mean = |h| quoted(h, "did you mean `", "`?");
        assert_eq!(mean("did you mean `length`?"), Some("length"));
        assert_eq!(
            mean("`r [i]` applies `r`: did you mean `r[i]`? indexing"),
            Some("r[i]")
        );
        assert_eq!(mean("convert with `f32.i64`"), None);
    }

    #[test]
    fn an_unknown_library_function_gets_its_import() {
        let text = "-- | A module.\n\n-- | Doc.\ndef f (xs: []f32) = nanmedian xs\n";
        let a = Analysis::new(std::path::Path::new("/nonexistent/m.og"), text);
        let uri: Uri = "file:///nonexistent/m.og".parse().unwrap();
        let all = Range::new(Default::default(), lsp_types::Position::new(9, 0));
        let actions = serde_json::to_string(&code_actions(&a, &uri, all)).unwrap();
        assert!(actions.contains("import \\\"lib/stats\\\"\\n"), "{actions}");
        assert!(
            actions.contains("\"start\":{\"line\":2,\"character\":0}"),
            "{actions}"
        );
    }
}
