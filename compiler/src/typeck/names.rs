//! Name resolution: variables (locals, definitions, built-ins), written types and sizes,
//! type aliases, instantiation of schemes, and "did you mean" suggestions.

use super::unify::{Sz, Ty};
use super::{Alias, AliasParam, Checker, Local, Resolution, Scheme};
use crate::builtins;
use crate::syntax::ast::{
    Expr, ExprId, Ident, QualName, SizeExp, TypeAlias, TypeArg, TypeExp, TypeParam,
};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use std::collections::HashMap;
use std::rc::Rc;

/// The type of one use of a name, with the size variables that stand for the *values* of some
/// of its arguments (`iota n : [n]i64`): `(argument index, size)`.
pub(super) struct Instance {
    pub(super) ty: Ty,
    pub(super) deps: Vec<(usize, Sz)>,
}

impl From<Ty> for Instance {
    fn from(ty: Ty) -> Instance {
        Instance {
            ty,
            deps: Vec::new(),
        }
    }
}

impl Checker<'_> {
    /// Resolves the variable expression `e` (named `name`), recording its resolution.
    pub(super) fn lookup_var(&mut self, e: &Expr, name: &QualName) -> Instance {
        if name.qualifier.is_none() {
            if let Some(local) = self.locals.iter().rev().find(|l| l.name == name.name) {
                let local = local.clone();
                self.resolutions[e.id.0 as usize] = Some(Resolution::Local);
                self.uses.insert(e.id, local.id);
                return match &local.scheme {
                    Some(s) => self.instantiate(s, e.id),
                    None => local.ty.into(),
                };
            }
            if let Some(&(module, decl)) = self.globals.get(&name.name) {
                self.resolutions[e.id.0 as usize] = Some(Resolution::Def { module, decl });
                let scheme = Rc::clone(&self.schemes[&(module, decl)]);
                return self.instantiate(&scheme, e.id);
            }
        }
        if let Some(b) = builtins::resolve(name) {
            self.resolutions[e.id.0 as usize] = Some(Resolution::Builtin(b));
            return self.builtin_instance(b, e.span);
        }
        if let Some(q) = &name.qualifier
            && let Some(to) = PrimType::from_name(q)
            && self.type_params.contains(&name.name)
            && self.subst.param_classes.contains_key(&name.name)
        {
            // `f64.t x`: a conversion from a type parameter.
            let b = builtins::Builtin::Generic(builtins::GenericFn::Convert);
            self.resolutions[e.id.0 as usize] = Some(Resolution::Builtin(b));
            return Ty::fun(Ty::Param(name.name.clone()), Ty::Prim(to)).into();
        }
        let d = match &name.qualifier {
            None if self.current_def.as_deref() == Some(name.name.as_str()) => {
                Diagnostic::error("E0209", format!("`{}` cannot refer to itself", name.name))
                    .with_primary(e.span, "recursive use")
                    .with_note(
                        "Ogham has no recursion: a definition sees only the definitions before it",
                    )
                    .with_help("write the repetition as a `loop`")
            }
            None => self.unknown_name(e.span, &name.name),
            Some(q) => match PrimType::from_name(q) {
                Some(ty) => {
                    let members = builtins::module_member_names(ty);
                    let d =
                        Diagnostic::error("E0208", format!("`{q}` has no member `{}`", name.name))
                            .with_primary(e.span, "not a built-in");
                    match suggest(&name.name, members.iter().map(String::as_str)) {
                        Some(s) => d.with_help(format!("did you mean `{q}.{s}`?")),
                        None => d,
                    }
                }
                None => Diagnostic::error("E0208", format!("unknown module `{q}`"))
                    .with_primary(e.span, "not a numeric module")
                    .with_help("qualified names start with a primitive type, e.g. `f32.sqrt`"),
            },
        };
        self.error(d);
        Ty::Error.into()
    }

    /// E0204 for the unqualified name `name` at `span`, with a help: the library module that
    /// defines it (or its generic form) if that is not imported, else a library definition
    /// named after it (`median` → `median_prefix`), else a close name in scope.
    fn unknown_name(&self, span: Span, name: &str) -> Diagnostic {
        let candidates: Vec<String> = self
            .locals
            .iter()
            .map(|l| l.name.clone())
            .chain(self.globals.keys().cloned())
            .chain(builtins::plain_names().map(str::to_string))
            .collect();
        let close = suggest(name, candidates.iter().map(String::as_str));
        let d = Diagnostic::error("E0204", format!("cannot find `{name}` in this scope"))
            .with_primary(span, "not found");
        match (library_home(name), library_relative(name), close) {
            (Some((def, module)), ..) if self.globals.contains_key(&def) => d
                .with_help(format!(
                    "the library's `{def}` serves every type of its class"
                ))
                .with_note(format!("`{def}` is in `{module}`")),
            (Some((def, module)), ..) => d.with_help(format!(
                "`{def}` is defined in `{module}`: add `import \"{module}\"`"
            )),
            (None, Some((def, _)), _) if self.globals.contains_key(&def) => {
                d.with_help(format!("did you mean `{def}`?"))
            }
            (None, Some((def, module)), close) => {
                let or = close.map_or(String::new(), |s| format!(" (or did you mean `{s}`?)"));
                d.with_help(format!(
                    "`{module}` defines `{def}`: add `import \"{module}\"` to use it{or}"
                ))
            }
            (None, None, Some(s)) => d.with_help(format!("did you mean `{s}`?")),
            (None, None, None) => d,
        }
    }

    /// A fresh instance of a scheme at use `id`: type parameters and sizes replaced by fresh
    /// variables (a constrained type parameter's variable keeps its class); the type
    /// parameters' values are recorded for [`super::Checked::instantiations`].
    pub(super) fn instantiate(&mut self, scheme: &Scheme, id: ExprId) -> Instance {
        let types: HashMap<String, Ty> = scheme
            .tparams
            .iter()
            .map(|(p, class)| {
                let constraint = match class {
                    Some(set) => super::Constraint::Prims(*set),
                    None => super::Constraint::None,
                };
                (p.clone(), self.subst.fresh(constraint, Span::default()))
            })
            .collect();
        if !types.is_empty() {
            let args = types.iter().map(|(p, t)| (p.clone(), t.clone())).collect();
            self.def_instantiations.push((id, args));
        }
        let mut sizes = HashMap::new();
        let mut deps = Vec::new();
        for &id in &scheme.existentials {
            sizes.insert(id, self.subst.fresh_unknown());
        }
        for &(id, param) in &scheme.sparams {
            let s = self.subst.fresh_size();
            sizes.insert(id, s);
            if let Some(i) = param {
                deps.push((i, s));
            }
        }
        let ty = substitute(&self.subst.resolve(&scheme.ty), &types, &sizes);
        Instance { ty, deps }
    }

    /// Adds a local variable; returns its binding id. `size` is what the variable denotes when
    /// used as a size (`None`: a size of its own, named after it).
    pub(super) fn bind_local(&mut self, ident: &Ident, ty: Ty, size: Option<Sz>) -> u32 {
        let id = self.subst.new_binding(&ident.name);
        self.binders.insert(ident.span, id);
        self.locals.push(Local {
            name: ident.name.clone(),
            id,
            ty,
            scheme: None,
            size: size.unwrap_or(Sz::Rigid(id)),
        });
        id
    }

    /// The type a written type denotes (uniqueness marks `*` are dropped: see `uniqueness`).
    pub(super) fn convert_type(&mut self, t: &TypeExp) -> Ty {
        match t {
            TypeExp::Prim(p, _) => Ty::Prim(*p),
            TypeExp::Array(size, elem, _) => {
                let s = self.convert_size(size);
                Ty::array(self.convert_type(elem), s)
            }
            TypeExp::Tuple(ts, _) => Ty::Tuple(ts.iter().map(|t| self.convert_type(t)).collect()),
            TypeExp::Record(fields, _) => {
                let typed: Vec<(&Ident, Ty)> = fields
                    .iter()
                    .map(|(name, t)| (name, self.convert_type(t)))
                    .collect();
                self.record_type(typed)
            }
            TypeExp::Arrow(a, b, _) => {
                let a = self.convert_type(a);
                Ty::fun(a, self.convert_type(b))
            }
            TypeExp::Unique(t, _) => self.convert_type(t),
            TypeExp::Name(name, args, span) => self.convert_named_type(name, args, *span),
        }
    }

    fn convert_named_type(&mut self, name: &Ident, args: &[TypeArg], span: Span) -> Ty {
        if self.type_params.contains(&name.name) {
            if !args.is_empty() {
                self.error(
                    Diagnostic::error(
                        "E0310",
                        format!("type parameter `{}` takes no arguments", name.name),
                    )
                    .with_primary(span, "applied to arguments"),
                );
            }
            return Ty::Param(name.name.clone());
        }
        let Some(key) = self.type_aliases.get(&name.name).copied() else {
            let candidates: Vec<String> = self
                .type_params
                .iter()
                .cloned()
                .chain(self.type_aliases.keys().cloned())
                .chain(PrimType::ALL.iter().map(|p| p.name().to_string()))
                .collect();
            let d = Diagnostic::error("E0205", format!("unknown type `{}`", name.name))
                .with_primary(name.span, "not a type in scope");
            let d = match suggest(&name.name, candidates.iter().map(String::as_str)) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None => d.with_help(
                    "type parameters must be declared as `'a` after the definition's name",
                ),
            };
            self.error(d);
            return Ty::Error;
        };
        let alias = Rc::clone(&self.aliases[&key]);
        let arity_ok = alias.params.len() == args.len()
            && alias.params.iter().zip(args).all(|(p, a)| {
                matches!(
                    (p, a),
                    (AliasParam::Type(_), TypeArg::Type(_))
                        | (AliasParam::Size(_), TypeArg::Size(_))
                )
            });
        if !arity_ok {
            let wanted: Vec<String> = alias
                .params
                .iter()
                .map(|p| match p {
                    AliasParam::Type(n) => format!("a type for `{n}`"),
                    AliasParam::Size(id) => {
                        format!("a size for `{}`", self.subst.rigid_names[*id as usize])
                    }
                })
                .collect();
            let wanted = if wanted.is_empty() {
                "no arguments".to_string()
            } else {
                wanted.join(", ")
            };
            self.error(
                Diagnostic::error("E0310", format!("wrong arguments for type `{}`", name.name))
                    .with_primary(span, format!("expected {wanted}")),
            );
            return Ty::Error;
        }
        let mut types = HashMap::new();
        let mut sizes: HashMap<u32, Sz> = alias
            .anonymous
            .iter()
            .map(|id| (*id, self.subst.fresh_size()))
            .collect();
        for (p, a) in alias.params.iter().zip(args) {
            match (p, a) {
                (AliasParam::Type(n), TypeArg::Type(t)) => {
                    let t = self.convert_type(t);
                    types.insert(n.clone(), t);
                }
                (AliasParam::Size(id), TypeArg::Size(s)) => {
                    let s = self.convert_size(s);
                    sizes.insert(*id, s);
                }
                _ => {}
            }
        }
        substitute(&alias.ty, &types, &sizes)
    }

    /// The size a written size denotes: a constant, `[]` (unknown), or a variable in scope.
    pub(super) fn convert_size(&mut self, s: &SizeExp) -> Sz {
        match s {
            SizeExp::Const(n, _) => Sz::Const(*n),
            SizeExp::Any(_) => self.subst.fresh_size(),
            SizeExp::Named(name) => match self.locals.iter().rev().find(|l| l.name == name.name) {
                Some(local) => {
                    let (ty, size) = (local.ty.clone(), local.size);
                    if self.subst.unify(&Ty::Prim(PrimType::I64), &ty).is_err() {
                        let shown = self.subst.show(&ty);
                        self.error(
                            Diagnostic::error(
                                "E0403",
                                format!("size `{}` is not an `i64`", name.name),
                            )
                            .with_primary(name.span, format!("`{}` has type `{shown}`", name.name))
                            .with_note("sizes are `i64` values"),
                        );
                    }
                    size
                }
                None => {
                    self.error(
                        Diagnostic::error("E0402", format!("unknown size `{}`", name.name))
                            .with_primary(name.span, "no size parameter or variable of this name in scope")
                            .with_help(format!(
                                "declare it as a size parameter after the definition's name: `[{}]`",
                                name.name
                            )),
                    );
                    self.subst.fresh_unknown()
                }
            },
        }
    }

    /// The rigid sizes in a function's type that name variables of its body (`let k = ... in
    /// iota k`): outside, they are unknown sizes, fresh at each use.
    pub(super) fn escaping_sizes(&self, scheme: &Scheme) -> Vec<u32> {
        let mut out = Vec::new();
        rigid_sizes(&self.subst.resolve(&scheme.ty), &mut out);
        out.retain(|id| {
            !scheme.sparams.iter().any(|(s, _)| s == id)
                && !self.locals.iter().any(|l| l.size == Sz::Rigid(*id))
        });
        out
    }

    /// Turns the unbound size variables of `ty` (except `exclude`) into anonymous rigid sizes,
    /// instantiated afresh at each use; returns their ids.
    pub(super) fn generalize_sizes(&mut self, ty: &Ty, exclude: &[u32]) -> Vec<u32> {
        let mut vars = Vec::new();
        self.subst.free_size_vars(ty, &mut vars);
        let mut ids = Vec::new();
        for v in vars.into_iter().filter(|v| !exclude.contains(v)) {
            let id = self.subst.fresh_anonymous();
            self.subst.set_size(v, Sz::Rigid(id));
            ids.push(id);
        }
        ids
    }

    pub(super) fn check_alias(&mut self, alias: &TypeAlias) -> Alias {
        let (mark, tmark) = (self.locals.len(), self.type_params.len());
        let mut params = Vec::new();
        for p in &alias.params {
            match p {
                TypeParam::Type(id) => {
                    self.type_params.push(id.name.clone());
                    params.push(AliasParam::Type(id.name.clone()));
                }
                TypeParam::Constrained(id, class) => {
                    self.error(
                        Diagnostic::error(
                            "E0312",
                            format!("type alias parameter `{}` cannot have a class", id.name),
                        )
                        .with_primary(class.span, "classes constrain definitions' parameters")
                        .with_help(format!("write `'{}`", id.name)),
                    );
                    self.type_params.push(id.name.clone());
                    params.push(AliasParam::Type(id.name.clone()));
                }
                TypeParam::Size(id) => {
                    let b = self.bind_local(id, Ty::Prim(PrimType::I64), None);
                    params.push(AliasParam::Size(b));
                }
            }
        }
        let ty = self.convert_type(&alias.body);
        self.locals.truncate(mark);
        self.type_params.truncate(tmark);
        let anonymous = self.generalize_sizes(&ty, &[]);
        let ty = self.subst.resolve(&ty);
        Alias {
            params,
            anonymous,
            ty,
        }
    }
}

