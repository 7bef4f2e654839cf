//! What `ogham doc` documents: the modules of a library with their definitions, signatures,
//! doc comments, locations and the names their pages can link to.
//!
//! A [`Unit`] is one type-checked program with the indices of the modules it documents (a
//! file's own program documents its root; the standard library's program documents every
//! module but its synthetic root). A module is identified across units by its file on disk,
//! or by its import path for embedded modules, so a module documented by one unit is linked
//! from the pages of the modules of other units that import it.
//!
//! Signatures show each parameter with its type: the written annotation where there is one
//! (so type aliases keep their names and link to their definitions), else the type the checker
//! inferred; type and size parameters that only inference introduced are added to the written
//! ones. Names are linked as the type checker resolves them: a module's own definitions, then
//! those of the modules it imports; a name no import provides links to the one documented
//! module defining it, if it is only one.
//!
//! Invariants: every href points at a documented module's page and at an anchor that page has;
//! anchors are unique on a page (a name defined twice gets `-2`, ...); everything is in a
//! deterministic order (modules by title, definitions in source order).

use crate::Frontend;
use ogham_compiler::syntax::ast::{Decl, Def, Pattern, TypeAlias, TypeParam};
use ogham_compiler::syntax::{lexer, print};
use ogham_ir::types::{Size, Type};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A type-checked program and the indices of the modules it documents.
pub struct Unit {
    pub frontend: Frontend,
    pub documented: Vec<usize>,
}

/// A documented module.
pub struct ModuleDoc {
    /// `lib/stats` (standard library), or the file as the user named it.
    pub title: String,
    /// The page's file name without `.html`.
    pub page: String,
    /// The doc comment at the top of the file that documents no declaration.
    pub doc: Option<String>,
    pub items: Vec<Item>,
    pub links: Links,
}

/// A definition or a type alias.
pub struct Item {
    pub kind: ItemKind,
    pub name: String,
    pub anchor: String,
    /// Attributes as written (`#[unsafe]`), then the signature after the name.
    pub attrs: Vec<String>,
    pub signature: String,
    pub doc: Option<String>,
    /// `file:line`.
    pub location: String,
    /// Parameter, type parameter and size names: never links in this item's text.
    pub locals: BTreeSet<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Def,
    Entry,
    Type,
}

impl ItemKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ItemKind::Def => "def",
            ItemKind::Entry => "entry",
            ItemKind::Type => "type",
        }
    }
}

/// The hrefs (`page.html#anchor`) of the names a module's text may link to.
#[derive(Default)]
pub struct Links {
    pub defs: HashMap<String, String>,
    pub types: HashMap<String, String>,
    /// Module titles (`lib/segmented`) to their pages.
    pub modules: HashMap<String, String>,
}

/// A documented module's place: its unit, its index there, its page and its anchors by
/// declaration index.
struct Placed {
    unit: usize,
    module: usize,
    page: String,
    anchors: BTreeMap<usize, String>,
}

/// The identity of module `m` of `fe` across units.
fn module_key(fe: &Frontend, m: usize) -> String {
    let module = &fe.program.modules[m];
    match &fe.sources.get(module.file).path {
        Some(path) => format!("file:{}", path.display()),
        None => format!("embedded:{}", module.name),
    }
}

/// The title of module `m`: its import path for embedded modules, else its file as named.
fn module_title(fe: &Frontend, m: usize) -> String {
    let module = &fe.program.modules[m];
    let file = fe.sources.get(module.file);
    match file.path {
        Some(_) => file.name.clone(),
        None => module.name.clone(),
    }
}

