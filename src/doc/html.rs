//! The pages of `ogham doc`: a module page per documented module and the index, as
//! self-contained HTML (an inline stylesheet, no scripts, no external resources).
//!
//! Code (signatures and the doc comments' code spans) is split into identifiers and the rest;
//! an identifier becomes a link when the module's [`Links`] resolve it and it is none of the
//! item's own parameters (`xs`, `t`, `n`). Identifiers right after `.` (fields, `f32.sqrt`),
//! after `'` (type variables) or inside numbers (`1f32`) are never linked.
//!
//! Invariant: every piece of text from the library (names, signatures, comments, paths) goes
//! through [`escape`] or the markdown renderer, which escapes; only the fixed markup of this
//! module is written raw.

use super::markdown::{escape, render, summary};
use super::model::{Item, ItemKind, Links, ModuleDoc};
use std::collections::BTreeSet;
use std::fmt::Write;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;margin:2rem auto;\
padding:0 1rem;line-height:1.5;color:#1d1f21;background:#fff}\
a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}\
code,pre{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:.92em}\
p code,li code,td code{background:#f3f4f6;padding:0 .2em;border-radius:3px}\
h1{font-size:1.7rem;margin-bottom:.3rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}\
nav{font-size:.9rem;margin-bottom:1rem}\
section.item{margin:1.5rem 0;padding-top:.5rem;border-top:1px solid #eee}\
pre.sig{background:#f6f8fa;padding:.5rem .7rem;border-radius:4px;white-space:pre-wrap;margin:0}\
.kw{color:#8e44ad;font-weight:600}.name{font-weight:700}.attr{color:#a05a00}\
.loc{font-size:.8rem;color:#666;margin:.2rem 0}\
ul.toc{columns:3;font-size:.9rem}\
table{border-collapse:collapse;width:100%}td{padding:.25rem .5rem;border-bottom:1px solid #eee;\
vertical-align:top}td.n{white-space:nowrap}";

/// Where an identifier is looked up: definitions first (doc text) or types only (signatures).
#[derive(Clone, Copy)]
enum Lookup {
    DefsThenTypes,
    Types,
}

/// A whole page around `body`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// `text` (code) escaped, with the names `links` knows turned into links.
fn code(text: &str, links: &Links, locals: &BTreeSet<String>, lookup: Lookup) -> String {
    if let Some(href) = links.modules.get(text) {
        return format!("<a href=\"{}\">{}</a>", escape(href), escape(text));
    }
    let mut out = String::new();
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        let len = if c.is_ascii_alphabetic() || c == '_' {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '\''))
                .unwrap_or(rest.len())
        } else if c.is_ascii_digit() {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        let token = &rest[..len];
        let linkable = (c.is_ascii_alphabetic() || c == '_')
            && !matches!(prev, Some('.' | '\''))
            && !locals.contains(token);
        let href = linkable
            .then(|| match lookup {
                Lookup::DefsThenTypes => links.defs.get(token).or(links.types.get(token)),
                Lookup::Types => links.types.get(token),
            })
            .flatten();
        match href {
            Some(href) => {
                let _ = write!(out, "<a href=\"{}\">{}</a>", escape(href), escape(token));
            }
            None => out.push_str(&escape(token)),
        }
        prev = token.chars().last();
        rest = &rest[len..];
    }
    out
}

/// A doc comment rendered with its code spans linked.
fn doc_html(doc: &str, links: &Links, locals: &BTreeSet<String>) -> String {
    render(doc, &|c| code(c, links, locals, Lookup::DefsThenTypes))
}

/// The first paragraph of a doc comment, linked.
fn summary_html(doc: &str, links: &Links, locals: &BTreeSet<String>) -> String {
    summary(doc, &|c| code(c, links, locals, Lookup::DefsThenTypes))
}

/// `#[attr] def name [n] (xs: [n]f32) : f32` with the types' names linked.
fn signature(item: &Item, links: &Links) -> String {
    let mut out = String::new();
    for attr in &item.attrs {
        let _ = write!(out, "<span class=\"attr\">{}</span> ", escape(attr));
    }
    let _ = write!(
        out,
        "<span class=\"kw\">{}</span> <span class=\"name\">{}</span>{}",
        item.kind.keyword(),
        escape(&item.name),
        code(&item.signature, links, &item.locals, Lookup::Types)
    );
    out
}

/// The page of one module.
pub fn module_page(module: &ModuleDoc) -> String {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<nav><a href=\"index.html\">Index</a></nav>\n<h1><code>{}</code></h1>",
        escape(&module.title)
    );
    let none = BTreeSet::new();
    if let Some(doc) = &module.doc {
        body.push_str(&doc_html(doc, &module.links, &none));
    }
    if module.items.is_empty() {
        body.push_str("<p>This module has no definitions.</p>\n");
    } else {
        body.push_str("<ul class=\"toc\">\n");
        for item in &module.items {
            let _ = writeln!(
                body,
                "<li><a href=\"#{}\"><code>{}</code></a>{}</li>",
                escape(&item.anchor),
                escape(&item.name),
                if item.kind == ItemKind::Type {
                    " (type)"
                } else {
                    ""
                }
            );
        }
        body.push_str("</ul>\n");
    }
    for item in &module.items {
        let _ = writeln!(
            body,
            "<section class=\"item\" id=\"{}\">\n<pre class=\"sig\"><code>{}</code></pre>\n\
             <p class=\"loc\">{}</p>",
            escape(&item.anchor),
            signature(item, &module.links),
            escape(&item.location)
        );
        if let Some(doc) = &item.doc {
            body.push_str(&doc_html(doc, &module.links, &item.locals));
        }
        body.push_str("</section>\n");
    }
    page(&format!("{} — Ogham reference", module.title), &body)
}

/// The index: every module with the first paragraph of its comment, then every definition.
pub fn index_page(title: &str, modules: &[ModuleDoc]) -> String {
    let mut body = format!("<h1>{}</h1>\n<h2>Modules</h2>\n<table>\n", escape(title));
    let none = BTreeSet::new();
    for m in modules {
        let _ = writeln!(
            body,
            "<tr><td class=\"n\"><a href=\"{}.html\"><code>{}</code></a></td><td>{}</td></tr>",
            escape(&m.page),
            escape(&m.title),
            m.doc
                .as_deref()
                .map(|d| summary_html(d, &m.links, &none))
                .unwrap_or_default()
        );
    }
    body.push_str("</table>\n<h2>Definitions</h2>\n<table>\n");
    let mut all: Vec<(&Item, &ModuleDoc)> = modules
        .iter()
        .flat_map(|m| m.items.iter().map(move |i| (i, m)))
        .collect();
    all.sort_by(|(a, am), (b, bm)| {
        (&a.name, &am.title, &a.anchor).cmp(&(&b.name, &bm.title, &b.anchor))
    });
    for (item, m) in all {
        let _ = writeln!(
            body,
            "<tr><td class=\"n\"><a href=\"{}.html#{}\"><code>{}</code></a>{}</td>\
             <td><code>{}</code></td><td>{}</td></tr>",
            escape(&m.page),
            escape(&item.anchor),
            escape(&item.name),
            if item.kind == ItemKind::Type {
                " (type)"
            } else {
                ""
            },
            escape(&m.title),
            item.doc
                .as_deref()
                .map(|d| summary_html(d, &m.links, &item.locals))
                .unwrap_or_default()
        );
    }
    body.push_str("</table>\n");
    page(title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_free_names_become_links() {
        let mut links = Links::default();
        links
            .defs
            .insert("sum".into(), "prelude.html#def-sum".into());
        links.defs.insert("xs".into(), "a.html#def-xs".into());
        links
            .types
            .insert("point".into(), "a.html#type-point".into());
        links.modules.insert("lib/a".into(), "a.html".into());
        let locals = BTreeSet::from(["xs".to_string()]);
        let sum = "<a href=\"prelude.html#def-sum\">sum</a>";
        assert_eq!(
            code(
                "sum xs f32.sum r.sum 'sum 1sum sum'",
                &links,
                &locals,
                Lookup::DefsThenTypes
            ),
            format!("{sum} xs f32.sum r.sum &#39;sum 1sum sum&#39;")
        );
        // Signatures link types only; a code span naming a module links to its page.
        assert_eq!(
            code("(p: point) : sum", &links, &locals, Lookup::Types),
            "(p: <a href=\"a.html#type-point\">point</a>) : sum"
        );
        assert_eq!(
            code("lib/a", &links, &locals, Lookup::Types),
            "<a href=\"a.html\">lib/a</a>"
        );
    }
}
