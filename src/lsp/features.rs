//! The answers to position queries on an analysed document: hover, go to definition, document
//! symbols, completion and inlay hints; and its formatting.
//!
//! Signatures are written as `ogham doc` writes them ([`crate::doc::model`]): the written
//! annotations where there are some, else the checker's types, with the type and size
//! parameters inference introduced.
//!
//! Invariants: every answer is computed from one [`Analysis`], whose spans describe its text;
//! a query at a position the index knows nothing about gets an empty answer, never an error.

use super::analysis::Analysis;
use super::convert::location;
use super::index::{BinderKind, Target};
use super::text::{LineIndex, path_to_uri};
use crate::doc::model::{alias_item, def_item};
use lsp_types::{
    CompletionItem, CompletionItemKind, DocumentSymbol, Documentation, Hover, HoverContents,
    InlayHint, InlayHintKind, InlayHintLabel, Location, MarkupContent, MarkupKind, Position, Range,
    SymbolKind, TextEdit, Uri,
};
use ogham_compiler::syntax::ast::{Decl, Def};
use ogham_ir::types::Type;
use std::collections::BTreeMap;

/// The declaration `decl` of module `module`.
fn decl(a: &Analysis, module: usize, decl: usize) -> Option<&Decl> {
    a.program.as_ref()?.modules.get(module)?.decls.get(decl)
}

/// The signature line and doc comment of a top-level definition.
fn def_signature(a: &Analysis, module: usize, def: &Def, decl: usize) -> (String, Option<String>) {
    let ty = a
        .checked
        .as_ref()
        .and_then(|c| c.def_types.get(&(module, decl)));
    let item = def_item(def, ty, "", String::new());
    let mut line = item.attrs.join(" ");
    if !line.is_empty() {
        line.push('\n');
    }
    line.push_str(&format!(
        "{} {}{}",
        item.kind.keyword(),
        item.name,
        item.signature
    ));
    (line, item.doc)
}

fn markdown(code: &str, doc: Option<&str>) -> HoverContents {
    let mut value = format!("```ogham\n{code}\n```");
    if let Some(doc) = doc {
        value.push_str(&format!("\n\n{doc}"));
    }
    HoverContents::Markup(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    })
}

/// The root module's index and its definitions, with the root module's index.
fn root_decls(a: &Analysis) -> (usize, &[Decl]) {
    let modules = a.program.as_ref().map_or(&[][..], |p| &p.modules);
    let root = modules.len().saturating_sub(1);
    (root, modules.last().map_or(&[][..], |m| &m.decls))
}

/// The root module's definition whose name is at `offset`.
fn def_named_at(a: &Analysis, offset: u32) -> Option<(usize, &Def)> {
    root_decls(a)
        .1
        .iter()
        .enumerate()
        .find_map(|(i, d)| match d {
            Decl::Def(def) if def.name.span.start <= offset && offset <= def.name.span.end => {
                Some((i, def))
            }
            _ => None,
        })
}

/// Hover: the type of the name or expression at `pos`, and a definition's signature and doc.
pub fn hover(a: &Analysis, pos: Position) -> Option<Hover> {
    let idx = LineIndex::new(&a.text);
    let offset = idx.offset(pos) as u32;
    let checked = a.checked.as_ref()?;
    let type_at = |id: ogham_compiler::syntax::ast::ExprId| checked.expr_types.get(id.0 as usize);
    let (contents, span) = if let Some((i, def)) = def_named_at(a, offset) {
        let (sig, doc) = def_signature(a, root_decls(a).0, def, i);
        (markdown(&sig, doc.as_deref()), def.name.span)
    } else if let Some(r) = a.index.ref_at(offset) {
        let at_use = r
            .expr
            .and_then(type_at)
            .map(|t| format!("{} : {t}", r.name));
        let contents = match &r.target {
            Target::Def { module, decl: d } => match decl(a, *module, *d) {
                Some(Decl::Def(def)) => {
                    let (mut sig, doc) = def_signature(a, *module, def, *d);
                    // A polymorphic definition: its type at this use too.
                    let generic = checked
                        .def_types
                        .get(&(*module, *d))
                        .is_some_and(Type::has_params);
                    if let Some(u) = at_use.filter(|_| generic) {
                        sig.push_str(&format!("\n-- here: {u}"));
                    }
                    markdown(&sig, doc.as_deref())
                }
                Some(Decl::TypeAlias(t)) => {
                    let item = alias_item(t, "", String::new());
                    markdown(
                        &format!("type {}{}", item.name, item.signature),
                        item.doc.as_deref(),
                    )
                }
                _ => markdown(at_use.as_deref()?, None),
            },
            Target::Builtin => markdown(at_use.as_deref()?, Some("built-in")),
            _ => markdown(at_use.as_deref()?, None),
        };
        (contents, r.span)
    } else if let Some(b) = a.index.binder_at(offset) {
        let ty = b.ty.as_ref().map_or("?".to_string(), Type::to_string);
        (markdown(&format!("{} : {ty}", b.name), None), b.span)
    } else {
        let (span, id) = a.index.expr_at(offset)?;
        (markdown(&format!(": {}", type_at(id)?), None), span)
    };
    Some(Hover {
        contents,
        range: Some(idx.range(span.start as usize, span.end as usize)),
    })
}

