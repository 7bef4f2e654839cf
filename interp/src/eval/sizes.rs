//! Size parameters and size checks: binding `[n]` parameters from argument shapes, matching
//! type expressions (through type aliases) against values, and the checks of `:>`.
//!
//! Invariants: every occurrence of a size must agree (a disagreement is a run-time size error,
//! not an internal one); alias expansion is bounded by `MAX_ALIAS_DEPTH`.

use super::super::value::{Array, Env, Val};
use super::{Interp, as_int, shape_text};
use ogham_compiler::syntax::ast::{Decl, Pattern, SizeExp, TypeArg, TypeExp, TypeParam};
use ogham_ir::source::Span;
use ogham_runtime::error::{R_COERCE, R_SIZE, Res, error};
use ogham_runtime::value::Scalar;

/// The type-alias arguments in force while matching a type expression against a value:
/// alias parameter names bound to the arguments of the alias use, which are interpreted in the
/// enclosing scope.
struct AliasScope<'s, 'a> {
    module: usize,
    args: Vec<(&'a str, &'a TypeArg)>,
    parent: Option<&'s AliasScope<'s, 'a>>,
}

/// Nesting limit for type alias expansion (aliases cannot be recursive; this only guards
/// against a program the checker should have rejected).
const MAX_ALIAS_DEPTH: usize = 64;

impl<'a> Interp<'a> {
    /// Binds the size parameters `[n]` of a definition from the shapes of its arguments,
    /// checking that every occurrence of a size agrees.
    pub(super) fn bind_size_params(
        &self,
        type_params: &'a [TypeParam],
        params: &'a [Pattern],
        args: &[Val<'a>],
        module: usize,
        mut env: Env<'a>,
        span: Span,
    ) -> Res<Env<'a>> {
        let scope = AliasScope {
            module,
            args: Vec::new(),
            parent: None,
        };
        let mut found = Vec::new();
        for (p, a) in params.iter().zip(args) {
            self.pattern_sizes(p, &scope, a, &mut found);
        }
        for tp in type_params {
            let TypeParam::Size(n) = tp else { continue };
            let mut value: Option<(usize, &SizeExp)> = None;
            for (size, actual) in &found {
                if !matches!(size, SizeExp::Named(id) if id.name == n.name) {
                    continue;
                }
                match value {
                    None => value = Some((*actual, size)),
                    Some((v, _)) if v == *actual => {}
                    Some((v, _)) => {
                        return Err(Box::new(
                            error(
                                R_SIZE,
                                span,
                                format!(
                                    "size `{}` is {v} in one argument and {actual} in another",
                                    n.name
                                ),
                            )
                            .with_secondary(n.span, "size parameter declared here"),
                        ));
                    }
                }
            }
            if let Some((v, _)) = value {
                env = env.bind(&n.name, Val::Prim(Scalar::I64(v as i64)));
            }
        }
        Ok(env)
    }

