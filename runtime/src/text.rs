//! Futhark's textual value syntax: the parser (the printer is
//! [`Value`](crate::value::Value)'s `Display`).
//!
//! Syntax: scalars with suffixes (`1i32`, `2.5f32`, `1f64`, `0xffu8`, `true`, `f32.nan`,
//! `-f64.inf`), unsuffixed numbers (`1`, `-2.5`, `1e-3`, `nan`, `inf`), array literals
//! (`[[1, 2], [3, 4]]`, regular shapes only), empty arrays (`empty([0][3]f32)`), tuples
//! (`(1, [2])`, `()`); several values are separated by whitespace.
//!
//! Parsing gives [`TextValue`]s, which keep unsuffixed numbers *untyped* until they are coerced
//! to an expected [`BoundaryType`](crate::boundary::BoundaryType) ([`TextValue::coerce`]): an
//! untyped integer becomes any integer or float type it fits, an untyped float any float type.
//! Without an expected type, [`TextValue::to_value`] defaults them to `i32` and `f64` like the
//! language does. Every error
//! names the line and column of the offending text.

use crate::value::Scalar;
use ogham_ir::types::PrimType;
use std::fmt;

mod lex;
mod typing;

use lex::{Tok, lex};

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl Pos {
    pub const START: Pos = Pos { line: 1, col: 1 };
}

/// An error at a line and column of a text: a syntax or type error in textual values, or a
/// malformed test block (`ogham::testing::SpecError`).
#[derive(Clone, Debug, PartialEq)]
pub struct TextError {
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.col, self.message)
    }
}

impl std::error::Error for TextError {}

/// The error `message` at `pos`.
pub fn error<T>(pos: Pos, message: impl Into<String>) -> Result<T, TextError> {
    Err(TextError {
        pos,
        message: message.into(),
    })
}

/// A parsed value whose unsuffixed numbers are not yet typed.
#[derive(Clone, Debug, PartialEq)]
pub struct TextValue {
    pub pos: Pos,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// A scalar whose type is known (suffixed number, `true`, `f32.nan`).
    Typed(Scalar),
    /// An unsuffixed integer.
    Int(i128),
    /// An unsuffixed float: its text without underscores (`-1.5e3`), or `nan`, `inf`, `-inf`.
    Float(String),
    Array(Vec<TextValue>),
    Empty {
        dims: Vec<usize>,
        elem: PrimType,
    },
    Tuple(Vec<TextValue>),
}

/// Parses whitespace-separated values.
pub fn parse(src: &str) -> Result<Vec<TextValue>, TextError> {
    parse_from(src, Pos::START)
}

/// Parses whitespace-separated values from text that starts at `start` of some larger file, so
/// positions in errors are positions in that file.
pub fn parse_from(src: &str, start: Pos) -> Result<Vec<TextValue>, TextError> {
    let tokens = lex(src, start)?;
    let mut parser = Parser { tokens, next: 0 };
    let mut values = Vec::new();
    while parser.peek().is_some() {
        values.push(parser.value()?);
    }
    Ok(values)
}

// ---------------------------------------------------------------------------------------------
// Parser (the lexer is in `lex`, typing in `typing`)

struct Parser {
    tokens: Vec<(Pos, Tok)>,
    next: usize,
}

impl Parser {
    fn peek(&self) -> Option<&(Pos, Tok)> {
        self.tokens.get(self.next)
    }

    fn end_pos(&self) -> Pos {
        self.tokens.last().map_or(Pos::START, |(p, _)| *p)
    }

    fn bump(&mut self, what: &str) -> Result<(Pos, Tok), TextError> {
        match self.tokens.get(self.next) {
            Some(t) => {
                self.next += 1;
                Ok(t.clone())
            }
            None => error(
                self.end_pos(),
                format!("unexpected end of input, expected {what}"),
            ),
        }
    }

    fn expect(&mut self, c: char) -> Result<Pos, TextError> {
        match self.bump(&format!("`{c}`"))? {
            (pos, Tok::Punct(d)) if d == c => Ok(pos),
            (pos, t) => error(pos, format!("expected `{c}`, found {}", describe(&t))),
        }
    }

    fn eat(&mut self, c: char) -> bool {
        let found = matches!(self.peek(), Some((_, Tok::Punct(d))) if *d == c);
        if found {
            self.next += 1;
        }
        found
    }

