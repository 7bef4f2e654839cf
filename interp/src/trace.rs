//! `trace "label" e` in the interpreter: evaluates `e` and, when the caller installed a sink
//! (`ogham_runtime::trace::with_sink`), reports the value with the label and the location of the
//! `trace`. The value is returned unchanged; without a sink nothing else happens.

use super::eval::Interp;
use super::value::{Env, Val};
use ogham_compiler::syntax::ast::Expr;
use ogham_ir::source::Span;
use ogham_ir::types::{PrimType, Type};
use ogham_runtime::error::Res;

impl<'a> Interp<'a> {
    pub(super) fn eval_trace(
        &self,
        label: &str,
        inner: &'a Expr,
        at: Span,
        env: &Env<'a>,
    ) -> Res<Val<'a>> {
        let v = self.eval(inner, env)?;
        if ogham_runtime::trace::tracing() {
            let mut ty = self.type_of(inner, env).into_owned();
            while let Type::Array(elem, _) = ty {
                ty = *elem;
            }
            // The type checker admits scalars and arrays of scalars only (`E0313`).
            let elem = match ty {
                Type::Prim(p) => p,
                _ => PrimType::Bool,
            };
            ogham_runtime::trace::emit(label, at, &v, elem);
        }
        Ok(v)
    }
}