/// `t` with type parameters and rigid sizes replaced (variables must already be resolved).
pub(super) fn substitute(t: &Ty, types: &HashMap<String, Ty>, sizes: &HashMap<u32, Sz>) -> Ty {
    match t {
        Ty::Param(p) => types.get(p).cloned().unwrap_or_else(|| t.clone()),
        Ty::Array(e, s) => {
            let s = match s {
                Sz::Rigid(id) => sizes.get(id).copied().unwrap_or(*s),
                s => *s,
            };
            Ty::array(substitute(e, types, sizes), s)
        }
        Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| substitute(t, types, sizes)).collect()),
        Ty::Record(fs) => Ty::Record(
            fs.iter()
                .map(|(n, t)| (n.clone(), substitute(t, types, sizes)))
                .collect(),
        ),
        Ty::Fun(a, b) => Ty::fun(substitute(a, types, sizes), substitute(b, types, sizes)),
        Ty::Prim(_) | Ty::Var(_) | Ty::Error => t.clone(),
    }
}

/// The rigid sizes occurring in a resolved type.
fn rigid_sizes(t: &Ty, out: &mut Vec<u32>) {
    match t {
        Ty::Array(e, s) => {
            if let Sz::Rigid(id) = s
                && !out.contains(id)
            {
                out.push(*id);
            }
            rigid_sizes(e, out);
        }
        Ty::Tuple(ts) => ts.iter().for_each(|t| rigid_sizes(t, out)),
        Ty::Record(fs) => fs.iter().for_each(|(_, t)| rigid_sizes(t, out)),
        Ty::Fun(a, b) => {
            rigid_sizes(a, out);
            rigid_sizes(b, out);
        }
        Ty::Prim(_) | Ty::Param(_) | Ty::Var(_) | Ty::Error => {}
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo.
pub(super) fn suggest<'n>(name: &str, candidates: impl Iterator<Item = &'n str>) -> Option<String> {
    let limit = match name.chars().count() {
        0..=2 => return None,
        n => (n / 3).max(1),
    };
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.to_string())
}

