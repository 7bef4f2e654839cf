//! The IR's scalar operators: what [`super::Exp::BinOp`] and [`super::Exp::UnOp`] compute.
//!
//! These are the source language's operators less the ones that never reach the IR: the pipes
//! `|>` and `<|` are applications, and the short-circuiting `&&` and `||` become `if`s (their
//! sections, which evaluate both operands, become `&` and `|` on `bool`). `lower` converts the
//! AST's operators into these once; every later pass, both backends and the runtime's executors
//! use these. What each computes is defined by [`super::scalar`].

use crate::types::PrimType;

/// A binary scalar operator; both operands have one type (see [`BinOp::result_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinOp {
    Eq,     // ==
    Ne,     // !=
    Lt,     // <
    Le,     // <=
    Gt,     // >
    Ge,     // >=
    BitOr,  // |  (also non-short-circuiting `||` on bool)
    BitXor, // ^
    BitAnd, // &  (also non-short-circuiting `&&` on bool)
    Shl,    // <<
    Shr,    // >>
    Add,    // +
    Sub,    // -
    Mul,    // *
    Div,    // /   (floored for integers)
    Mod,    // %   (floored for integers)
    Quot,   // //  (truncating)
    Rem,    // %%  (truncating)
    Pow,    // **
}

impl BinOp {
    /// Every operator, in declaration order: an operator's position is its code (`op as usize`,
    /// by which generated code names it to the runtime's helpers).
    pub const ALL: [BinOp; 19] = [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::BitOr,
        BinOp::BitXor,
        BinOp::BitAnd,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Quot,
        BinOp::Rem,
        BinOp::Pow,
    ];

    /// The source spelling (IR printing, error messages).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::BitAnd => "&",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Quot => "//",
            BinOp::Rem => "%%",
            BinOp::Pow => "**",
        }
    }

    /// Whether the operator compares (its result is a `bool`).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// Whether the operator divides (fails on an integer zero divisor).
    pub fn is_division(self) -> bool {
        matches!(self, BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem)
    }

    /// The result type of `a op b` for operands of type `t`, if the operator applies to it.
    pub fn result_type(self, t: PrimType) -> Option<PrimType> {
        use BinOp::*;
        let ok = match self {
            Eq | Ne | Lt | Le | Gt | Ge => return Some(PrimType::Bool),
            Add | Sub | Mul | Div | Mod | Quot | Rem | Pow => t != PrimType::Bool,
            BitAnd | BitOr | BitXor => t.is_int() || t == PrimType::Bool,
            Shl | Shr => t.is_int(),
        };
        ok.then_some(t)
    }
}

/// A unary scalar operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UnOp {
    /// `-x` (not on `bool`).
    Neg,
    /// `!x`: logical not on `bool`, bitwise not on integers.
    Not,
}

impl UnOp {
    /// The source spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
        }
    }

    /// Whether the operator applies to operands of type `t` (the result has type `t`).
    pub fn applies_to(self, t: PrimType) -> bool {
        match self {
            UnOp::Neg => t != PrimType::Bool,
            UnOp::Not => t == PrimType::Bool || t.is_int(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_positions() {
        for (i, op) in BinOp::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i);
        }
    }

    #[test]
    fn result_types() {
        assert_eq!(BinOp::Lt.result_type(PrimType::F32), Some(PrimType::Bool));
        assert_eq!(BinOp::Add.result_type(PrimType::Bool), None);
        assert_eq!(
            BinOp::BitAnd.result_type(PrimType::Bool),
            Some(PrimType::Bool)
        );
        assert_eq!(BinOp::Shl.result_type(PrimType::F64), None);
        assert!(BinOp::ALL.iter().all(
            |op| op.is_comparison() == (op.result_type(PrimType::I32) == Some(PrimType::Bool))
        ));
        assert!(UnOp::Not.applies_to(PrimType::U8) && !UnOp::Neg.applies_to(PrimType::Bool));
    }
}
