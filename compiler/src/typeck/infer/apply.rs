//! Inference for function application: the callee's type is instantiated, then applied to
//! arguments whose types are already inferred (so that a mismatch points at the argument),
//! with the arity-overloaded `zip`/`unzip` resolved from their arguments.
//!
//! Invariants: size parameters a callee's type depends on are bound from the arguments that
//! denote them (`Instance::deps`) before the later parameters are unified.

use super::I64;
use crate::builtins::{ArrayFn, Builtin};
use crate::syntax::ast::{Expr, ExprKind};
use crate::typeck::names::Instance;
use crate::typeck::unify::{Constraint, Ty};
use crate::typeck::{Checker, Resolution};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::Span;

impl Checker<'_> {
    /// Applies a function of type `callee.ty` (the expression at `callee_span`) to arguments
    /// whose types are already inferred.
    pub(super) fn apply(
        &mut self,
        callee_span: Span,
        callee: Instance,
        args: &[(&Expr, Ty)],
    ) -> Ty {
        let mut ty = callee.ty;
        let mut adjacency = self.adjacency_hint(callee_span, args);
        for (i, (arg, at)) in args.iter().enumerate() {
            for &(_, s) in callee.deps.iter().filter(|(k, _)| *k == i) {
                let size = self.size_of(arg);
                if let Err(m) = self.subst.unify_size(s, size) {
                    let d = self.mismatch(m, &I64, &I64, arg.span);
                    self.error(d.with_note(
                        "this argument is the size of an array argument or of the result",
                    ));
                }
            }
            let (p, r) = match self.subst.shallow(&ty) {
                Ty::Fun(p, r) => (*p, *r),
                Ty::Error => return Ty::Error,
                Ty::Var(v) if self.subst.tvars[v as usize].constraint == Constraint::None => {
                    if i == 0 {
                        self.note_spaced_call(callee_span, arg);
                    }
                    let p = self.subst.fresh(Constraint::None, arg.span);
                    let r = self.subst.fresh(Constraint::None, arg.span);
                    self.infer_ok(&ty, &Ty::fun(p.clone(), r.clone()));
                    (p, r)
                }
                other => {
                    let shown = self.subst.show(&other);
                    let d = if i == 0 {
                        let spaced = self.spaced_index(callee_span, arg);
                        adjacency = spaced.or(adjacency);
                        Diagnostic::error("E0305", "this is not a function")
                            .with_primary(callee_span, format!("has type `{shown}`"))
                            .with_secondary(arg.span, "applied to this argument")
                    } else {
                        Diagnostic::error(
                            "E0305",
                            format!("too many arguments: the function takes {i}"),
                        )
                        .with_primary(arg.span, "unexpected argument")
                        .with_secondary(
                            callee_span,
                            format!("after {i} arguments this is `{shown}`"),
                        )
                    };
                    self.error(match adjacency.take() {
                        Some(help) => d.with_help(help),
                        None => d,
                    });
                    return Ty::Error;
                }
            };
            if let Err(m) = self.subst.unify(&p, at) {
                let size_mismatch = match &m {
                    crate::typeck::Mismatch::Sizes(s, _) => Some(*s),
                    _ => None,
                };
                let mut d = self.mismatch(m, &p, at, arg.span);
                let shown = self.subst.show(&p);
                d = d.with_secondary(
                    callee_span,
                    format!("argument {} of this function has type `{shown}`", i + 1),
                );
                if let Some(s) = size_mismatch {
                    for (prev, pt) in &args[..i] {
                        if self.mentions_size(pt, s) {
                            let name = self.subst.show_size(s);
                            let label = if name.is_empty() {
                                "this has a size known only at run time".to_string()
                            } else {
                                format!("this has size `{name}`")
                            };
                            d = d.with_secondary(prev.span, label);
                        }
                    }
                }
                if let Some(help) = adjacency.take() {
                    d = d.with_help(help);
                }
                self.error(d);
            }
            ty = r;
        }
        ty
    }

    /// The instance of plain `zip` or `unzip` for the arity its arguments show, when that is
    /// not the pair the name alone denotes: `zip xs ys zs` is `zip3`, and `unzip` of an array
    /// of 5-tuples is `unzip5` (only if the argument's type is already known to be one; else
    /// `unzip` stays the pair version). The resolution and type of `f` are updated.
    pub(super) fn arity_instance(&mut self, f: &Expr, args: &[(&Expr, Ty)]) -> Option<Instance> {
        let ExprKind::Var(name) = &f.kind else {
            return None;
        };
        let Some(Some(Resolution::Builtin(Builtin::Array(pair)))) =
            self.resolutions.get(f.id.0 as usize)
        else {
            return None;
        };
        // Only the plain family name (`zip`, not `zip2`) adapts to its arguments.
        if name.qualifier.is_some() || name.name != pair.name() {
            return None;
        }
        let arity = match pair {
            ArrayFn::Zip(2) => args.len(),
            ArrayFn::Unzip(2) => {
                let (_, arg) = args.first()?;
                let Ty::Array(elem, _) = self.subst.shallow(arg) else {
                    return None;
                };
                match self.subst.shallow(&elem) {
                    Ty::Tuple(ts) => ts.len(),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let arity = u8::try_from(arity).ok().filter(|&k| k > 2)?;
        let builtin = Builtin::Array(match pair {
            ArrayFn::Zip(_) => ArrayFn::Zip(arity),
            _ => ArrayFn::Unzip(arity),
        });
        self.resolutions[f.id.0 as usize] = Some(Resolution::Builtin(builtin));
        let inst = self.builtin_instance(builtin, f.span);
        self.record(f, &inst.ty);
        Some(inst)
    }
}