/// Edit distance (insertions, deletions, substitutions and transpositions of neighbours).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The standard library module defining `name`, or the generic definition that replaced a
/// per-type name (`count_valid_f32` → `count_valid`): `(definition, module)`.
fn library_home(name: &str) -> Option<(String, &'static str)> {
    let generic = ["_f32", "_f64", "_i32", "_i64"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix));
    [Some(name), generic].into_iter().flatten().find_map(|n| {
        crate::stdlib::MODULES
            .iter()
            .find(|(_, text)| {
                text.lines().any(|l| {
                    l.strip_prefix("def ")
                        .and_then(|rest| rest.strip_prefix(n))
                        .is_some_and(|rest| rest.starts_with(' '))
                })
            })
            .map(|(module, _)| (n.to_string(), *module))
    })
}

/// A library definition named after `name`, which no module defines: one whose name starts with
/// `name_` (`median_prefix` for `median`), and its module.
fn library_relative(name: &str) -> Option<(String, &'static str)> {
    let prefix = format!("{name}_");
    crate::stdlib::MODULES.iter().find_map(|(module, text)| {
        text.lines().find_map(|l| {
            let def = l.strip_prefix("def ")?.split(' ').next()?;
            def.starts_with(&prefix).then(|| (def.to_string(), *module))
        })
    })
}

