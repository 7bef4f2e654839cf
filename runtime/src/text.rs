//! Futhark's textual value syntax: the parser (the printer is [`Value`]'s `Display`).
//!
//! Syntax: scalars with suffixes (`1i32`, `2.5f32`, `1f64`, `0xffu8`, `true`, `f32.nan`,
//! `-f64.inf`), unsuffixed numbers (`1`, `-2.5`, `1e-3`, `nan`, `inf`), array literals
//! (`[[1, 2], [3, 4]]`, regular shapes only), empty arrays (`empty([0][3]f32)`), tuples
//! (`(1, [2])`, `()`); several values are separated by whitespace.
//!
//! Parsing gives [`TextValue`]s, which keep unsuffixed numbers *untyped* until they are coerced
//! to an expected [`BoundaryType`] ([`TextValue::coerce`]): an untyped integer becomes any
//! integer or float type it fits, an untyped float any float type. Without an expected type,
//! [`TextValue::to_value`] defaults them to `i32` and `f64` like the language does. Every error
//! names the line and column of the offending text.

use crate::boundary::BoundaryType;
use crate::value::{Array, ArrayData, Scalar, Value};
use ogham_ir::types::{PrimType, Size};
use std::fmt;

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl Pos {
    pub const START: Pos = Pos { line: 1, col: 1 };
}

/// A syntax or type error in textual values.
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

fn error<T>(pos: Pos, message: impl Into<String>) -> Result<T, TextError> {
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
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Punct(char),
    /// A number: sign, digits (no underscores), whether it has a fraction or exponent, radix
    /// and suffix.
    Number {
        negative: bool,
        digits: String,
        radix: u32,
        is_float: bool,
        suffix: String,
    },
    /// A word (`true`, `nan`, `empty`, `f32`) or qualified name (`f32.nan`), possibly negated.
    Word {
        negative: bool,
        word: String,
    },
}

struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    pos: Pos,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.col = 1;
        } else {
            self.pos.col += 1;
        }
        Some(c)
    }

    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek().filter(|&c| pred(c)) {
            s.push(c);
            self.bump();
        }
        s
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn lex(src: &str, start: Pos) -> Result<Vec<(Pos, Tok)>, TextError> {
    let mut cur = Cursor {
        chars: src.chars().peekable(),
        pos: start,
    };
    let mut tokens = Vec::new();
    while let Some(c) = cur.peek() {
        let pos = cur.pos;
        if c.is_whitespace() {
            cur.bump();
            continue;
        }
        if "[](),".contains(c) {
            cur.bump();
            tokens.push((pos, Tok::Punct(c)));
            continue;
        }
        let negative = c == '-';
        if negative {
            cur.bump();
        }
        let tok = match cur.peek() {
            Some(d) if d.is_ascii_digit() => lex_number(&mut cur, negative),
            Some(a) if a.is_ascii_alphabetic() => {
                let mut word = cur.take_while(is_word_char);
                if cur.peek() == Some('.') {
                    cur.bump();
                    word.push('.');
                    word.push_str(&cur.take_while(is_word_char));
                }
                Tok::Word { negative, word }
            }
            Some(other) if !negative => {
                return error(pos, format!("unexpected character `{other}`"));
            }
            _ => return error(pos, "`-` must be followed by a number"),
        };
        if let Some(c) = cur
            .peek()
            .filter(|c| !c.is_whitespace() && !"[](),".contains(*c))
        {
            return error(cur.pos, format!("unexpected character `{c}` after a value"));
        }
        tokens.push((pos, tok));
    }
    Ok(tokens)
}

fn lex_number(cur: &mut Cursor, negative: bool) -> Tok {
    let mut radix = 10;
    let mut digits = cur.take_while(|c| c.is_ascii_digit() || c == '_');
    if digits == "0" && matches!(cur.peek(), Some('x' | 'X' | 'b' | 'B')) {
        radix = if matches!(cur.bump(), Some('x' | 'X')) {
            16
        } else {
            2
        };
        digits = cur.take_while(|c| c.is_digit(radix) || c == '_');
    }
    let mut is_float = false;
    if radix == 10 {
        // A fraction needs a digit after the point; an exponent a digit after `e`/`e-`/`e+`.
        let mut ahead = cur.chars.clone();
        if ahead.next() == Some('.') && ahead.next().is_some_and(|c| c.is_ascii_digit()) {
            cur.bump();
            digits.push('.');
            digits.push_str(&cur.take_while(|c| c.is_ascii_digit() || c == '_'));
            is_float = true;
        }
        let mut ahead = cur.chars.clone();
        if matches!(ahead.next(), Some('e' | 'E')) {
            let mut sign = ahead.next();
            if matches!(sign, Some('+' | '-')) {
                sign = ahead.next();
            }
            if sign.is_some_and(|c| c.is_ascii_digit()) {
                digits.push(cur.bump().unwrap_or('e'));
                if let Some(s) = cur.peek().filter(|c| matches!(c, '+' | '-')) {
                    digits.push(s);
                    cur.bump();
                }
                digits.push_str(&cur.take_while(|c| c.is_ascii_digit()));
                is_float = true;
            }
        }
    }
    let suffix = cur.take_while(is_word_char);
    Tok::Number {
        negative,
        digits: digits.replace('_', ""),
        radix,
        is_float,
        suffix,
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

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
// Typing

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

#[cfg(test)]
mod tests {
    use super::*;
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