/// The page name of a module: its file name without directory and extension, with characters
/// other than ASCII letters, digits, `_`, `-` and `.` replaced by `_` (so that it is a plain
/// relative URL).
fn page_name(title: &str) -> String {
    let base = title.rsplit(['/', '\\']).next().unwrap_or(title);
    base.strip_suffix(".og")
        .unwrap_or(base)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The documented modules of `units`, sorted by title; an error if two need the same page.
pub fn modules(units: &[Unit]) -> Result<Vec<ModuleDoc>, String> {
    let mut placed: BTreeMap<String, Placed> = BTreeMap::new();
    let mut titles: BTreeMap<String, String> = BTreeMap::new();
    for (u, unit) in units.iter().enumerate() {
        for &m in &unit.documented {
            let key = module_key(&unit.frontend, m);
            if placed.contains_key(&key) {
                continue;
            }
            let title = module_title(&unit.frontend, m);
            let page = page_name(&title);
            if let Some(other) = titles.insert(page.clone(), title.clone()) {
                return Err(format!(
                    "`{other}` and `{title}` would both be documented on `{page}.html`: document \
                     them separately"
                ));
            }
            if page == "index" {
                return Err(format!(
                    "`{title}` would be documented on `index.html`, the index page: rename it"
                ));
            }
            let decls = &unit.frontend.program.modules[m].decls;
            placed.insert(
                key,
                Placed {
                    unit: u,
                    module: m,
                    page,
                    anchors: anchors(decls),
                },
            );
        }
    }
    let unique = unique_names(units, &placed);
    let mut docs: Vec<ModuleDoc> = placed
        .values()
        .map(|p| module_doc(units, &placed, &unique, p))
        .collect();
    docs.sort_by(|a, b| a.title.cmp(&b.title));
    Ok(docs)
}

/// `def-NAME` / `type-NAME` for every definition and alias, `-2`, `-3`, ... for repeated ones.
fn anchors(decls: &[Decl]) -> BTreeMap<usize, String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeMap::new();
    for (i, decl) in decls.iter().enumerate() {
        let base = match decl {
            Decl::Def(d) => format!("def-{}", d.name.name),
            Decl::TypeAlias(t) => format!("type-{}", t.name.name),
            Decl::Import(_) => continue,
        };
        let count = seen.entry(base.clone()).or_default();
        *count += 1;
        out.insert(
            i,
            match *count {
                1 => base,
                n => format!("{base}-{n}"),
            },
        );
    }
    out
}

/// Names (definitions, then types) that exactly one documented module defines: their hrefs
/// (the last definition of the name there).
fn unique_names(units: &[Unit], placed: &BTreeMap<String, Placed>) -> Links {
    type Table = BTreeMap<String, BTreeMap<String, String>>;
    let (mut defs, mut types) = (Table::new(), Table::new());
    for p in placed.values() {
        let decls = &units[p.unit].frontend.program.modules[p.module].decls;
        for (i, anchor) in &p.anchors {
            let (table, name) = match &decls[*i] {
                Decl::Def(d) => (&mut defs, &d.name.name),
                Decl::TypeAlias(t) => (&mut types, &t.name.name),
                Decl::Import(_) => continue,
            };
            let href = format!("{}.html#{anchor}", p.page);
            table
                .entry(name.clone())
                .or_default()
                .insert(p.page.clone(), href);
        }
    }
    let single = |table: Table| {
        table
            .into_iter()
            .filter(|(_, pages)| pages.len() == 1)
            .filter_map(|(name, pages)| Some((name, pages.into_values().next()?)))
            .collect()
    };
    Links {
        defs: single(defs),
        types: single(types),
        modules: HashMap::new(),
    }
}

/// The names module `p` sees, as the type checker resolves them, over the unique names.
fn links(units: &[Unit], placed: &BTreeMap<String, Placed>, unique: &Links, p: &Placed) -> Links {
    let fe = &units[p.unit].frontend;
    let mut links = Links {
        defs: unique.defs.clone(),
        types: unique.types.clone(),
        modules: placed
            .values()
            .map(|q| {
                let title = module_title(&units[q.unit].frontend, q.module);
                (title, format!("{}.html", q.page))
            })
            .collect(),
    };
    let module = &fe.program.modules[p.module];
    for m in module.imports.iter().copied().chain([p.module]) {
        let Some(q) = placed.get(&module_key(fe, m)) else {
            continue;
        };
        let decls = &units[q.unit].frontend.program.modules[q.module].decls;
        for (i, anchor) in &q.anchors {
            let href = format!("{}.html#{anchor}", q.page);
            match &decls[*i] {
                Decl::Def(d) => links.defs.insert(d.name.name.clone(), href),
                Decl::TypeAlias(t) => links.types.insert(t.name.name.clone(), href),
                Decl::Import(_) => None,
            };
        }
    }
    links
}

