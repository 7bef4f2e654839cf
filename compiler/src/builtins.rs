//! The built-in functions and constants of Ogham: the one table that defines them, and how a
//! name resolves to one.
//!
//! Design: every built-in is a value of [`Builtin`], and this module is the only place that
//! declares one (its names and its type; what it computes is the lowering's and the
//! interpreter's, below). An array built-in ([`ArrayFn`]) has its names in `ARRAY_FNS` (the
//! spelled-out arities `map1`, `zip2`, ... included, in the order suggestions list them) and
//! its type scheme in [`ArrayFn::signature`], in the reference's notation (`scheme` reads it).
//! Everything else is derived from the scheme: the arity, which arguments are consumed, whether
//! the result is fresh, which arguments give sizes of the result (`iota n : [n]i64`), and the
//! canonical name that run-time messages use ([`ArrayFn::name`]). The users:
//!
//! - the type checker (`typeck/builtins_types.rs`) instantiates the scheme at every use, so a
//!   new built-in needs nothing there;
//! - the lowering (`lower/builtins.rs`) turns an application into core IR, and the reference
//!   interpreter (`ogham_runtime`'s `interp/builtins.rs`) evaluates it: each matches
//!   exhaustively on [`ArrayFn`], so a built-in added here without its lowering or its
//!   evaluation is a compile error.
//!
//! The table lives in the front end because the interpreter runs the front end's typed AST
//! anyway: it adds no dependency. The math functions and constants, which reach the IR, are
//! `ogham_ir::math`'s ([`MathFn`], [`ConstFn`], with their names and arities); their types (one
//! numeric type throughout) are the type checker's. Names are either plain (`map`, `iota`,
//! `sqrt`) or qualified by a numeric module (`f32.sqrt`, `f32.i64`, `i64.max`, `f64.nan`).
//! Plain math names (`sqrt`, `min`, ...) are overloaded over the numeric types, like operators.
//! `docs/reference.md` documents each built-in.

use crate::syntax::ast::QualName;
use ogham_ir::math::{CONST_NAMES, ConstFn, MATH_FN_NAMES, MathFn};
use ogham_ir::types::{PrimType, Type};
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

mod scheme;

pub use scheme::{Param, Scheme, SigSize, SigTy};

/// Array built-ins (second-order array combinators and array shape functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayFn {
    /// `map f xs` (arity 1) and `map2 f xs ys` .. `map5` (arity 2..5).
    Map(u8),
    Reduce,
    ReduceComm,
    Scan,
    Scatter,
    /// `hist op ne k is vs` (also spelled `reduce_by_index dest op ne is vs`, see docs).
    Hist,
    ReduceByIndex,
    Filter,
    Partition,
    Iota,
    Replicate,
    /// `zip` (2) .. `zip4`.
    Zip(u8),
    /// `unzip` (2) .. `unzip4`.
    Unzip(u8),
    Transpose,
    Flatten,
    Unflatten,
    Concat,
    Reverse,
    Length,
    Rotate,
    Copy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Array(ArrayFn),
    /// `ty` is `Some` for the qualified form (`f32.sqrt`) and `None` for the overloaded plain
    /// form (`sqrt`).
    Math {
        op: MathFn,
        ty: Option<PrimType>,
    },
    /// `f32.i64 x`: convert an `i64` to `f32` (the module names the result type).
    Convert {
        to: PrimType,
        from: PrimType,
    },
    Const {
        op: ConstFn,
        ty: PrimType,
    },
    /// A conversion or constant whose type is a constrained type parameter: `t.i64 n`,
    /// `f64.t x`, `t.nan` with `('t: float)` in scope. Each use is turned into the concrete
    /// built-in by [`Builtin::specialise`] once the parameter's value is known.
    Generic(GenericFn),
}

/// The built-ins of a type parameter's module (see [`Builtin::Generic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenericFn {
    /// A conversion between two types of which at least one is a type parameter.
    Convert,
    Const(ConstFn),
}

impl Builtin {
    /// The number of arguments the built-in takes.
    pub fn arity(self) -> usize {
        match self {
            Builtin::Array(f) => f.scheme().params.len(),
            Builtin::Math { op, .. } => op.arity(),
            Builtin::Convert { .. } | Builtin::Generic(GenericFn::Convert) => 1,
            Builtin::Const { .. } | Builtin::Generic(GenericFn::Const(_)) => 0,
        }
    }

