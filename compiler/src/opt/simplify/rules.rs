//! Local rewrite rules: one statement at a time, given what is known about the variables it
//! uses (their definitions and, for loop and kernel indices, their bounds).
//!
//! Every rule preserves the evaluator's results bit for bit, including run-time errors: an
//! index into `iota`/`replicate` is replaced only when it is provably in bounds, a division
//! whose divisor may be zero never folds. One documented exception: `x * 1.0` and `x / 1.0`
//! become `x`, which keeps a signalling NaN's payload where the hardware would quiet it.
//! Constants fold with the executors' own semantics ([`ogham_ir::scalar`]); an operation that
//! fails there is left to fail at run time.

use ogham_ir::op::BinOp;
use ogham_ir::scalar;
use ogham_ir::traverse::{Subst, substitute_body};
use ogham_ir::{
    Body, Const, DimIndex, Exp, Form, Function, Lambda, LoopForm, Soac, Stmt, SubExp, VarId,
};
use std::collections::{HashMap, HashSet};

/// What the rules may know about variables in scope.
pub struct Facts<'a, F: Form> {
    pub function: &'a Function<F>,
    /// The defining expression of variables bound by `iota`, `replicate` and `rearrange`
    /// (in host code or in kernels).
    pub defs: &'a HashMap<VarId, Exp>,
    /// Exclusive upper bounds of variables known to lie in `[0, bound)` (loop and kernel
    /// indices).
    pub bounds: &'a HashMap<VarId, SubExp>,
    /// Arrays consumed somewhere in the function (or aliasing one).
    pub consumed: &'a HashSet<VarId>,
}

/// The outcome of simplifying one statement of the form `H`.
pub enum Rewrite<H: Form> {
    /// The statement's variables are these operands; the statement goes away.
    Replace(Vec<SubExp>),
    /// The statement becomes the statements of `body` (whose variables `renamed` substitutes,
    /// for the types in the arena too), and its variables `body`'s results.
    Inline {
        body: Body<H>,
        renamed: Subst,
    },
    /// The statement keeps its pattern with a simpler expression.
    Exp(Exp<H>),
    Keep,
}

impl<F: Form> Facts<'_, F> {
    /// `i` is certainly in `[0, n)`.
    fn in_bounds(&self, i: SubExp, n: SubExp) -> bool {
        match (i, n) {
            (SubExp::Const(Const::I64(i)), SubExp::Const(Const::I64(n))) => 0 <= i && i < n,
            (SubExp::Var(i), n) => self.bounds.get(&i) == Some(&n),
            _ => false,
        }
    }
}

/// Simplifies `stmt`, whose operands are already substituted.
pub fn rewrite<F: Form, H: Form>(facts: &Facts<F>, stmt: &Stmt<H>) -> Rewrite<H> {
    let replace = |se: SubExp| Rewrite::Replace(vec![se]);
    match &stmt.exp {
        Exp::SubExp(se) => replace(*se),
        Exp::BinOp(op, a, b) => binop(facts, *op, *a, *b),
        Exp::UnOp(op, SubExp::Const(c)) => scalar::unop(*op, *c)
            .map(|r| replace(SubExp::Const(r)))
            .unwrap_or(Rewrite::Keep),
        Exp::Math(op, _, args) => {
            let consts: Option<Vec<Const>> = args
                .iter()
                .map(|a| match a {
                    SubExp::Const(c) => Some(*c),
                    SubExp::Var(_) => None,
                })
                .collect();
            consts
                .and_then(|cs| scalar::math(*op, &cs).ok())
                .map(|r| replace(SubExp::Const(r)))
                .unwrap_or(Rewrite::Keep)
        }
        Exp::Convert(to, SubExp::Const(c)) => replace(SubExp::Const(scalar::convert(*c, *to))),
        Exp::Convert(to, a) if facts.function.subexp_type(*a).elem() == *to => replace(*a),
        Exp::Index(a, idx) => index(facts, *a, idx),
        Exp::Rearrange(v, perm) => {
            if perm.iter().enumerate().all(|(d, &p)| d == p) {
                return replace(SubExp::Var(*v));
            }
            match facts.defs.get(v) {
                Some(Exp::Rearrange(u, inner)) => {
                    Rewrite::Exp(Exp::Rearrange(*u, perm.iter().map(|&d| inner[d]).collect()))
                }
                _ => Rewrite::Keep,
            }
        }
        Exp::Reshape(v, shape) if facts.function.ty(*v).shape() == &shape[..] => {
            replace(SubExp::Var(*v))
        }
        Exp::Assert {
            cond: SubExp::Const(Const::Bool(true)),
            ..
        } => Rewrite::Replace(vec![]),
        Exp::If {
            cond,
            then_body,
            else_body,
            ..
        } => match cond {
            SubExp::Const(Const::Bool(c)) => Rewrite::Inline {
                body: if *c { then_body } else { else_body }.clone(),
                renamed: Subst::new(),
            },
            _ if then_body.stmts.is_empty()
                && else_body.stmts.is_empty()
                && then_body.result == else_body.result =>
            {
                Rewrite::Replace(then_body.result.clone())
            }
            _ => Rewrite::Keep,
        },
        Exp::Loop { params, form, body } => loop_(params, form, body),
        Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        }) if scans.is_empty() && reds.is_empty() => identity_map(facts, stmt, *width, inputs, map),
        _ => Rewrite::Keep,
    }
}

