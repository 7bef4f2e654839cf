//! Typing of parsed textual values: [`TextValue::coerce`] to an expected boundary type (untyped
//! numbers take its element type), [`TextValue::to_value`] with the language's defaults (`i32`,
//! `f64`).
//!
//! Invariants: shapes must be regular; an integer that does not fit its type is an error at its
//! position, never a wrapped value.

use super::{Kind, TextError, TextValue, error, float_scalar, int_scalar};
use crate::boundary::BoundaryType;
use crate::value::{Array, ArrayData, Scalar, Value};
use ogham_ir::types::{PrimType, Size};

impl TextValue {
    /// The value at type `t`: untyped numbers take `t`'s element type; suffixed ones must
    /// already have it. Shapes must be regular; sizes are not checked against `t` (the
    /// backends check argument sizes).
    pub fn coerce(&self, t: &BoundaryType) -> Result<Value, TextError> {
        match t {
            BoundaryType::Scalar(p) => Ok(Value::Scalar(self.scalar(*p)?)),
            BoundaryType::Array { elem, dims } => {
                let mut levels = vec![None; dims.len()];
                let mut data = ArrayData::with_capacity(*elem, 0);
                self.fill(*elem, 0, &mut levels, &mut data)?;
                let shape = levels.into_iter().map(|l| l.unwrap_or(0)).collect();
                Array::new(shape, data)
                    .map(Value::Array)
                    .ok_or_else(|| TextError {
                        pos: self.pos,
                        message: "array shape does not match its elements".to_string(),
                    })
            }
            BoundaryType::Tuple(ts) => match &self.kind {
                Kind::Tuple(vs) if vs.len() == ts.len() => Ok(Value::Tuple(
                    vs.iter()
                        .zip(ts)
                        .map(|(v, t)| v.coerce(t))
                        .collect::<Result<_, _>>()?,
                )),
                _ => error(
                    self.pos,
                    format!("expected a value of type {t}, found {}", self.describe()),
                ),
            },
        }
    }

    /// The value with unsuffixed integers as `i32` and unsuffixed floats as `f64` (an array's
    /// element type is that of its first suffixed element, if any).
    pub fn to_value(&self) -> Result<Value, TextError> {
        self.coerce(&self.default_type()?)
    }

    fn default_type(&self) -> Result<BoundaryType, TextError> {
        match &self.kind {
            Kind::Typed(s) => Ok(BoundaryType::Scalar(s.prim_type())),
            Kind::Int(_) => Ok(BoundaryType::Scalar(PrimType::I32)),
            Kind::Float(_) => Ok(BoundaryType::Scalar(PrimType::F64)),
            Kind::Tuple(vs) => Ok(BoundaryType::Tuple(
                vs.iter()
                    .map(TextValue::default_type)
                    .collect::<Result<_, _>>()?,
            )),
            Kind::Empty { dims, elem } => Ok(BoundaryType::Array {
                elem: *elem,
                dims: vec![Size::Unknown(0); dims.len()],
            }),
            Kind::Array(_) => {
                let rank = self.rank();
                let elem = self.leaf_type().ok_or_else(|| TextError {
                    pos: self.pos,
                    message: "cannot tell the element type of an empty array: write it as `empty([0]i32)`"
                        .to_string(),
                })?;
                Ok(BoundaryType::Array {
                    elem,
                    dims: vec![Size::Unknown(0); rank],
                })
            }
        }
    }

    /// Rank along the first elements.
    fn rank(&self) -> usize {
        match &self.kind {
            Kind::Array(vs) => 1 + vs.first().map_or(0, TextValue::rank),
            Kind::Empty { dims, .. } => dims.len(),
            _ => 0,
        }
    }

    /// The element type of the first suffixed scalar, else `f64` if any float, else `i32`
    /// (`None` if there is no scalar at all).
    fn leaf_type(&self) -> Option<PrimType> {
        fn walk(v: &TextValue, typed: &mut Option<PrimType>, float: &mut bool, any: &mut bool) {
            match &v.kind {
                Kind::Typed(s) => {
                    typed.get_or_insert(s.prim_type());
                    *any = true;
                }
                Kind::Empty { elem, .. } => {
                    typed.get_or_insert(*elem);
                    *any = true;
                }
                Kind::Float(_) => (*float, *any) = (true, true),
                Kind::Int(_) => *any = true,
                Kind::Array(vs) | Kind::Tuple(vs) => {
                    vs.iter().for_each(|v| walk(v, typed, float, any))
                }
            }
        }
        let (mut typed, mut float, mut any) = (None, false, false);
        walk(self, &mut typed, &mut float, &mut any);
        typed.or(any.then_some(if float { PrimType::F64 } else { PrimType::I32 }))
    }

    /// Appends the elements of this array (at nesting depth `depth`) to `data`, recording each
    /// level's length in `levels` and checking that the shape is regular.
    fn fill(
        &self,
        elem: PrimType,
        depth: usize,
        levels: &mut [Option<usize>],
        data: &mut ArrayData,
    ) -> Result<(), TextError> {
        let rank = levels.len();
        let mut record = |level: usize, len: usize| match levels[level] {
            None => {
                levels[level] = Some(len);
                Ok(())
            }
            Some(l) if l == len => Ok(()),
            Some(l) => error(
                self.pos,
                format!(
                    "irregular array: this has {len} elements, but an earlier one at the same depth has {l}"
                ),
            ),
        };
        match &self.kind {
            _ if depth == rank => {
                data.push(self.scalar(elem)?);
                Ok(())
            }
            Kind::Array(vs) => {
                record(depth, vs.len())?;
                vs.iter()
                    .try_for_each(|v| v.fill(elem, depth + 1, levels, data))
            }
            Kind::Empty { dims, elem: e } if *e == elem && dims.len() == rank - depth => dims
                .iter()
                .enumerate()
                .try_for_each(|(i, &d)| record(depth + i, d)),
            _ => error(
                self.pos,
                format!(
                    "expected an array of type {}, found {}",
                    array_type(elem, rank - depth),
                    self.describe()
                ),
            ),
        }
    }

    /// This value as a scalar of type `p`.
    fn scalar(&self, p: PrimType) -> Result<Scalar, TextError> {
        let converted = match &self.kind {
            Kind::Typed(s) if s.prim_type() == p => Some(*s),
            Kind::Int(n) => int_scalar(p, *n).ok(),
            Kind::Float(text) => float_scalar(p, text),
            _ => None,
        };
        match converted {
            Some(s) => Ok(s),
            None => match &self.kind {
                Kind::Int(n) if p.is_int() => error(self.pos, format!("{n} does not fit in {p}")),
                _ => error(
                    self.pos,
                    format!("expected a value of type {p}, found {}", self.describe()),
                ),
            },
        }
    }

    /// What the value looks like, for error messages: `1.5 (a float)`, `an array`, `2i64`.
    fn describe(&self) -> String {
        match &self.kind {
            Kind::Typed(s) => format!("`{s}`"),
            Kind::Int(n) => format!("`{n}` (an integer)"),
            Kind::Float(f) => format!("`{f}` (a float)"),
            Kind::Array(_) => "an array".to_string(),
            Kind::Empty { dims, elem } => {
                format!("an empty array of type {}", array_type(*elem, dims.len()))
            }
            Kind::Tuple(vs) => format!("a tuple of {} values", vs.len()),
        }
    }
}

fn array_type(elem: PrimType, rank: usize) -> String {
    format!("{}{elem}", "[]".repeat(rank))
}