    /// Whether argument `i` is consumed (a `*` parameter).
    pub fn consumes(self, i: usize) -> bool {
        match self {
            Builtin::Array(f) => f.scheme().params.get(i).is_some_and(|p| p.consumed),
            _ => false,
        }
    }

    /// Whether the result is a new value rather than (a view of) an argument.
    pub fn result_is_fresh(self) -> bool {
        match self {
            Builtin::Array(f) => f.scheme().result_is_fresh(),
            _ => true,
        }
    }

    /// The concrete built-in a use of a generic one denotes, given the use's type with every
    /// type parameter replaced by its value (`f32 -> f64` for a conversion, `f32` for a
    /// constant); `None` if that type is not one the built-in can have. Other built-ins are
    /// returned unchanged.
    pub fn specialise(self, use_type: &Type) -> Option<Builtin> {
        match (self, use_type) {
            (Builtin::Generic(GenericFn::Convert), Type::Fun(from, to)) => match (&**from, &**to) {
                (Type::Prim(from), Type::Prim(to)) => Some(Builtin::Convert {
                    to: *to,
                    from: *from,
                }),
                _ => None,
            },
            (Builtin::Generic(GenericFn::Const(op)), Type::Prim(ty)) => {
                Some(Builtin::Const { op, ty: *ty })
            }
            (Builtin::Generic(_), _) => None,
            (b, _) => Some(b),
        }
    }
}

impl ArrayFn {
    /// The type scheme (see `scheme` for the notation). `mapK`, `zipK` and `unzipK` are
    /// spelled out for their `k`.
    pub fn signature(self) -> Cow<'static, str> {
        let elems = |k: u8| (1..=k).map(|i| format!("a{i}")).collect::<Vec<_>>();
        let arrays = |k: u8| {
            elems(k)
                .iter()
                .map(|e| format!("[n]{e}"))
                .collect::<Vec<_>>()
        };
        Cow::Borrowed(match self {
            ArrayFn::Map(k) => {
                let f = elems(k).join(" -> ");
                let xs = arrays(k).join(" -> ");
                return Cow::Owned(format!("({f} -> b) -> {xs} -> *[n]b"));
            }
            ArrayFn::Zip(k) => {
                let (xs, row) = (arrays(k).join(" -> "), elems(k).join(", "));
                return Cow::Owned(format!("{xs} -> [n]({row})"));
            }
            ArrayFn::Unzip(k) => {
                let (row, xs) = (elems(k).join(", "), arrays(k).join(", "));
                return Cow::Owned(format!("[n]({row}) -> ({xs})"));
            }
            ArrayFn::Reduce | ArrayFn::ReduceComm => "(a -> a -> a) -> a -> [n]a -> a",
            ArrayFn::Scan => "(a -> a -> a) -> a -> [n]a -> *[n]a",
            ArrayFn::Scatter => "*[k]a -> [n]i64 -> [n]a -> *[k]a",
            ArrayFn::Hist => "(a -> a -> a) -> a -> (k: i64) -> [n]i64 -> [n]a -> *[k]a",
            ArrayFn::ReduceByIndex => "*[k]a -> (a -> a -> a) -> a -> [n]i64 -> [n]a -> *[k]a",
            ArrayFn::Filter => "(a -> bool) -> [n]a -> *[]a",
            ArrayFn::Partition => "(a -> bool) -> [n]a -> *([]a, []a)",
            ArrayFn::Iota => "(n: i64) -> *[n]i64",
            ArrayFn::Replicate => "(n: i64) -> a -> *[n]a",
            ArrayFn::Transpose => "[n][m]a -> [m][n]a",
            ArrayFn::Flatten => "[n][m]a -> []a",
            ArrayFn::Unflatten => "(n: i64) -> (m: i64) -> [l]a -> [n][m]a",
            ArrayFn::Concat => "[n]a -> [m]a -> *[]a",
            ArrayFn::Reverse => "[n]a -> [n]a",
            ArrayFn::Length => "[n]a -> i64",
            ArrayFn::Rotate => "i64 -> [n]a -> [n]a",
            ArrayFn::Copy => "a -> *a",
        })
    }

    /// The type scheme, read once per thread (the interpreter asks at every call: a short list
    /// of the built-ins a program uses is quicker to search than a hash map).
    pub fn scheme(self) -> Rc<Scheme> {
        thread_local! {
            static SCHEMES: RefCell<Vec<(ArrayFn, Rc<Scheme>)>> = RefCell::default();
        }
        SCHEMES.with_borrow_mut(|schemes| {
            if let Some((_, s)) = schemes.iter().find(|(f, _)| *f == self) {
                return s.clone();
            }
            // The table's own text; `tests::every_signature_parses` reads them all.
            let scheme = Scheme::parse(&self.signature());
            let scheme = Rc::new(scheme.expect("a built-in's signature parses"));
            schemes.push((self, scheme.clone()));
            scheme
        })
    }

    /// The name run-time messages give the built-in: its first name in the table (`map`, not
    /// `map1`), or for `zipK` and `unzipK` beyond the spelled-out ones, the family's first name
    /// and `k`.
    pub fn name(self) -> Cow<'static, str> {
        let family = std::mem::discriminant(&self);
        let mut names = ARRAY_FNS
            .iter()
            .filter(|(_, f)| std::mem::discriminant(f) == family);
        match (names.clone().find(|(_, f)| *f == self), self) {
            (Some((name, _)), _) => Cow::Borrowed(name),
            (None, ArrayFn::Map(k) | ArrayFn::Zip(k) | ArrayFn::Unzip(k)) => {
                let base = names.next().map_or("", |(name, _)| name);
                Cow::Owned(format!("{base}{k}"))
            }
            // Every other built-in has a name in the table.
            (None, _) => Cow::Owned(format!("{self:?}")),
        }
    }
}