/// A loop that runs zero times returns its initial values; one that runs once is its body.
fn loop_<H: Form>(params: &[(VarId, SubExp)], form: &LoopForm, body: &Body<H>) -> Rewrite<H> {
    let inits = || params.iter().map(|&(_, init)| init).collect();
    match form {
        LoopForm::For { bound, .. } if bound.int_value().is_some_and(|n| n <= 0) => {
            Rewrite::Replace(inits())
        }
        LoopForm::For { index, bound } if bound.int_value() == Some(1) => {
            let mut renamed: Subst = params.iter().copied().collect();
            renamed.insert(*index, SubExp::i64(0));
            let mut body = body.clone();
            substitute_body(&mut body, &renamed);
            Rewrite::Inline { body, renamed }
        }
        LoopForm::While { cond } => {
            let initially = params.iter().find(|&&(p, _)| p == *cond).map(|&(_, i)| i);
            match initially {
                Some(SubExp::Const(Const::Bool(false))) => Rewrite::Replace(inits()),
                _ => Rewrite::Keep,
            }
        }
        LoopForm::For { .. } => Rewrite::Keep,
    }
}

/// A map whose lambda returns some of its parameters unchanged is those inputs, when the
/// inputs have the map's width and neither they nor the results are consumed (a map's results
/// are fresh arrays, an input is not).
fn identity_map<F: Form, H: Form>(
    facts: &Facts<F>,
    stmt: &Stmt<H>,
    width: SubExp,
    inputs: &[VarId],
    map: &Lambda,
) -> Rewrite<H> {
    let input_of = |r: &SubExp| {
        let param = map.params.iter().position(|&p| SubExp::Var(p) == *r)?;
        let input = *inputs.get(param)?;
        let fits = facts.function.ty(input).shape().first() == Some(&width);
        (fits && !facts.consumed.contains(&input)).then_some(SubExp::Var(input))
    };
    let results: Option<Vec<SubExp>> = map.body.result.iter().map(input_of).collect();
    match results {
        Some(results)
            if map.body.stmts.is_empty()
                && results.len() == stmt.pat.len()
                && stmt.pat.iter().all(|v| !facts.consumed.contains(v)) =>
        {
            Rewrite::Replace(results)
        }
        _ => Rewrite::Keep,
    }
}

fn float_value(se: SubExp) -> Option<f64> {
    match se {
        SubExp::Const(Const::F32(x)) => Some(x.into()),
        SubExp::Const(Const::F64(x)) => Some(x),
        _ => None,
    }
}

/// The constant `n` of integer type `like`'s type.
fn int_const<F: Form>(like: &Facts<F>, operand: SubExp, n: i64) -> SubExp {
    let ty = like.function.subexp_type(operand).elem();
    SubExp::Const(scalar::convert(Const::I64(n), ty))
}