/// Go to definition: where the name at `pos` is bound or defined, or the module an `import`
/// at `pos` names.
pub fn definition(a: &Analysis, uri: &Uri, pos: Position) -> Option<Location> {
    let offset = LineIndex::new(&a.text).offset(pos) as u32;
    if let Some(r) = a.index.ref_at(offset) {
        return match &r.target {
            Target::Local(b) => location(a, uri, a.index.binders.get(*b)?.span),
            Target::Def { module, decl: d } => match decl(a, *module, *d)? {
                Decl::Def(def) => location(a, uri, def.name.span),
                Decl::TypeAlias(t) => location(a, uri, t.name.span),
                Decl::Import(i) => location(a, uri, i.span),
            },
            Target::Builtin | Target::Unresolved => None,
        };
    }
    if let Some((_, def)) = def_named_at(a, offset) {
        return location(a, uri, def.name.span);
    }
    import_at(a, offset)
}

/// The start of the module imported by the `import` at `offset`.
fn import_at(a: &Analysis, offset: u32) -> Option<Location> {
    let program = a.program.as_ref()?;
    let root = program.modules.last()?;
    let imports = root.decls.iter().filter_map(|d| match d {
        Decl::Import(i) => Some(i),
        _ => None,
    });
    // The prelude is the first import of every module but itself, before the written ones.
    let written = &root.imports[root.imports.len().saturating_sub(imports.clone().count())..];
    let (_, module) = imports
        .zip(written)
        .find(|(i, _)| i.span.start <= offset && offset <= i.span.end)?;
    let file = program.modules.get(*module)?;
    let path = match &a.sources.files().find(|(id, _)| *id == file.file)?.1.path {
        Some(p) => p.clone(),
        None => super::stdlib_files::locate(&file.name)?,
    };
    Some(Location::new(path_to_uri(&path)?, Range::default()))
}

/// The root module's definitions and type aliases.
pub fn symbols(a: &Analysis) -> Vec<DocumentSymbol> {
    let idx = LineIndex::new(&a.text);
    let range = |s: ogham_ir::source::Span| idx.range(s.start as usize, s.end as usize);
    let (root, decls) = root_decls(a);
    decls
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let (name, span, detail, kind) = match d {
                Decl::Def(def) => {
                    let (sig, _) = def_signature(a, root, def, i);
                    (&def.name, def.span, sig, SymbolKind::FUNCTION)
                }
                Decl::TypeAlias(t) => (&t.name, t.span, String::new(), SymbolKind::TYPE_PARAMETER),
                Decl::Import(_) => return None,
            };
            #[allow(deprecated)] // `deprecated` is a required field of the protocol's type.
            Some(DocumentSymbol {
                name: name.name.clone(),
                detail: Some(detail),
                kind,
                tags: None,
                deprecated: None,
                range: range(span.to(name.span)),
                selection_range: range(name.span),
                children: None,
            })
        })
        .collect()
}