/// `E0404` for each size parameter of `def` that no parameter's written type determines: one
/// that appears only in the result type or the body has no value when the function is called
/// (as in Futhark, a size inside a function-typed parameter does not count either).
pub(super) fn undetermined_size_params(def: &crate::syntax::ast::Def) -> Vec<Diagnostic> {
    let mut determined = Vec::new();
    for param in &def.params {
        param_sizes(param, &mut determined);
    }
    def.type_params
        .iter()
        .filter_map(|p| match p {
            TypeParam::Size(n) if !determined.contains(&n.name.as_str()) => Some(
                Diagnostic::error(
                    "E0404",
                    format!(
                        "size parameter `{}` is not the size of any parameter",
                        n.name
                    ),
                )
                .with_primary(n.span, "no argument gives it a value")
                .with_help(format!(
                    "use `{0}` in a parameter's type (`(xs: [{0}]f32)`), or take it as a value: \
                     `({0}: i64)`",
                    n.name
                )),
            ),
            _ => None,
        })
        .collect()
}

/// The size names in the written types of a parameter pattern, outside function types.
fn param_sizes<'a>(p: &'a crate::syntax::ast::Pattern, out: &mut Vec<&'a str>) {
    use crate::syntax::ast::Pattern;
    match p {
        Pattern::Var(_) | Pattern::Wildcard(_) => {}
        Pattern::Tuple(ps, _) => ps.iter().for_each(|p| param_sizes(p, out)),
        Pattern::Record(fs, _) => fs.iter().for_each(|(_, p)| param_sizes(p, out)),
        Pattern::Ascribed(p, t, _) => {
            param_sizes(p, out);
            type_sizes(t, out);
        }
    }
}

