//! The scalar math functions and constants of Ogham's numeric modules (`f32.sqrt`, `f64.pi`,
//! `i64.max`) as the IR names them, with their surface names: the built-ins that reach the IR
//! as operations ([`crate::Exp::Math`]). The front end resolves the other built-ins
//! (`ogham_compiler::builtins`).

/// Scalar math functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum MathFn {
    Sqrt,
    Exp,
    Log,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Abs,
    Sgn,
    Floor,
    Ceil,
    Round,
    Trunc,
    Min,
    Max,
    Pow,
    IsNan,
    IsInf,
}

/// Constants of a numeric module: `f32.nan`, `f64.inf`, `f32.pi`, `i64.highest`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConstFn {
    Nan,
    Inf,
    Pi,
    E,
    Highest,
    Lowest,
}

/// Each math function's name in a numeric module.
pub const MATH_FN_NAMES: &[(&str, MathFn)] = &[
    ("sqrt", MathFn::Sqrt),
    ("exp", MathFn::Exp),
    ("log", MathFn::Log),
    ("log2", MathFn::Log2),
    ("log10", MathFn::Log10),
    ("sin", MathFn::Sin),
    ("cos", MathFn::Cos),
    ("tan", MathFn::Tan),
    ("asin", MathFn::Asin),
    ("acos", MathFn::Acos),
    ("atan", MathFn::Atan),
    ("atan2", MathFn::Atan2),
    ("sinh", MathFn::Sinh),
    ("cosh", MathFn::Cosh),
    ("tanh", MathFn::Tanh),
    ("abs", MathFn::Abs),
    ("sgn", MathFn::Sgn),
    ("floor", MathFn::Floor),
    ("ceil", MathFn::Ceil),
    ("round", MathFn::Round),
    ("trunc", MathFn::Trunc),
    ("min", MathFn::Min),
    ("max", MathFn::Max),
    ("pow", MathFn::Pow),
    ("isnan", MathFn::IsNan),
    ("isinf", MathFn::IsInf),
];

/// Each constant's name in a numeric module.
pub const CONST_NAMES: &[(&str, ConstFn)] = &[
    ("nan", ConstFn::Nan),
    ("inf", ConstFn::Inf),
    ("pi", ConstFn::Pi),
    ("e", ConstFn::E),
    ("highest", ConstFn::Highest),
    ("lowest", ConstFn::Lowest),
];

impl MathFn {
    /// The function's name in a numeric module (`sqrt` of `f32.sqrt`).
    pub fn name(self) -> &'static str {
        MATH_FN_NAMES
            .iter()
            .find(|(_, op)| *op == self)
            .map_or("?", |(s, _)| s)
    }

    /// The function named `name` in a numeric module, if there is one.
    pub fn named(name: &str) -> Option<MathFn> {
        MATH_FN_NAMES
            .iter()
            .find(|(s, _)| *s == name)
            .map(|(_, op)| *op)
    }

    /// Whether the function is defined only on floating-point types.
    pub fn float_only(self) -> bool {
        !matches!(
            self,
            MathFn::Abs | MathFn::Sgn | MathFn::Min | MathFn::Max | MathFn::Pow
        )
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Atan2 | MathFn::Min | MathFn::Max | MathFn::Pow => 2,
            _ => 1,
        }
    }

    /// Whether the result is `bool` (`isnan`, `isinf`) rather than the argument type.
    pub fn returns_bool(self) -> bool {
        matches!(self, MathFn::IsNan | MathFn::IsInf)
    }
}

impl ConstFn {
    /// Whether the constant exists only in the float modules.
    pub fn float_only(self) -> bool {
        !matches!(self, ConstFn::Highest | ConstFn::Lowest)
    }
}