    fn value(&mut self) -> Result<TextValue, TextError> {
        let (pos, tok) = self.bump("a value")?;
        let kind = match tok {
            Tok::Punct('[') => Kind::Array(self.sequence(']')?),
            Tok::Punct('(') => {
                let mut items = self.sequence(')')?;
                let trailing_comma = matches!(&self.tokens[self.next - 2], (_, Tok::Punct(',')));
                if items.len() == 1 && !trailing_comma {
                    return Ok(items.remove(0));
                }
                Kind::Tuple(items)
            }
            Tok::Number {
                negative,
                digits,
                radix,
                is_float,
                suffix,
            } => number(pos, negative, &digits, radix, is_float, &suffix)?,
            Tok::Word { negative, word } if word == "empty" && !negative => self.empty()?,
            Tok::Word { negative, word } => named(pos, negative, &word)?,
            t => return error(pos, format!("expected a value, found {}", describe(&t))),
        };
        Ok(TextValue { pos, kind })
    }

    /// Comma-separated values up to `close` (a trailing comma is allowed).
    fn sequence(&mut self, close: char) -> Result<Vec<TextValue>, TextError> {
        let mut items = Vec::new();
        while !self.eat(close) {
            items.push(self.value()?);
            if !self.eat(',') {
                self.expect(close)?;
                break;
            }
        }
        Ok(items)
    }

    /// `empty([0][3]f32)` after the word `empty`.
    fn empty(&mut self) -> Result<Kind, TextError> {
        self.expect('(')?;
        let mut dims = Vec::new();
        while self.eat('[') {
            match self.bump("a size")? {
                (
                    _,
                    Tok::Number {
                        negative: false,
                        digits,
                        radix,
                        is_float: false,
                        suffix,
                    },
                ) if suffix.is_empty() => {
                    let (pos, _) = self.tokens[self.next - 1].clone();
                    match usize::from_str_radix(&digits, radix) {
                        Ok(d) => dims.push(d),
                        Err(_) => return error(pos, format!("size `{digits}` is too large")),
                    }
                }
                (pos, t) => return error(pos, format!("expected a size, found {}", describe(&t))),
            }
            self.expect(']')?;
        }
        let elem = match self.bump("an element type")? {
            (
                pos,
                Tok::Word {
                    negative: false,
                    word,
                },
            ) => match PrimType::from_name(&word) {
                Some(p) => p,
                None => return error(pos, format!("`{word}` is not a scalar type")),
            },
            (pos, t) => {
                return error(
                    pos,
                    format!("expected an element type, found {}", describe(&t)),
                );
            }
        };
        let close = self.expect(')')?;
        if dims.is_empty() {
            return error(
                close,
                "`empty` needs the array's shape, such as `empty([0]f32)`",
            );
        }
        if dims.iter().product::<usize>() != 0 {
            return error(
                close,
                "an `empty` array needs a size 0 somewhere in its shape",
            );
        }
        Ok(Kind::Empty { dims, elem })
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Number { .. } => "a number".to_string(),
        Tok::Word { word, .. } => format!("`{word}`"),
    }
}

fn number(
    pos: Pos,
    negative: bool,
    digits: &str,
    radix: u32,
    is_float: bool,
    suffix: &str,
) -> Result<Kind, TextError> {
    let literal = format!("{}{digits}{suffix}", if negative { "-" } else { "" });
    if digits.is_empty() {
        return error(pos, format!("`{literal}` has no digits"));
    }
    let float_text = || format!("{}{digits}", if negative { "-" } else { "" });
    let int = || -> Result<i128, TextError> {
        match i128::from_str_radix(digits, radix) {
            Ok(n) => Ok(if negative { -n } else { n }),
            Err(_) => error(pos, format!("integer `{literal}` is too large")),
        }
    };
    if suffix.is_empty() {
        return Ok(if is_float {
            Kind::Float(float_text())
        } else {
            Kind::Int(int()?)
        });
    }
    let Some(p) = PrimType::from_name(suffix).filter(|p| *p != PrimType::Bool) else {
        return error(
            pos,
            format!("`{literal}` has an unknown type suffix `{suffix}`"),
        );
    };
    if p.is_int() && is_float {
        return error(
            pos,
            format!("`{literal}`: a number with a fraction or exponent cannot be {p}"),
        );
    }
    let scalar = if p.is_float() {
        if radix != 10 {
            return error(
                pos,
                format!("`{literal}`: a hexadecimal or binary number cannot be {p}"),
            );
        }
        float_scalar(p, &float_text()).ok_or(())
    } else {
        int_scalar(p, int()?)
    };
    match scalar {
        Ok(s) => Ok(Kind::Typed(s)),
        Err(()) => error(pos, format!("`{literal}` does not fit in {p}")),
    }
}