fn type_sizes<'a>(t: &'a TypeExp, out: &mut Vec<&'a str>) {
    match t {
        TypeExp::Prim(..) | TypeExp::Arrow(..) => {}
        TypeExp::Array(size, elem, _) => {
            if let SizeExp::Named(n) = size {
                out.push(&n.name);
            }
            type_sizes(elem, out);
        }
        TypeExp::Tuple(ts, _) => ts.iter().for_each(|t| type_sizes(t, out)),
        TypeExp::Record(fs, _) => fs.iter().for_each(|(_, t)| type_sizes(t, out)),
        TypeExp::Name(_, args, _) => args.iter().for_each(|a| match a {
            TypeArg::Size(SizeExp::Named(n)) => out.push(&n.name),
            TypeArg::Size(_) => {}
            TypeArg::Type(t) => type_sizes(t, out),
        }),
        TypeExp::Unique(t, _) => type_sizes(t, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_pick_close_names() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            suggest("mpa", ["map", "iota"].into_iter()),
            Some("map".into())
        );
        assert_eq!(suggest("xyzzy", ["map", "iota"].into_iter()), None);
    }

    #[test]
    fn library_names() {
        assert_eq!(library_home("median"), Some(("median".into(), "lib/stats")));
        assert_eq!(library_home("sum_f32"), Some(("sum".into(), "lib/prelude")));
        assert_eq!(
            library_relative("kth"),
            Some(("kth_smallest".into(), "lib/stats"))
        );
        assert_eq!(library_relative("xyzzy"), None);
    }
}
