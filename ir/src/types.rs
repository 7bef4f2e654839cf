//! Types of Ogham values, as inferred by the type checker and used by later passes.
//!
//! Arrays are nested: `[n][m]f32` is `Array(Array(f32, m), n)`. Sizes are symbolic
//! ([`Size::Var`]), constant, or unknown (existential results such as `filter`'s).

use std::fmt;

/// Scalar (primitive) types.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum PrimType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    F32,
    F64,
}

impl PrimType {
    pub const ALL: [PrimType; 8] = [
        PrimType::Bool,
        PrimType::I8,
        PrimType::I16,
        PrimType::I32,
        PrimType::I64,
        PrimType::U8,
        PrimType::F32,
        PrimType::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PrimType::Bool => "bool",
            PrimType::I8 => "i8",
            PrimType::I16 => "i16",
            PrimType::I32 => "i32",
            PrimType::I64 => "i64",
            PrimType::U8 => "u8",
            PrimType::F32 => "f32",
            PrimType::F64 => "f64",
        }
    }

    /// NumPy's name of the element type (`np.dtype(...).name`: `float32` for `f32`).
    pub fn numpy_name(self) -> &'static str {
        match self {
            PrimType::Bool => "bool",
            PrimType::I8 => "int8",
            PrimType::I16 => "int16",
            PrimType::I32 => "int32",
            PrimType::I64 => "int64",
            PrimType::U8 => "uint8",
            PrimType::F32 => "float32",
            PrimType::F64 => "float64",
        }
    }

    pub fn from_name(name: &str) -> Option<PrimType> {
        PrimType::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn is_float(self) -> bool {
        matches!(self, PrimType::F32 | PrimType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64 | PrimType::U8
        )
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
        )
    }

    /// Size of one element in bytes (`bool` is one byte).
    pub fn byte_size(self) -> usize {
        match self {
            PrimType::Bool | PrimType::I8 | PrimType::U8 => 1,
            PrimType::I16 => 2,
            PrimType::I32 | PrimType::F32 => 4,
            PrimType::I64 | PrimType::F64 => 8,
        }
    }
}

impl fmt::Display for PrimType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The size of one array dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Size {
    Const(u64),
    /// A named size: a size parameter `[n]` or a size variable introduced by inference.
    Var(String),
    /// A size not known statically (from `filter`, `[]t` annotations, ...), numbered so two
    /// unknown sizes are distinct.
    Unknown(u32),
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Const(n) => write!(f, "{n}"),
            Size::Var(v) => write!(f, "{v}"),
            Size::Unknown(_) => Ok(()),
        }
    }
}

/// A fully or partly inferred type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Type {
    Prim(PrimType),
    Array(Box<Type>, Size),
    /// Tuples; the empty tuple is the unit type `()`.
    Tuple(Vec<Type>),
    /// Records, fields sorted by name.
    Record(Vec<(String, Type)>),
    /// A function type `a -> b` (curried).
    Fun(Box<Type>, Box<Type>),
    /// A type parameter `'a` of a polymorphic definition.
    Param(String),
    /// An inference variable not (yet) resolved.
    Var(u32),
}

impl Type {
    pub fn array(elem: Type, size: Size) -> Type {
        Type::Array(Box::new(elem), size)
    }

    /// Number of array dimensions (0 for non-arrays).
    pub fn rank(&self) -> usize {
        match self {
            Type::Array(t, _) => 1 + t.rank(),
            _ => 0,
        }
    }

    /// The innermost non-array type.
    pub fn element(&self) -> &Type {
        match self {
            Type::Array(t, _) => t.element(),
            t => t,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Prim(p) => write!(f, "{p}"),
            Type::Array(t, s) => write!(f, "[{s}]{t}"),
            Type::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ")")
            }
            Type::Record(fs) => {
                write!(f, "{{")?;
                for (i, (n, t)) in fs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{n}: {t}")?;
                }
                write!(f, "}}")
            }
            Type::Fun(a, b) => match **a {
                Type::Fun(..) => write!(f, "({a}) -> {b}"),
                _ => write!(f, "{a} -> {b}"),
            },
            Type::Param(p) => write!(f, "{p}"),
            Type::Var(v) => write!(f, "?{v}"),
        }
    }
}

/// The values of the type parameters of one instance of a polymorphic definition or local
/// function, by parameter name (see `typeck::Checked::instantiations`).
pub type TypeArgs = std::collections::HashMap<String, Type>;

impl Type {
    /// Whether the type mentions a type parameter.
    pub fn has_params(&self) -> bool {
        match self {
            Type::Param(_) => true,
            Type::Array(t, _) => t.has_params(),
            Type::Tuple(ts) => ts.iter().any(Type::has_params),
            Type::Record(fs) => fs.iter().any(|(_, t)| t.has_params()),
            Type::Fun(a, b) => a.has_params() || b.has_params(),
            Type::Prim(_) | Type::Var(_) => false,
        }
    }

    /// The type with every parameter that `args` gives replaced by its value.
    pub fn substitute(&self, args: &TypeArgs) -> Type {
        match self {
            Type::Param(p) => args.get(p).cloned().unwrap_or_else(|| self.clone()),
            Type::Array(t, s) => Type::array(t.substitute(args), s.clone()),
            Type::Tuple(ts) => Type::Tuple(ts.iter().map(|t| t.substitute(args)).collect()),
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(n, t)| (n.clone(), t.substitute(args)))
                    .collect(),
            ),
            Type::Fun(a, b) => {
                Type::Fun(Box::new(a.substitute(args)), Box::new(b.substitute(args)))
            }
            Type::Prim(_) | Type::Var(_) => self.clone(),
        }
    }
}