/// Words: `true`, `false`, `nan`, `inf`, `f32.nan`, `f64.inf` (the last four may be negated).
fn named(pos: Pos, negative: bool, word: &str) -> Result<Kind, TextError> {
    let sign = if negative { "-" } else { "" };
    let kind = match word {
        "true" | "false" if !negative => Kind::Typed(Scalar::Bool(word == "true")),
        "nan" | "inf" => Kind::Float(format!("{sign}{word}")),
        _ => match word.split_once('.') {
            Some((ty, name @ ("nan" | "inf"))) if matches!(ty, "f32" | "f64") => {
                let p = PrimType::from_name(ty).unwrap_or(PrimType::F64);
                match float_scalar(p, &format!("{sign}{name}")) {
                    Some(s) => Kind::Typed(s),
                    None => return error(pos, format!("`{sign}{word}` is not a value")),
                }
            }
            _ => return error(pos, format!("`{sign}{word}` is not a value")),
        },
    };
    Ok(kind)
}

/// Parses float text (`-1.5e3`, `nan`, `-inf`) directly at type `p` (no double rounding).
fn float_scalar(p: PrimType, text: &str) -> Option<Scalar> {
    match p {
        PrimType::F32 => text.parse::<f32>().ok().map(Scalar::F32),
        PrimType::F64 => text.parse::<f64>().ok().map(Scalar::F64),
        _ => None,
    }
}

/// The integer `n` at integer type `p`, if it fits.
fn int_scalar(p: PrimType, n: i128) -> Result<Scalar, ()> {
    let s = match p {
        PrimType::I8 => Scalar::I8(n.try_into().map_err(drop)?),
        PrimType::I16 => Scalar::I16(n.try_into().map_err(drop)?),
        PrimType::I32 => Scalar::I32(n.try_into().map_err(drop)?),
        PrimType::I64 => Scalar::I64(n.try_into().map_err(drop)?),
        PrimType::U8 => Scalar::U8(n.try_into().map_err(drop)?),
        PrimType::F32 => Scalar::F32(n as f32),
        PrimType::F64 => Scalar::F64(n as f64),
        PrimType::Bool => return Err(()),
    };
    Ok(s)
}

