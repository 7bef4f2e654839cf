//! The types of the built-ins (see `crate::builtins` and the language reference), instantiated
//! afresh at every use. Sizes follow the reference: `[]` results (`filter`, `concat`, ...) are
//! fresh unknown sizes; `iota n`, `replicate n`, `hist _ _ k`, `unflatten n m` take the size
//! of their result from the *value* of those arguments (see `Checker::size_of`).

use super::Checker;
use super::names::Instance;
use super::unify::{Constraint, PrimSet, Sz, Ty};
use crate::builtins::{ArrayFn, Builtin};
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;

/// Which arguments of a built-in are consumed (`*` parameters).
pub(super) fn builtin_consumes(b: Builtin) -> &'static [bool] {
    match b {
        Builtin::Array(ArrayFn::Scatter) | Builtin::Array(ArrayFn::ReduceByIndex) => &[true],
        _ => &[],
    }
}

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

    /// The type of an array builtin: fresh element types and sizes for each use; `deps` are the
    /// arguments that give a size of the result (`iota n`).
    fn array_instance(&mut self, f: ArrayFn, span: Span) -> Instance {
        let var = |c: &mut Checker<'_>| c.subst.fresh(Constraint::None, span);
        let i64 = Ty::Prim(PrimType::I64);
        let n = self.subst.fresh_size();
        let a = var(self);
        let op = Ty::fun(a.clone(), Ty::fun(a.clone(), a.clone()));
        let arr = |t: &Ty, s: Sz| Ty::array(t.clone(), s);
        let (ty, deps) = match f {
            ArrayFn::Map(k) => {
                let elems: Vec<Ty> = (0..k).map(|_| var(self)).collect();
                let b = var(self);
                let f = arrows(elems.clone(), b.clone());
                let mut params = vec![f];
                params.extend(elems.iter().map(|e| arr(e, n)));
                (arrows(params, arr(&b, n)), vec![])
            }
            ArrayFn::Reduce | ArrayFn::ReduceComm => {
                (arrows(vec![op, a.clone(), arr(&a, n)], a.clone()), vec![])
            }
            ArrayFn::Scan => (arrows(vec![op, a.clone(), arr(&a, n)], arr(&a, n)), vec![]),
            ArrayFn::Scatter => {
                let k = self.subst.fresh_size();
                let ty = arrows(vec![arr(&a, k), arr(&i64, n), arr(&a, n)], arr(&a, k));
                (ty, vec![])
            }
            ArrayFn::Hist => {
                let k = self.subst.fresh_size();
                let ty = arrows(
                    vec![op, a.clone(), i64.clone(), arr(&i64, n), arr(&a, n)],
                    arr(&a, k),
                );
                (ty, vec![(2, k)])
            }
            ArrayFn::ReduceByIndex => {
                let k = self.subst.fresh_size();
                let ty = arrows(
                    vec![arr(&a, k), op, a.clone(), arr(&i64, n), arr(&a, n)],
                    arr(&a, k),
                );
                (ty, vec![])
            }
            ArrayFn::Filter => {
                let p = Ty::fun(a.clone(), Ty::Prim(PrimType::Bool));
                let out = self.subst.fresh_unknown();
                (arrows(vec![p, arr(&a, n)], arr(&a, out)), vec![])
            }
            ArrayFn::Partition => {
                let p = Ty::fun(a.clone(), Ty::Prim(PrimType::Bool));
                let (o1, o2) = (self.subst.fresh_unknown(), self.subst.fresh_unknown());
                let out = Ty::Tuple(vec![arr(&a, o1), arr(&a, o2)]);
                (arrows(vec![p, arr(&a, n)], out), vec![])
            }
            ArrayFn::Iota => (Ty::fun(i64.clone(), arr(&i64, n)), vec![(0, n)]),
            ArrayFn::Replicate => (
                arrows(vec![i64.clone(), a.clone()], arr(&a, n)),
                vec![(0, n)],
            ),
            ArrayFn::Zip(k) => {
                let elems: Vec<Ty> = (0..k).map(|_| var(self)).collect();
                let params = elems.iter().map(|e| arr(e, n)).collect();
                (arrows(params, arr(&Ty::Tuple(elems), n)), vec![])
            }
            ArrayFn::Unzip(k) => {
                let elems: Vec<Ty> = (0..k).map(|_| var(self)).collect();
                let out = Ty::Tuple(elems.iter().map(|e| arr(e, n)).collect());
                (Ty::fun(arr(&Ty::Tuple(elems), n), out), vec![])
            }
            ArrayFn::Transpose => {
                let m = self.subst.fresh_size();
                (Ty::fun(arr(&arr(&a, m), n), arr(&arr(&a, n), m)), vec![])
            }
            ArrayFn::Flatten => {
                let m = self.subst.fresh_size();
                let out = self.subst.fresh_unknown();
                (Ty::fun(arr(&arr(&a, m), n), arr(&a, out)), vec![])
            }
            ArrayFn::Unflatten => {
                let (m, any) = (self.subst.fresh_size(), self.subst.fresh_size());
                let ty = arrows(
                    vec![i64.clone(), i64.clone(), arr(&a, any)],
                    arr(&arr(&a, m), n),
                );
                (ty, vec![(0, n), (1, m)])
            }
            ArrayFn::Concat => {
                let (m, out) = (self.subst.fresh_size(), self.subst.fresh_unknown());
                (arrows(vec![arr(&a, n), arr(&a, m)], arr(&a, out)), vec![])
            }
            ArrayFn::Reverse => (Ty::fun(arr(&a, n), arr(&a, n)), vec![]),
            ArrayFn::Length => (Ty::fun(arr(&a, n), i64.clone()), vec![]),
            ArrayFn::Rotate => (arrows(vec![i64.clone(), arr(&a, n)], arr(&a, n)), vec![]),
            ArrayFn::Copy => (Ty::fun(a.clone(), a), vec![]),
        };
        Instance { ty, deps }
    }
}
