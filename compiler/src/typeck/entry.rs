//! Entry points: an `entry` definition of the root module must be monomorphic (`E0601`) and
//! first order (`E0602`); its parameters' and results' types become an [`EntryPoint`], with the
//! field order of the records it returns as written in its result type.
//!
//! Invariants: runs on the definition's scheme once its body is checked; type aliases are
//! followed a bounded number of times, so an alias cycle (a checker error elsewhere) cannot
//! loop.

use super::unify::Ty;
use super::{Checker, EntryPoint, Scheme, contains_fun};
use crate::syntax::ast::{Decl, Def, Ident, Pattern, TypeExp};
use ogham_ir::diag::Diagnostic;

impl Checker<'_> {
    pub(super) fn check_entry(&mut self, index: usize, def: &Def, scheme: &Scheme) {
        if !scheme.tparams.is_empty() {
            let names: Vec<String> = scheme
                .tparams
                .iter()
                .map(|(p, _)| format!("`{p}`"))
                .collect();
            self.diags.push(
                Diagnostic::error(
                    "E0601",
                    format!("entry point `{}` is polymorphic", def.name.name),
                )
                .with_primary(
                    def.name.span,
                    format!("polymorphic over {}", names.join(", ")),
                )
                .with_help("give every parameter and the result a concrete type"),
            );
            return;
        }
        let mut ty = self.subst.resolve(&scheme.ty);
        let mut params = Vec::new();
        for p in &def.params {
            let Ty::Fun(a, r) = ty else { break };
            params.push((self.pattern_name(p), p.span(), *a));
            ty = *r;
        }
        let results = match ty {
            Ty::Tuple(ts) => ts,
            t => vec![t],
        };
        let mut bad = false;
        for (name, span, t) in &params {
            if contains_fun(t) {
                bad = true;
                self.diags.push(
                    Diagnostic::error(
                        "E0602",
                        format!("entry point parameter `{name}` is a function"),
                    )
                    .with_primary(*span, format!("has type `{}`", self.subst.show(t)))
                    .with_note(
                        "entry points take and return only arrays, scalars, tuples and records",
                    ),
                );
            }
        }
        if results.iter().any(contains_fun) {
            bad = true;
            let span = def.ret.as_ref().map_or(def.name.span, TypeExp::span);
            self.diags.push(
                Diagnostic::error(
                    "E0602",
                    format!("entry point `{}` returns a function", def.name.name),
                )
                .with_primary(span, "the result type contains a function")
                .with_note("entry points take and return only arrays, scalars, tuples and records"),
            );
        }
        if !bad {
            self.entries.push(EntryPoint {
                name: def.name.name.clone(),
                decl: index,
                params: params
                    .into_iter()
                    .map(|(n, _, t)| (n, self.subst.export(&t)))
                    .collect(),
                fields: self.declared_fields(def.ret.as_ref(), results.len()),
                results: results.iter().map(|t| self.subst.export(t)).collect(),
                span: def.span,
            });
        }
    }

    /// The declared field order of each of an entry's `count` results (see
    /// [`EntryPoint::fields`]), from its written return type `ret`: a tuple type gives one
    /// result per component; arrays and `*` are looked through, and type aliases followed to
    /// the record they name.
    fn declared_fields(&self, ret: Option<&TypeExp>, count: usize) -> Vec<Vec<String>> {
        // Aliases are followed by name in the root's scope, where an alias may be shadowed by a
        // later one of the same name (`type t = [3]t`): a bound on the expansions ends any
        // cycle that makes (the result then keeps the type's order).
        let mut fuel = self.aliases.len();
        let parts: Vec<&TypeExp> = match ret.map(|t| self.expand_alias(t, &mut fuel)) {
            Some(TypeExp::Tuple(ts, _)) if ts.len() == count && count != 1 => ts.iter().collect(),
            Some(t) => vec![t],
            None => Vec::new(),
        };
        let fields: Vec<Vec<String>> = parts
            .into_iter()
            .map(|t| match self.record_of(t, &mut fuel) {
                Some(fields) => fields.iter().map(|(name, _)| name.name.clone()).collect(),
                None => Vec::new(),
            })
            .collect();
        if fields.len() != count || fields.iter().all(Vec::is_empty) {
            return Vec::new();
        }
        fields
    }

    /// The fields of the record `t` is, or is an array of (aliases followed while `fuel`
    /// lasts).
    fn record_of<'t>(&'t self, t: &'t TypeExp, fuel: &mut usize) -> Option<&'t [(Ident, TypeExp)]> {
        match self.expand_alias(t, fuel) {
            TypeExp::Record(fields, _) => Some(fields),
            TypeExp::Array(_, elem, _) => self.record_of(elem, fuel),
            _ => None,
        }
    }

    /// `t` with `*` dropped and type aliases (without parameters: a parameterised alias's body
    /// is not looked into) replaced by their written bodies, each expansion taking one unit of
    /// `fuel` (none left: `t` as it is).
    fn expand_alias<'t>(&'t self, t: &'t TypeExp, fuel: &mut usize) -> &'t TypeExp {
        match t {
            TypeExp::Unique(inner, _) => self.expand_alias(inner, fuel),
            TypeExp::Name(name, args, _) if args.is_empty() && *fuel > 0 => {
                let alias = self
                    .type_aliases
                    .get(&name.name)
                    .and_then(|&(module, index)| {
                        match &self.program.modules[module].decls[index] {
                            Decl::TypeAlias(a) if a.params.is_empty() => Some(&a.body),
                            _ => None,
                        }
                    });
                *fuel -= 1;
                alias.map_or(t, |body| self.expand_alias(body, fuel))
            }
            _ => t,
        }
    }

    /// The name of a parameter: the variable, or the pattern's source text.
    fn pattern_name(&self, p: &Pattern) -> String {
        match p {
            Pattern::Var(id) => id.name.clone(),
            Pattern::Ascribed(inner, _, _) => self.pattern_name(inner),
            _ => {
                let span = p.span();
                let text = &self.sources.get(span.file).text;
                text.get(span.range()).unwrap_or("_").to_string()
            }
        }
    }
}