/// Each array built-in's names, in the order "did you mean" lists them.
const ARRAY_FNS: &[(&str, ArrayFn)] = &[
    ("map", ArrayFn::Map(1)),
    ("map1", ArrayFn::Map(1)),
    ("map2", ArrayFn::Map(2)),
    ("map3", ArrayFn::Map(3)),
    ("map4", ArrayFn::Map(4)),
    ("map5", ArrayFn::Map(5)),
    ("reduce", ArrayFn::Reduce),
    ("reduce_comm", ArrayFn::ReduceComm),
    ("scan", ArrayFn::Scan),
    ("scatter", ArrayFn::Scatter),
    ("hist", ArrayFn::Hist),
    ("reduce_by_index", ArrayFn::ReduceByIndex),
    ("filter", ArrayFn::Filter),
    ("partition", ArrayFn::Partition),
    ("iota", ArrayFn::Iota),
    ("replicate", ArrayFn::Replicate),
    ("zip", ArrayFn::Zip(2)),
    ("zip2", ArrayFn::Zip(2)),
    ("zip3", ArrayFn::Zip(3)),
    ("zip4", ArrayFn::Zip(4)),
    ("unzip", ArrayFn::Unzip(2)),
    ("unzip2", ArrayFn::Unzip(2)),
    ("unzip3", ArrayFn::Unzip(3)),
    ("unzip4", ArrayFn::Unzip(4)),
    ("transpose", ArrayFn::Transpose),
    ("flatten", ArrayFn::Flatten),
    ("unflatten", ArrayFn::Unflatten),
    ("concat", ArrayFn::Concat),
    ("reverse", ArrayFn::Reverse),
    ("length", ArrayFn::Length),
    ("rotate", ArrayFn::Rotate),
    ("copy", ArrayFn::Copy),
];