fn module_doc(
    units: &[Unit],
    placed: &BTreeMap<String, Placed>,
    unique: &Links,
    p: &Placed,
) -> ModuleDoc {
    let fe = &units[p.unit].frontend;
    let module = &fe.program.modules[p.module];
    let title = module_title(fe, p.module);
    let location = |start: u32| {
        let (line, _) = fe.sources.line_col(module.file, start);
        format!(
            "{}:{line}",
            source_name(&title, fe.sources.get(module.file).path.is_none())
        )
    };
    let items = p
        .anchors
        .iter()
        .map(|(i, anchor)| match &module.decls[*i] {
            Decl::Def(d) => {
                let ty = fe.checked.def_types.get(&(p.module, *i));
                def_item(d, ty, anchor, location(d.span.start))
            }
            Decl::TypeAlias(t) => alias_item(t, anchor, location(t.span.start)),
            Decl::Import(_) => unreachable!("imports have no anchor"),
        })
        .collect();
    ModuleDoc {
        doc: module_comment(&fe.sources.get(module.file).text, module.file),
        page: p.page.clone(),
        links: links(units, placed, unique, p),
        title,
        items,
    }
}

/// The file name shown in locations: `lib/stats.og` for an embedded module, else the title.
fn source_name(title: &str, embedded: bool) -> String {
    if embedded {
        format!("{title}.og")
    } else {
        title.to_string()
    }
}

/// The doc comment at the top of a file that belongs to no declaration: before the first
/// token, and followed by a blank line, an `import` or the end of the file.
fn module_comment(text: &str, file: ogham_ir::source::FileId) -> Option<String> {
    let lexed = lexer::tokenize(file, text);
    let (end, doc) = lexed.docs.into_iter().next()?;
    let Some((next, token, _)) = lexed.tokens.first() else {
        return Some(doc);
    };
    let gap = text.get(end..*next)?;
    (*token == lexer::Tok::Import || gap.matches('\n').count() >= 2).then_some(doc)
}

pub(crate) fn def_item(def: &Def, ty: Option<&Type>, anchor: &str, location: String) -> Item {
    // Written type parameters; written sizes and the value parameters (`(n: i64)` can be a
    // size).
    let mut types = BTreeSet::new();
    let mut sizes = BTreeSet::new();
    for tp in &def.type_params {
        match tp {
            TypeParam::Size(n) => sizes.insert(n.name.clone()),
            TypeParam::Type(t) | TypeParam::Constrained(t, _) => types.insert(t.name.clone()),
        };
    }
    for p in &def.params {
        pattern_names(p, &mut sizes);
    }
    // The parameters' types and the result's, as the checker has them.
    let mut inferred: Vec<Option<&Type>> = Vec::new();
    let mut rest = ty;
    for _ in &def.params {
        match rest {
            Some(Type::Fun(a, b)) => {
                inferred.push(Some(a));
                rest = Some(b);
            }
            _ => {
                inferred.push(None);
                rest = None;
            }
        }
    }
    let mut used = Names::default();
    let mut params = String::new();
    for (p, t) in def.params.iter().zip(&inferred) {
        params.push(' ');
        match (p, t) {
            (Pattern::Ascribed(..), _) => params.push_str(&format!("({})", print::pattern(p))),
            (p, None) => params.push_str(&print::pattern(p)),
            (p, Some(t)) => {
                used.collect(t);
                params.push_str(&format!("({}: {t})", print::pattern(p)));
            }
        }
    }
    let ret = match (&def.ret, rest) {
        (Some(t), _) => format!(" : {}", print::type_exp(t)),
        (None, Some(t)) => {
            used.collect(t);
            format!(" : {t}")
        }
        (None, None) => String::new(),
    };
    // Type and size parameters that only inference introduced, after the written ones.
    let mut type_params = print::type_param_list(&def.type_params);
    for name in used.params.difference(&types) {
        type_params.push_str(&format!(" '{name}"));
    }
    for name in used.sizes.difference(&sizes) {
        type_params.push_str(&format!(" [{name}]"));
    }
    let locals = types
        .into_iter()
        .chain(sizes)
        .chain(used.params)
        .chain(used.sizes)
        .collect();
    Item {
        kind: if def.entry {
            ItemKind::Entry
        } else {
            ItemKind::Def
        },
        name: def.name.name.clone(),
        anchor: anchor.to_string(),
        attrs: def.attrs.iter().map(|a| format!("#[{}]", a.name)).collect(),
        signature: format!("{type_params}{params}{ret}"),
        doc: def.doc.clone(),
        location,
        locals,
    }
}