    fn pattern_sizes(
        &self,
        pat: &'a Pattern,
        scope: &AliasScope<'_, 'a>,
        v: &Val<'a>,
        out: &mut Vec<(&'a SizeExp, usize)>,
    ) {
        match (pat, v) {
            (Pattern::Ascribed(p, t, _), v) => {
                self.type_sizes(t, scope, v, out, 0);
                self.pattern_sizes(p, scope, v, out);
            }
            (Pattern::Tuple(ps, _), Val::Tuple(vs)) => {
                for (p, v) in ps.iter().zip(vs.iter()) {
                    self.pattern_sizes(p, scope, v, out);
                }
            }
            (Pattern::Record(fs, _), Val::Record(vs)) => {
                for (name, p) in fs {
                    if let Some((_, v)) = vs.iter().find(|(n, _)| *n == name.name) {
                        self.pattern_sizes(p, scope, v, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Collects `(size, actual length)` for every array dimension of type `t` that `v` has.
    fn type_sizes(
        &self,
        t: &'a TypeExp,
        scope: &AliasScope<'_, 'a>,
        v: &Val<'a>,
        out: &mut Vec<(&'a SizeExp, usize)>,
        depth: usize,
    ) {
        match (t, v) {
            (TypeExp::Unique(t, _), v) => self.type_sizes(t, scope, v, out, depth),
            (TypeExp::Array(..), Val::Array(a)) => self.dim_sizes(t, scope, a, 0, out, depth),
            (TypeExp::Tuple(ts, _), Val::Tuple(vs)) => {
                for (t, v) in ts.iter().zip(vs.iter()) {
                    self.type_sizes(t, scope, v, out, depth);
                }
            }
            (TypeExp::Record(fs, _), Val::Record(vs)) => {
                for (name, t) in fs {
                    if let Some((_, v)) = vs.iter().find(|(n, _)| *n == name.name) {
                        self.type_sizes(t, scope, v, out, depth);
                    }
                }
            }
            (TypeExp::Name(name, args, _), v) if depth < MAX_ALIAS_DEPTH => {
                self.with_alias(name.name.as_str(), args, scope, |body, inner| {
                    self.type_sizes(body, inner, v, out, depth + 1)
                });
            }
            _ => {}
        }
    }

    fn dim_sizes(
        &self,
        t: &'a TypeExp,
        scope: &AliasScope<'_, 'a>,
        a: &Array<'a>,
        dim: usize,
        out: &mut Vec<(&'a SizeExp, usize)>,
        depth: usize,
    ) {
        match t {
            TypeExp::Unique(t, _) => self.dim_sizes(t, scope, a, dim, out, depth),
            TypeExp::Array(size, elem, _) if dim < a.rank() => {
                if let Some(size) = resolve_size(size, scope) {
                    out.push((size, a.shape()[dim]));
                }
                self.dim_sizes(elem, scope, a, dim + 1, out, depth);
            }
            TypeExp::Name(name, args, _) if depth < MAX_ALIAS_DEPTH => {
                self.with_alias(name.name.as_str(), args, scope, |body, inner| {
                    self.dim_sizes(body, inner, a, dim, out, depth + 1)
                });
            }
            t if dim == a.rank() && a.elem_count() > 0 => {
                self.type_sizes(t, scope, &a.elem(0), out, depth);
            }
            _ => {}
        }
    }

    /// Runs `k` on the body of type alias `name` (or on the type argument `name` stands for),
    /// in the scope that gives meaning to its names. Unknown names (type parameters) are
    /// skipped: they carry no sizes.
    fn with_alias(
        &self,
        name: &str,
        args: &'a [TypeArg],
        scope: &AliasScope<'_, 'a>,
        k: impl FnOnce(&'a TypeExp, &AliasScope<'_, 'a>),
    ) {
        if let Some((_, arg)) = scope.args.iter().find(|(n, _)| *n == name) {
            if let (TypeArg::Type(t), Some(parent)) = (arg, scope.parent) {
                k(t, parent);
            }
            return;
        }
        let Some((module, alias)) = self.find_alias(scope.module, name) else {
            return;
        };
        let inner = AliasScope {
            module,
            args: alias
                .params
                .iter()
                .zip(args)
                .map(|(p, a)| match p {
                    TypeParam::Size(n) | TypeParam::Type(n) | TypeParam::Constrained(n, _) => {
                        (n.name.as_str(), a)
                    }
                })
                .collect(),
            parent: Some(scope),
        };
        k(&alias.body, &inner);
    }

    fn find_alias(
        &self,
        module: usize,
        name: &str,
    ) -> Option<(usize, &'a ogham_compiler::syntax::ast::TypeAlias)> {
        let m = self.program.modules.get(module)?;
        let own = m.decls.iter().find_map(|d| match d {
            Decl::TypeAlias(a) if a.name.name == name => Some((module, a)),
            _ => None,
        });
        own.or_else(|| {
            m.imports.iter().rev().find_map(|&i| {
                self.program
                    .modules
                    .get(i)?
                    .decls
                    .iter()
                    .find_map(|d| match d {
                        Decl::TypeAlias(a) if a.name.name == name => Some((i, a)),
                        _ => None,
                    })
            })
        })
    }

    /// Checks `v :> t`: every constant or named size of `t` must equal the value's length in
    /// that dimension.
    pub(super) fn check_coercion(
        &self,
        v: &Val<'a>,
        t: &'a TypeExp,
        env: &Env<'a>,
        span: Span,
    ) -> Res<()> {
        let scope = AliasScope {
            module: self.module_of(span),
            args: Vec::new(),
            parent: None,
        };
        let mut found = Vec::new();
        self.type_sizes(t, &scope, v, &mut found, 0);
        for (size, actual) in found {
            let (expected, name) = match size {
                SizeExp::Const(n, _) => (*n as i64, n.to_string()),
                SizeExp::Named(id) => (
                    as_int(self.lookup(&id.name, env, id.span)?, id.span)?,
                    id.name.clone(),
                ),
                SizeExp::Any(_) => continue,
            };
            if expected != actual as i64 {
                let shape = match v {
                    Val::Array(a) => shape_text(a.shape()),
                    other => other.describe(),
                };
                let msg = if name == expected.to_string() {
                    format!("value of shape {shape} cannot be coerced to size {expected}")
                } else {
                    format!(
                        "value of shape {shape} cannot be coerced to size `{name}` = {expected}"
                    )
                };
                return Err(error(R_COERCE, span, msg));
            }
        }
        Ok(())
    }
}
/// The size a written size stands for once alias parameters are replaced by their arguments.
fn resolve_size<'a>(size: &'a SizeExp, scope: &AliasScope<'_, 'a>) -> Option<&'a SizeExp> {
    let SizeExp::Named(id) = size else {
        return Some(size);
    };
    match scope.args.iter().find(|(n, _)| *n == id.name) {
        Some((_, TypeArg::Size(s))) => resolve_size(s, scope.parent?),
        Some((_, TypeArg::Type(_))) => None,
        None => Some(size),
    }
}