/// Resolves a name that is not bound by the program to a built-in, if it is one.
/// Local and top-level definitions shadow plain built-in names; qualified names (`f32.sqrt`)
/// always denote built-ins.
pub fn resolve(name: &QualName) -> Option<Builtin> {
    match &name.qualifier {
        None => {
            let n = name.name.as_str();
            if let Some((_, f)) = ARRAY_FNS.iter().find(|(s, _)| *s == n) {
                return Some(Builtin::Array(*f));
            }
            MATH_FN_NAMES
                .iter()
                .find(|(s, _)| *s == n)
                .map(|(_, op)| Builtin::Math { op: *op, ty: None })
        }
        Some(q) => {
            let ty = PrimType::from_name(q)?;
            let n = name.name.as_str();
            if let Some(from) = PrimType::from_name(n) {
                return Some(Builtin::Convert { to: ty, from });
            }
            if let Some((_, op)) = MATH_FN_NAMES.iter().find(|(s, _)| *s == n) {
                let ok = ty != PrimType::Bool && (ty.is_float() || !op.float_only());
                return ok.then_some(Builtin::Math {
                    op: *op,
                    ty: Some(ty),
                });
            }
            let (_, op) = CONST_NAMES.iter().find(|(s, _)| *s == n)?;
            let ok = ty != PrimType::Bool && (ty.is_float() || !op.float_only());
            ok.then_some(Builtin::Const { op: *op, ty })
        }
    }
}

/// The math function or constant `name` of a numeric module, for a type parameter's module
/// (`t.sqrt`, `t.nan`); whether it needs a floating-point type is asked of it
/// ([`MathFn::float_only`], [`ConstFn::float_only`]).
pub fn module_member(name: &str) -> Option<Result<MathFn, ConstFn>> {
    if let Some((_, op)) = MATH_FN_NAMES.iter().find(|(s, _)| *s == name) {
        return Some(Ok(*op));
    }
    CONST_NAMES
        .iter()
        .find(|(s, _)| *s == name)
        .map(|(_, c)| Err(*c))
}

/// All plain built-in names (for "did you mean" suggestions and the reference docs).
pub fn plain_names() -> impl Iterator<Item = &'static str> {
    ARRAY_FNS
        .iter()
        .map(|(s, _)| *s)
        .chain(MATH_FN_NAMES.iter().map(|(s, _)| *s))
}

/// All names a numeric module provides (`sqrt`, `i64` (conversion), `nan`, ...).
pub fn module_member_names(ty: PrimType) -> Vec<String> {
    let mut out: Vec<String> = PrimType::ALL.iter().map(|p| p.name().to_string()).collect();
    for (s, op) in MATH_FN_NAMES {
        if ty.is_float() || !op.float_only() {
            out.push(s.to_string());
        }
    }
    for (s, op) in CONST_NAMES {
        if ty.is_float() || !op.float_only() {
            out.push(s.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each array built-in of the table, and `mapK`/`zipK`/`unzipK` beyond it.
    fn all() -> impl Iterator<Item = ArrayFn> {
        let wide = (2..=9).flat_map(|k| [ArrayFn::Zip(k), ArrayFn::Unzip(k)]);
        ARRAY_FNS.iter().map(|(_, f)| *f).chain(wide)
    }

    #[test]
    fn every_signature_parses() {
        for f in all() {
            let s = Scheme::parse(&f.signature());
            assert!(s.is_ok(), "{f:?}: {}: {s:?}", f.signature());
        }
    }

    #[test]
    fn every_name_resolves_back() {
        for f in all() {
            let q = QualName {
                qualifier: None,
                name: f.name().into_owned(),
            };
            if ARRAY_FNS.iter().any(|(s, _)| *s == f.name()) {
                assert_eq!(resolve(&q), Some(Builtin::Array(f)));
            }
        }
        assert_eq!(ArrayFn::Map(1).name(), "map");
        assert_eq!(ArrayFn::Zip(2).name(), "zip");
        assert_eq!(ArrayFn::Zip(7).name(), "zip7");
        assert_eq!(ArrayFn::ReduceComm.name(), "reduce_comm");
    }

    #[test]
    fn schemes_give_arity_consumption_and_freshness() {
        let arity = |f| Builtin::Array(f).arity();
        assert_eq!(arity(ArrayFn::Map(3)), 4);
        assert_eq!(arity(ArrayFn::Zip(5)), 5);
        assert_eq!(arity(ArrayFn::Hist), 5);
        assert_eq!(arity(ArrayFn::Copy), 1);
        let scatter = Builtin::Array(ArrayFn::Scatter);
        assert!(scatter.consumes(0) && !scatter.consumes(1) && scatter.result_is_fresh());
        assert!(!Builtin::Array(ArrayFn::Reduce).result_is_fresh());
        assert!(Builtin::Array(ArrayFn::Length).result_is_fresh());
        assert!(!Builtin::Array(ArrayFn::Unzip(3)).result_is_fresh());
    }
}