// ---------------------------------------------------------------------------------------------
#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::BoundaryType;
    use crate::value::{Array, ArrayData, Value};
    use ogham_ir::types::Size;
    use ogham_ir::types::Type;
    use proptest::prelude::*;

    fn one(src: &str) -> Value {
        let vs = parse(src).unwrap();
        assert_eq!(vs.len(), 1, "{src}");
        vs[0].to_value().unwrap()
    }

    fn at(src: &str, t: &str) -> Result<Value, TextError> {
        let ty = match t {
            "i32" | "i64" | "u8" | "f32" | "f64" | "bool" | "i8" | "i16" => {
                Type::Prim(PrimType::from_name(t).unwrap())
            }
            _ => {
                let rank = t.matches("[]").count();
                let mut ty = Type::Prim(PrimType::from_name(&t[2 * rank..]).unwrap());
                for _ in 0..rank {
                    ty = Type::array(ty, Size::Unknown(0));
                }
                ty
            }
        };
        parse(src).unwrap()[0].coerce(&BoundaryType::of(&ty).unwrap())
    }

    fn err(src: &str) -> String {
        match parse(src).and_then(|vs| {
            vs.iter()
                .map(TextValue::to_value)
                .collect::<Result<Vec<_>, _>>()
        }) {
            Ok(v) => panic!("`{src}` parsed as {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn scalars() {
        assert_eq!(one("1i32"), Value::Scalar(Scalar::I32(1)));
        assert_eq!(one("-7i8"), Value::Scalar(Scalar::I8(-7)));
        assert_eq!(one("2.5f32"), Value::Scalar(Scalar::F32(2.5)));
        assert_eq!(one("1f64"), Value::Scalar(Scalar::F64(1.0)));
        assert_eq!(one("1e-3f64"), Value::Scalar(Scalar::F64(1e-3)));
        assert_eq!(one("0xffu8"), Value::Scalar(Scalar::U8(255)));
        assert_eq!(one("0b101i64"), Value::Scalar(Scalar::I64(5)));
        assert_eq!(one("1_000i32"), Value::Scalar(Scalar::I32(1000)));
        assert_eq!(one("true"), Value::Scalar(Scalar::Bool(true)));
        assert_eq!(
            one("-f64.inf"),
            Value::Scalar(Scalar::F64(f64::NEG_INFINITY))
        );
        assert!(matches!(one("f32.nan"), Value::Scalar(Scalar::F32(x)) if x.is_nan()));
        assert_eq!(
            one("-9223372036854775808i64"),
            Value::Scalar(Scalar::I64(i64::MIN))
        );
    }

    #[test]
    fn untyped_numbers_default_and_coerce() {
        assert_eq!(one("3"), Value::Scalar(Scalar::I32(3)));
        assert_eq!(one("-1.5"), Value::Scalar(Scalar::F64(-1.5)));
        assert!(matches!(one("nan"), Value::Scalar(Scalar::F64(x)) if x.is_nan()));
        assert_eq!(at("3", "f32").unwrap(), Value::Scalar(Scalar::F32(3.0)));
        assert_eq!(at("0.1", "f32").unwrap(), Value::Scalar(Scalar::F32(0.1)));
        assert_eq!(
            at("-inf", "f32").unwrap(),
            Value::Scalar(Scalar::F32(f32::NEG_INFINITY))
        );
        assert_eq!(at("255", "u8").unwrap(), Value::Scalar(Scalar::U8(255)));
        assert_eq!(
            at("300", "u8").unwrap_err().to_string(),
            "1:1: 300 does not fit in u8"
        );
        assert_eq!(
            at("1.5", "i32").unwrap_err().to_string(),
            "1:1: expected a value of type i32, found `1.5` (a float)"
        );
        assert_eq!(
            at("1i64", "i32").unwrap_err().to_string(),
            "1:1: expected a value of type i32, found `1i64`"
        );
    }

    #[test]
    fn arrays() {
        let v = one("[[1, 2], [3, 4]]");
        let expected = Array::new(vec![2, 2], ArrayData::I32(vec![1, 2, 3, 4].into())).unwrap();
        assert_eq!(v, Value::Array(expected));
        let v = at("[[1, 2.5]]", "[][]f32").unwrap();
        assert_eq!(
            v,
            Value::Array(Array::from_f32(vec![1, 2], vec![1.0, 2.5]).unwrap())
        );
        assert_eq!(
            one("[1f32, 2]"),
            Value::Array(Array::from_f32(vec![2], vec![1.0, 2.0]).unwrap())
        );
        assert_eq!(
            one("empty([0][3]f32)"),
            Value::Array(Array::from_f32(vec![0, 3], vec![]).unwrap())
        );
        assert_eq!(
            at("[]", "[][]f32").unwrap(),
            Value::Array(Array::from_f32(vec![0, 0], vec![]).unwrap())
        );
        assert_eq!(
            one("[empty([0]i64), empty([0]i64)]"),
            Value::Array(Array::from_i64(vec![2, 0], vec![]).unwrap())
        );
        assert_eq!(one("[1, 2,]"), one("[1,2]"));
    }

    #[test]
    fn several_values_and_tuples() {
        let vs = parse("1 [2f32]\n  (3i64, [true])").unwrap();
        assert_eq!(vs.len(), 3);
        assert_eq!(vs[2].pos, Pos { line: 2, col: 3 });
        let t = vs[2].to_value().unwrap();
        assert_eq!(t.describe(), "(i64, [1]bool)");
        assert_eq!(one("()"), Value::Tuple(vec![]));
        assert_eq!(one("(1i8)"), Value::Scalar(Scalar::I8(1)));
    }

    #[test]
    fn errors_name_line_and_column() {
        assert_eq!(
            err("[[1, 2],\n [3]]"),
            "2:2: irregular array: this has 1 elements, but an earlier one at the same depth has 2"
        );
        assert_eq!(
            err("[1, [2]]"),
            "1:5: expected a value of type i32, found an array"
        );
        assert_eq!(
            err("[[1], 2]"),
            "1:7: expected an array of type []i32, found `2` (an integer)"
        );
        assert_eq!(err("300u8"), "1:1: `300u8` does not fit in u8");
        assert_eq!(
            err("1.5i32"),
            "1:1: `1.5i32`: a number with a fraction or exponent cannot be i32"
        );
        assert_eq!(err("1u32"), "1:1: `1u32` has an unknown type suffix `u32`");
        assert_eq!(err("[1, 2"), "1:5: unexpected end of input, expected `]`");
        assert_eq!(
            err("[]"),
            "1:1: cannot tell the element type of an empty array: write it as `empty([0]i32)`"
        );
        assert_eq!(
            err("empty([2]f32)"),
            "1:13: an `empty` array needs a size 0 somewhere in its shape"
        );
        assert_eq!(err("foo"), "1:1: `foo` is not a value");
        assert_eq!(err("1 $"), "1:3: unexpected character `$`");
        assert_eq!(
            err("12abc"),
            "1:1: `12abc` has an unknown type suffix `abc`"
        );
        assert_eq!(err("[1;2]"), "1:3: unexpected character `;` after a value");
    }

    #[test]
    fn positions_are_relative_to_the_start() {
        let e = parse_from("[1,\n x]", Pos { line: 10, col: 5 }).unwrap_err();
        assert_eq!(e.pos, Pos { line: 11, col: 2 });
    }

    /// Equality where NaN equals NaN of the same type.
    fn same(a: &Value, b: &Value) -> bool {
        fn scalar(a: Scalar, b: Scalar) -> bool {
            match (a, b) {
                (Scalar::F32(x), Scalar::F32(y)) => x == y || (x.is_nan() && y.is_nan()),
                (Scalar::F64(x), Scalar::F64(y)) => x == y || (x.is_nan() && y.is_nan()),
                _ => a == b,
            }
        }
        match (a, b) {
            (Value::Scalar(x), Value::Scalar(y)) => scalar(*x, *y),
            (Value::Array(x), Value::Array(y)) => {
                x.shape() == y.shape()
                    && x.elem_type() == y.elem_type()
                    && (0..x.len()).all(|i| scalar(x.data().get(i), y.data().get(i)))
            }
            (Value::Tuple(xs), Value::Tuple(ys)) => {
                xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y))
            }
            _ => false,
        }
    }

    fn scalar_of(p: PrimType) -> BoxedStrategy<Scalar> {
        match p {
            PrimType::Bool => any::<bool>().prop_map(Scalar::Bool).boxed(),
            PrimType::I8 => any::<i8>().prop_map(Scalar::I8).boxed(),
            PrimType::I16 => any::<i16>().prop_map(Scalar::I16).boxed(),
            PrimType::I32 => any::<i32>().prop_map(Scalar::I32).boxed(),
            PrimType::I64 => any::<i64>().prop_map(Scalar::I64).boxed(),
            PrimType::U8 => any::<u8>().prop_map(Scalar::U8).boxed(),
            PrimType::F32 => any::<f32>().prop_map(Scalar::F32).boxed(),
            PrimType::F64 => any::<f64>().prop_map(Scalar::F64).boxed(),
        }
    }

    fn prim_strategy() -> impl Strategy<Value = PrimType> {
        proptest::sample::select(PrimType::ALL.to_vec())
    }

    fn array_strategy() -> impl Strategy<Value = Array> {
        (proptest::collection::vec(0usize..4, 1..4), prim_strategy()).prop_flat_map(|(shape, p)| {
            let n = shape.iter().product::<usize>();
            proptest::collection::vec(scalar_of(p), n).prop_map(move |elems| {
                let mut data = ArrayData::with_capacity(p, elems.len());
                for e in elems {
                    data.push(e).expect("elements have the array's type");
                }
                Array::new(shape.clone(), data).expect("data fits the shape")
            })
        })
    }

    fn value_strategy() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            prim_strategy()
                .prop_flat_map(scalar_of)
                .prop_map(Value::Scalar),
            array_strategy().prop_map(Value::Array),
        ];
        // One-element tuples do not exist: `(x)` is `x`.
        leaf.prop_recursive(2, 8, 3, |inner| {
            proptest::collection::vec(inner, 0..4)
                .prop_filter("no 1-tuples", |vs| vs.len() != 1)
                .prop_map(Value::Tuple)
        })
    }

    proptest! {
        #[test]
        fn print_then_parse_round_trips(v in value_strategy()) {
            let text = v.to_string();
            let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert_eq!(parsed.len(), 1);
            let back = parsed[0].to_value().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert!(same(&v, &back), "{} -> {:?}", text, back);
        }
    }
}
