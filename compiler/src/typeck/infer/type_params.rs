//! Constrained type parameters in expressions: `t.member` for a type parameter `t` declared
//! with a class (`num`, `int`, `float`), as for a primitive type's module.
//!
//! Invariants: a variable in scope named like the parameter shadows it; an unknown class is
//! reported once (E0312) and leaves the parameter unconstrained.

use super::BOOL;
use crate::builtins::{self, Builtin, GenericFn};
use crate::syntax::ast::{Expr, ExprKind, Ident};
use crate::typeck::unify::{PrimSet, Ty};
use crate::typeck::{Checker, Resolution};
use ogham_ir::diag::Diagnostic;
use ogham_ir::types::PrimType;

impl Checker<'_> {
    /// The class a constrained type parameter declares (`num`, `int`, `float`); an unknown
    /// class is reported (E0312) and leaves the parameter unconstrained.
    pub(super) fn class_of(&mut self, class: &Ident) -> Option<PrimSet> {
        let set = PrimSet::class(&class.name);
        if set.is_none() {
            let d = Diagnostic::error("E0312", format!("unknown type class `{}`", class.name))
                .with_primary(class.span, "not a class")
                .with_help(
                    "the classes are `num` (every numeric type), `int` (the integer types) and \
                     `float` (`f32`, `f64`)",
                );
            self.error(d);
        }
        set
    }

    /// The constrained type parameter `t` that `inner` names in `t.member`, unless a variable
    /// of that name is in scope.
    pub(super) fn param_module(&self, inner: &Expr) -> Option<String> {
        let ExprKind::Var(name) = &inner.kind else {
            return None;
        };
        let n = &name.name;
        let is_param = name.qualifier.is_none()
            && self.type_params.contains(n)
            && self.subst.param_classes.contains_key(n);
        let shadowed = self.locals.iter().any(|l| l.name == *n) || self.globals.contains_key(n);
        (is_param && !shadowed).then(|| n.clone())
    }

    /// `t.member` for a constrained type parameter `t`: a conversion to `t` (`t.i64`, `t.u`),
    /// a math function (`t.sqrt`) or a constant (`t.nan`), as for a primitive type's module.
    pub(super) fn param_member(&mut self, e: &Expr, param: String, member: &Ident) -> Ty {
        let class = self.subst.param_classes[&param];
        let t = Ty::Param(param.clone());
        let from = if let Some(p) = PrimType::from_name(&member.name) {
            Some(Ty::Prim(p))
        } else if self.subst.param_classes.contains_key(&member.name)
            && self.type_params.contains(&member.name)
        {
            Some(Ty::Param(member.name.clone()))
        } else {
            None
        };
        let (builtin, ty, float_only) = match (from, builtins::module_member(&member.name)) {
            (Some(from), _) => (
                Builtin::Generic(GenericFn::Convert),
                Ty::fun(from, t.clone()),
                false,
            ),
            (None, Some(Ok(op))) => {
                let result = if op.returns_bool() { BOOL } else { t.clone() };
                let ty = (0..op.arity()).fold(result, |r, _| Ty::fun(t.clone(), r));
                (Builtin::Math { op, ty: None }, ty, op.float_only())
            }
            (None, Some(Err(op))) => (
                Builtin::Generic(GenericFn::Const(op)),
                t.clone(),
                op.float_only(),
            ),
            (None, None) => {
                let d = Diagnostic::error(
                    "E0208",
                    format!("`{param}` has no member `{}`", member.name),
                )
                .with_primary(member.span, "not a built-in")
                .with_help(format!(
                    "a type parameter's module has the members of `f32`'s: conversions \
                     (`{param}.i64`), math functions (`{param}.sqrt`) and constants \
                     (`{param}.nan`)"
                ));
                self.error(d);
                return Ty::Error;
            }
        };
        if float_only && !class.is_subset(PrimSet::float()) {
            let d = Diagnostic::error(
                "E0308",
                format!(
                    "`{param}.{}` needs a floating-point type, found `{param}`",
                    member.name
                ),
            )
            .with_primary(e.span, format!("`{param}` may be an integer type"))
            .with_help(format!("declare `('{param}: float)`"));
            self.error(d);
            return Ty::Error;
        }
        self.resolutions[e.id.0 as usize] = Some(Resolution::Builtin(builtin));
        ty
    }
}