pub(crate) fn alias_item(alias: &TypeAlias, anchor: &str, location: String) -> Item {
    let locals = alias
        .params
        .iter()
        .map(|tp| match tp {
            TypeParam::Size(n) | TypeParam::Type(n) | TypeParam::Constrained(n, _) => {
                n.name.clone()
            }
        })
        .collect();
    Item {
        kind: ItemKind::Type,
        name: alias.name.name.clone(),
        anchor: anchor.to_string(),
        attrs: Vec::new(),
        signature: format!(
            "{} = {}",
            print::type_param_list(&alias.params),
            print::type_exp(&alias.body)
        ),
        doc: alias.doc.clone(),
        location,
        locals,
    }
}

/// The names a pattern binds.
fn pattern_names(p: &Pattern, out: &mut BTreeSet<String>) {
    match p {
        Pattern::Var(i) => {
            out.insert(i.name.clone());
        }
        Pattern::Wildcard(_) => {}
        Pattern::Tuple(ps, _) => ps.iter().for_each(|p| pattern_names(p, out)),
        Pattern::Record(fs, _) => fs.iter().for_each(|(_, p)| pattern_names(p, out)),
        Pattern::Ascribed(p, _, _) => pattern_names(p, out),
    }
}

/// Type parameters and named sizes of inferred types.
#[derive(Default)]
struct Names {
    params: BTreeSet<String>,
    sizes: BTreeSet<String>,
}

impl Names {
    fn collect(&mut self, t: &Type) {
        match t {
            Type::Prim(_) | Type::Var(_) => {}
            Type::Array(elem, size) => {
                if let Size::Var(n) = size {
                    self.sizes.insert(n.clone());
                }
                self.collect(elem);
            }
            Type::Tuple(ts) => ts.iter().for_each(|t| self.collect(t)),
            Type::Record(fs) => fs.iter().for_each(|(_, t)| self.collect(t)),
            Type::Fun(a, b) => {
                self.collect(a);
                self.collect(b);
            }
            Type::Param(p) => {
                self.params.insert(p.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_plain_file_names() {
        assert_eq!(page_name("lib/stats"), "stats");
        assert_eq!(page_name("my lib/a#b?.og"), "a_b_");
        assert_eq!(page_name("x.y.og"), "x.y");
    }

    #[test]
    fn repeated_names_get_distinct_anchors() {
        let mut sources = ogham_ir::source::SourceMap::new();
        let text = "def f = 1\ntype t = i64\ndef f = 2\ndef g = 3\n";
        let program =
            ogham_compiler::loader::load_source(&mut sources, "x.og", text).expect("parses");
        let anchors: Vec<String> = anchors(&program.root().decls).into_values().collect();
        assert_eq!(anchors, ["def-f", "type-t", "def-f-2", "def-g"]);
    }
}