/// Completion: the names in scope at `pos` (locals with their types, the definitions of the
/// document and of the modules it imports with their signatures and docs, the built-ins), and
/// the definitions of the library modules it does not import (adding the import).
pub fn completion(a: &Analysis, pos: Position) -> Vec<CompletionItem> {
    let offset = LineIndex::new(&a.text).offset(pos) as u32;
    let mut items: BTreeMap<String, CompletionItem> = BTreeMap::new();
    for name in ogham_compiler::builtins::plain_names() {
        items.insert(
            name.to_string(),
            item(name, CompletionItemKind::FUNCTION, "built-in".into(), None),
        );
    }
    library_completions(a, &mut items);
    if let Some(program) = &a.program {
        let root = program.modules.len().saturating_sub(1);
        let visible = program
            .modules
            .last()
            .map_or(Vec::new(), |m| m.imports.clone());
        for module in visible.into_iter().chain([root]) {
            let decls = program.modules.get(module).map_or(&[][..], |m| &m.decls);
            for (i, d) in decls.iter().enumerate() {
                let entry = match d {
                    Decl::Def(def) => {
                        let (sig, doc) = def_signature(a, module, def, i);
                        item(&def.name.name, CompletionItemKind::FUNCTION, sig, doc)
                    }
                    Decl::TypeAlias(t) => item(
                        &t.name.name,
                        CompletionItemKind::TYPE_PARAMETER,
                        "type".into(),
                        t.doc.clone(),
                    ),
                    Decl::Import(_) => continue,
                };
                items.insert(entry.label.clone(), entry);
            }
        }
    }
    for b in a.index.in_scope(offset) {
        let ty = b.ty.as_ref().map_or(String::new(), Type::to_string);
        items.insert(
            b.name.clone(),
            item(&b.name, CompletionItemKind::VARIABLE, ty, None),
        );
    }
    items.into_values().collect()
}

/// The definitions of the library modules the document does not import, each with the edit
/// that adds the import.
fn library_completions(a: &Analysis, items: &mut BTreeMap<String, CompletionItem>) {
    let program = a.program.as_ref();
    let imported = |module: &str| {
        program.is_some_and(|p| {
            let root = p.modules.last().map_or(&[][..], |m| &m.imports);
            root.iter()
                .any(|&i| p.modules.get(i).is_some_and(|m| m.name == module))
        })
    };
    let idx = LineIndex::new(&a.text);
    let at = idx.position(super::convert::import_offset(a));
    for def in super::library::definitions() {
        if imported(&def.module) {
            continue;
        }
        let import = format!("import \"{}\"", def.module);
        let mut entry = item(
            &def.name,
            CompletionItemKind::FUNCTION,
            format!("{}  ({import})", def.signature),
            def.doc.clone(),
        );
        entry.additional_text_edits = Some(vec![TextEdit::new(
            Range::new(at, at),
            format!("{import}\n"),
        )]);
        items.insert(def.name.clone(), entry);
    }
}

fn item(
    label: &str,
    kind: CompletionItemKind,
    detail: String,
    doc: Option<String>,
) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: (!detail.is_empty()).then_some(detail),
        documentation: doc.map(|d| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: d,
            })
        }),
        ..Default::default()
    }
}

/// Inlay hints: the inferred types of the `let`-bound names and lambda parameters without a
/// written type, in `range`.
pub fn inlay_hints(a: &Analysis, range: Range) -> Vec<InlayHint> {
    let idx = LineIndex::new(&a.text);
    let (from, to) = (idx.offset(range.start) as u32, idx.offset(range.end) as u32);
    a.index
        .binders
        .iter()
        .filter(|b| matches!(b.kind, BinderKind::Let | BinderKind::LambdaParam))
        .filter(|b| !b.annotated && b.span.start >= from && b.span.end <= to)
        .filter_map(|b| {
            Some(InlayHint {
                position: idx.position(b.span.end as usize),
                label: InlayHintLabel::String(format!(": {}", b.ty.as_ref()?)),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: Some(false),
                padding_right: Some(false),
                data: None,
            })
        })
        .collect()
}

/// `ogham fmt`'s layout of the document: one edit replacing the whole text, or none when it is
/// formatted already, has a `-- ogham-fmt: off` line or does not parse.
pub fn formatting(a: &Analysis) -> Vec<TextEdit> {
    use ogham_compiler::syntax::format::{format_source, formatting_off};
    if formatting_off(&a.text) {
        return Vec::new();
    }
    let mut sources = ogham_ir::source::SourceMap::new();
    let file = sources.add(a.path.display().to_string(), Some(a.path.clone()), &a.text);
    match format_source(file, &a.text) {
        Ok(formatted) if formatted != a.text => {
            let lines = LineIndex::new(&a.text);
            vec![TextEdit {
                range: lines.range(0, a.text.len()),
                new_text: formatted,
            }]
        }
        _ => Vec::new(),
    }
}
