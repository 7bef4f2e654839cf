//! The source language's scalar syntax in IR terms: the AST's unary operators as the IR's
//! ([`ogham_ir::op`]) and literals as constants (binary operators: [`ast::BinOp::ir`], beside
//! their spelling). This is the one place that converts them; lowering uses it, and so does the
//! AST interpreter (`ogham-interp`), so that both get their scalar semantics from
//! [`ogham_ir::scalar`].

use crate::syntax::ast::{self, LitValue};
use ogham_ir::Const;
use ogham_ir::math::ConstFn;
use ogham_ir::op::UnOp;
use ogham_ir::scalar::{self, integer_literal};
use ogham_ir::types::PrimType;

/// The IR operator of a unary operator.
pub fn unop(op: ast::UnOp) -> UnOp {
    match op {
        ast::UnOp::Neg => UnOp::Neg,
        ast::UnOp::Not => UnOp::Not,
    }
}

/// The value of a literal of (inferred or suffixed) type `ty`. Integer literals wrap into
/// narrow types (`255i8 == -1i8`) and may have a float type; float literals round to nearest.
/// `None` if the literal cannot have that type (a type checker bug).
pub fn literal(v: LitValue, ty: PrimType) -> Option<Const> {
    match v {
        LitValue::Int(x) => Some(integer_literal(x, ty)),
        LitValue::Float(x) => ty.is_float().then(|| scalar::convert(Const::F64(x), ty)),
        LitValue::Bool(b) => (ty == PrimType::Bool).then_some(Const::Bool(b)),
        LitValue::Nan => scalar::constant(ConstFn::Nan, ty),
        LitValue::Inf => scalar::constant(ConstFn::Inf, ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_expr;
    use ogham_ir::op::BinOp;
    use ogham_ir::source::FileId;

    #[test]
    fn operators() {
        assert_eq!(ast::BinOp::PipeLeft.ir(), None);
        assert_eq!(ast::BinOp::And.ir(), Some(BinOp::BitAnd));
        assert_eq!(ast::BinOp::Or.ir(), Some(BinOp::BitOr));
        // Every IR operator is the one of the AST operator of its spelling, and spells it.
        for op in BinOp::ALL {
            let text = format!("a {} b", op.symbol());
            let parsed = parse_expr(FileId(0), &text, &mut 0).expect("an operator application");
            let ast::ExprKind::BinOp(parsed, _, _) = parsed.kind else {
                panic!("`{text}` is no operator application");
            };
            assert_eq!(parsed.ir(), Some(op));
            assert_eq!(parsed.symbol(), op.symbol());
        }
        assert_eq!(unop(ast::UnOp::Not), UnOp::Not);
    }

    #[test]
    fn literals() {
        assert_eq!(
            literal(LitValue::Int(255), PrimType::I8),
            Some(Const::I8(-1))
        );
        assert_eq!(
            literal(LitValue::Int(3), PrimType::F32),
            Some(Const::F32(3.0))
        );
        assert_eq!(
            literal(LitValue::Float(0.1), PrimType::F32),
            Some(Const::F32(0.1))
        );
        assert_eq!(literal(LitValue::Float(0.1), PrimType::I32), None);
        assert_eq!(literal(LitValue::Bool(true), PrimType::I32), None);
        assert!(matches!(
            literal(LitValue::Nan, PrimType::F64),
            Some(Const::F64(x)) if x.is_nan()
        ));
    }
}
