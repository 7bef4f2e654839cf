//! The types of the built-ins, instantiated afresh at every use: an array built-in's from its
//! scheme in the table (`crate::builtins`, `ArrayFn::signature`), a math function's, conversion's
//! or constant's from its numeric type. Sizes follow the scheme: `[]` results (`filter`,
//! `concat`, ...) are fresh unknown sizes; `iota n`, `replicate n`, `hist _ _ k`,
//! `unflatten n m` take the size of their result from the *value* of those arguments (`(n: i64)`
//! parameters; see `Checker::size_of`).

use super::Checker;
use super::names::Instance;
use super::unify::{Constraint, PrimSet, Sz, Ty};
use crate::builtins::{ArrayFn, Builtin, SigSize, SigTy};
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;

/// `a1 -> a2 -> ... -> r`
fn arrows(params: Vec<Ty>, result: Ty) -> Ty {
    params.into_iter().rev().fold(result, |r, p| Ty::fun(p, r))
}

impl Checker<'_> {
    pub(super) fn builtin_instance(&mut self, b: Builtin, span: Span) -> Instance {
        match b {
            Builtin::Array(f) => self.array_instance(f, span),
            Builtin::Math { op, ty } => {
                let t = match ty {
                    Some(p) => Ty::Prim(p),
                    None => {
                        let set = if op.float_only() {
                            PrimSet::float()
                        } else {
                            PrimSet::numeric()
                        };
                        self.subst.fresh(Constraint::Prims(set), span)
                    }
                };
                let result = if op.returns_bool() {
                    Ty::Prim(PrimType::Bool)
                } else {
                    t.clone()
                };
                arrows(vec![t; op.arity()], result).into()
            }
            Builtin::Convert { to, from } => Ty::fun(Ty::Prim(from), Ty::Prim(to)).into(),
            Builtin::Const { ty, .. } => Ty::Prim(ty).into(),
            // Typed where a type parameter's member is resolved (`Checker::param_member`,
            // `Checker::lookup_var`); `builtins::resolve` never yields one.
            Builtin::Generic(_) => Ty::Error.into(),
        }
    }

    /// The type of an array builtin: its scheme (`ArrayFn::signature`) with fresh element
    /// types and sizes for each use, created in the scheme's order (see `builtins::Scheme`);
    /// `deps` are the arguments that give a size of the result (`iota n`).
    fn array_instance(&mut self, f: ArrayFn, span: Span) -> Instance {
        let scheme = f.scheme();
        let mut sizes = vec![None; scheme.sizes];
        let mut vars = vec![None; scheme.type_vars];
        sizes[0] = Some(self.subst.fresh_size());
        vars[0] = Some(self.subst.fresh(Constraint::None, span));
        let mut fresh = Fresh { sizes, vars, span };
        let mut params = Vec::new();
        let mut deps = Vec::new();
        for (i, p) in scheme.params.iter().enumerate() {
            params.push(self.sig_ty(&p.ty, &mut fresh));
            if let Some(s) = p.size {
                deps.push((i, fresh.size(self, s)));
            }
        }
        let result = self.sig_ty(&scheme.result, &mut fresh);
        Instance {
            ty: arrows(params, result),
            deps,
        }
    }

    fn sig_ty(&mut self, t: &SigTy, fresh: &mut Fresh) -> Ty {
        match t {
            SigTy::Prim(p) => Ty::Prim(*p),
            SigTy::Var(v) => match &fresh.vars[*v] {
                Some(t) => t.clone(),
                None => {
                    let t = self.subst.fresh(Constraint::None, fresh.span);
                    fresh.vars[*v] = Some(t.clone());
                    t
                }
            },
            SigTy::Array(elem, size) => {
                let elem = self.sig_ty(elem, fresh);
                let size = match size {
                    SigSize::Var(s) => fresh.size(self, *s),
                    SigSize::Unknown => self.subst.fresh_unknown(),
                };
                Ty::array(elem, size)
            }
            SigTy::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.sig_ty(t, fresh)).collect()),
            SigTy::Fun(a, r) => {
                let a = self.sig_ty(a, fresh);
                Ty::fun(a, self.sig_ty(r, fresh))
            }
        }
    }
}

/// The variables of one instance of a scheme, created as they are first met.
struct Fresh {
    sizes: Vec<Option<Sz>>,
    vars: Vec<Option<Ty>>,
    span: Span,
}

impl Fresh {
    fn size(&mut self, c: &mut Checker<'_>, s: usize) -> Sz {
        *self.sizes[s].get_or_insert_with(|| c.subst.fresh_size())
    }
}
