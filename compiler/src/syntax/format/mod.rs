//! The source formatter behind `ogham fmt`: Ogham text in, the same program in a fixed layout
//! out ([`format_source`]; a language server calls it directly).
//!
//! The file is parsed to an AST and printed again as a [`doc::Doc`] laid out in
//! [`WIDTH`] columns: two spaces of indentation, one declaration after another with a blank
//! line between them (blank lines the source had between comments, `let`s and declarations
//! are kept, at most one), `let` chains one `let` a line, long applications and operator
//! chains broken with their parts aligned, and only the parentheses the grammar needs.
//! Literals, strings and names are copied from the source.
//!
//! Comments are not in the AST: the lexer keeps their positions and the printer takes each
//! comment before the first node (or line break) after it, see [`comments`]. Doc comments
//! (`-- |`) and test blocks (`-- ==`) are comments like the others: they are written
//! verbatim, in order, with the blank lines around them kept, so they stay attached as before.
//!
//! Guarantees (checked on every call, so a bug in the formatter can never change a file):
//! the output parses to the same AST as the input (compared by [`print::module`], which
//! ignores spans and ids), has the same comments in the same order, and formats to itself.
//! A file that does not parse gets its syntax diagnostics and no output.

mod blocks;
mod comments;
mod doc;
mod expr;

use crate::syntax::{ast, lexer, parse_module, print};
use doc::Doc;
use expr::Printer;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{FileId, Span};

/// The width the layout aims at (lines may be longer when nothing can be broken).
pub const WIDTH: usize = 100;

/// The line that keeps `ogham fmt` off a file (whose line numbers matter, say): a comment line
/// `-- ogham-fmt: off` anywhere in it.
pub const OFF_MARKER: &str = "-- ogham-fmt: off";

/// Whether `text` asks not to be formatted ([`OFF_MARKER`]); tools check this before calling
/// [`format_source`], which formats any text.
pub fn formatting_off(text: &str) -> bool {
    text.lines().any(|l| l.trim() == OFF_MARKER)
}

/// Formats the text of one `.og` file (`file` names it in diagnostics). Returns the syntax
/// errors if it does not parse, and E0109 if the formatter could not keep the meaning (a bug:
/// the text is left as it is).
pub fn format_source(file: FileId, text: &str) -> Result<String, Vec<Diagnostic>> {
    let decls = parse_module(file, text, &mut 0)?;
    let comments = lexer::tokenize(file, text).comments;
    let out = layout(text, &decls, &comments);
    check(file, text, &decls, &comments, &out)?;
    Ok(out)
}

fn layout(text: &str, decls: &[ast::Decl], comments: &[(usize, usize)]) -> String {
    let p = Printer {
        text,
        comments: comments::Comments::new(text, comments),
    };
    let mut parts = Vec::new();
    let mut prev_import = false;
    for (i, d) in decls.iter().enumerate() {
        let start = decl_span(d).start as usize;
        let import = matches!(d, ast::Decl::Import(_));
        if i == 0 {
            parts.push(p.comments.separator(start, Doc::text("")));
        } else {
            // One blank line between declarations, unless comments come between (then as in
            // the source: a doc comment must stay right above its definition) or both are
            // imports (then as in the source too).
            let as_in_source = p.comments.own_line_before(start) || (import && prev_import);
            parts.push(p.comments.separator(start, Doc::Hard));
            if !as_in_source {
                parts.push(Doc::Blank);
            }
        }
        parts.push(decl(&p, d));
        prev_import = import;
    }
    parts.push(p.comments.before(usize::MAX));
    doc::render(&Doc::concat(parts), WIDTH)
}

fn decl_span(d: &ast::Decl) -> Span {
    match d {
        ast::Decl::Def(d) => d.span,
        ast::Decl::TypeAlias(t) => t.span,
        ast::Decl::Import(i) => i.span,
    }
}

fn decl(p: &Printer<'_>, d: &ast::Decl) -> Doc {
    match d {
        ast::Decl::Def(def) => {
            let mut parts = Vec::new();
            for a in &def.attrs {
                parts.push(Doc::text(format!("#[{}]", a.name)));
                parts.push(Doc::Hard);
            }
            let keyword = if def.entry { "entry " } else { "def " };
            let sig = blocks::Signature {
                tps: &def.type_params,
                params: &def.params,
                ret: def.ret.as_ref(),
                spaced: false,
            };
            let head = p.signature(&def.name.name, &sig, " =");
            parts.push(p.after_equals(Doc::concat(vec![Doc::text(keyword), head]), &def.body));
            Doc::concat(parts)
        }
        ast::Decl::TypeAlias(t) => {
            let head = format!(
                "type {}{} =",
                t.name.name,
                print::type_param_list(&t.params)
            );
            Doc::group(Doc::concat(vec![
                Doc::text(head),
                Doc::nest(
                    expr::INDENT,
                    Doc::concat(vec![Doc::Line, p.type_exp(&t.body)]),
                ),
            ]))
        }
        ast::Decl::Import(i) => Doc::text(format!("import \"{}\"", i.path)),
    }
}

/// E0109 unless `out` means what `text` meant, keeps its comments and is formatted already.
fn check(
    file: FileId,
    text: &str,
    decls: &[ast::Decl],
    comments: &[(usize, usize)],
    out: &str,
) -> Result<(), Vec<Diagnostic>> {
    let problem = match parse_module(file, out, &mut 0) {
        Err(_) => Some("the formatted text does not parse"),
        Ok(new) if print::module(&new) != print::module(decls) => {
            Some("the formatted text parses to another program")
        }
        Ok(new) => {
            let new_comments = lexer::tokenize(file, out).comments;
            if comments::texts(out, &new_comments) != comments::texts(text, comments) {
                Some("the formatted text does not keep the comments")
            } else if layout(out, &new, &new_comments) != out {
                Some("the formatted text would format differently again")
            } else {
                None
            }
        }
    };
    match problem {
        None => Ok(()),
        Some(why) => Err(vec![
            Diagnostic::error("E0109", format!("cannot format this file: {why}"))
                .with_primary(Span::new(file, 0, 0), "left as it is")
                .with_help("this is a bug in the formatter; please report it with the file"),
        ]),
    }
}

#[cfg(test)]
mod tests;