fn binop<F: Form, H: Form>(facts: &Facts<F>, op: BinOp, a: SubExp, b: SubExp) -> Rewrite<H> {
    use BinOp::*;
    if let (SubExp::Const(x), SubExp::Const(y)) = (a, b) {
        return scalar::binop(op, x, y)
            .map(|r| Rewrite::Replace(vec![SubExp::Const(r)]))
            .unwrap_or(Rewrite::Keep);
    }
    let ty = facts.function.subexp_type(a).elem();
    let same = a == b;
    let is = |se: SubExp, n: i128| se.int_value() == Some(n);
    let to = |se: SubExp| Rewrite::Replace(vec![se]);
    let bool_const = |v: bool| to(SubExp::Const(Const::Bool(v)));
    if ty.is_int() {
        let zero = int_const(facts, a, 0);
        return match op {
            Add if is(b, 0) => to(a),
            Add if is(a, 0) => to(b),
            Sub if is(b, 0) => to(a),
            Mul | Div | Quot | Pow if is(b, 1) => to(a),
            Mul if is(a, 1) => to(b),
            Mul | BitAnd if is(a, 0) || is(b, 0) => to(zero),
            Mod | Rem if is(b, 1) => to(zero),
            Pow if is(b, 0) => to(int_const(facts, a, 1)),
            Shl | Shr | BitOr | BitXor if is(b, 0) => to(a),
            BitOr | BitXor if is(a, 0) => to(b),
            Sub | BitXor if same => to(zero),
            BitAnd | BitOr if same => to(a),
            Eq | Le | Ge if same => bool_const(true),
            Ne | Lt | Gt if same => bool_const(false),
            _ => Rewrite::Keep,
        };
    }
    if ty.is_float() {
        let is_f = |se: SubExp, x: f64| float_value(se).is_some_and(|v| v.to_bits() == x.to_bits());
        return match op {
            Mul | Div if is_f(b, 1.0) => to(a),
            Mul if is_f(a, 1.0) => to(b),
            Add if is_f(b, -0.0) => to(a),
            Add if is_f(a, -0.0) => to(b),
            Sub if is_f(b, 0.0) => to(a),
            _ => Rewrite::Keep,
        };
    }
    let is_b = |se: SubExp, v: bool| se == SubExp::Const(Const::Bool(v));
    match op {
        BitAnd if is_b(a, false) || is_b(b, false) => bool_const(false),
        BitOr if is_b(a, true) || is_b(b, true) => bool_const(true),
        BitAnd if is_b(b, true) => to(a),
        BitAnd if is_b(a, true) => to(b),
        BitOr | BitXor | Ne if is_b(b, false) => to(a),
        BitOr | BitXor | Ne if is_b(a, false) => to(b),
        Eq if is_b(b, true) => to(a),
        Eq if is_b(a, true) => to(b),
        BitAnd | BitOr if same => to(a),
        Eq | Le | Ge if same => bool_const(true),
        Ne | Lt | Gt | BitXor if same => bool_const(false),
        _ => Rewrite::Keep,
    }
}

/// Indexing: trailing whole-dimension slices are dropped (`a[i, 0:+m*1]` is `a[i]`); an index
/// into `iota`/`replicate` reads the known element.
fn index<F: Form, H: Form>(facts: &Facts<F>, a: VarId, idx: &[DimIndex]) -> Rewrite<H> {
    let shape = facts.function.ty(a).shape();
    let whole = |d: usize| {
        matches!(idx[d], DimIndex::Slice { start, len, stride }
            if start == SubExp::i64(0) && stride == SubExp::i64(1) && shape.get(d) == Some(&len))
    };
    let kept = (0..idx.len())
        .rev()
        .find(|&d| !whole(d))
        .map_or(0, |d| d + 1);
    if kept < idx.len() {
        return match kept {
            0 => Rewrite::Replace(vec![SubExp::Var(a)]),
            _ => Rewrite::Exp(Exp::Index(a, idx[..kept].to_vec())),
        };
    }
    let Some((first, rest)) = idx.split_first() else {
        return Rewrite::Replace(vec![SubExp::Var(a)]);
    };
    let DimIndex::Fix(i) = *first else {
        return Rewrite::Keep;
    };
    match facts.defs.get(&a) {
        Some(Exp::Iota(n)) if rest.is_empty() && facts.in_bounds(i, *n) => {
            Rewrite::Replace(vec![i])
        }
        Some(Exp::Replicate(n, value)) if facts.in_bounds(i, *n) => match (rest, value) {
            ([], _) => Rewrite::Replace(vec![*value]),
            (_, SubExp::Var(v)) => Rewrite::Exp(Exp::Index(*v, rest.to_vec())),
            _ => Rewrite::Keep,
        },
        _ => Rewrite::Keep,
    }
}
