//! Parser for the text form of the core and kernel IR: reads back exactly what
//! [`super::print`] writes (`ogham dev --print core|kir`, `--dump-after`, the IR snapshots and
//! the filetests of `tests/filetests/`), so that print -> parse -> print is the identity.
//!
//! # What it accepts
//!
//! - A program: `threshold NAME = DEFAULT -- DOC` lines, then `entry` functions. `--` starts a
//!   comment to the end of the line anywhere else (`-- kernel ...` lines of `--print kir`).
//! - A function: `entry NAME [SIZES] (PARAMS) : RESULTS =`, then statements and `in RESULTS`
//!   (a unique parameter is `*x_1: t`; `[SIZES]`, the size parameters, is absent when there
//!   are none).
//! - Variables are written `name_id`: the arena index after the last `_` (`x_12`,
//!   `suff_outer_par_0_381`). Every mention of an index must use the same name. A variable's
//!   type is the one its binder gives (`x_1: [n_0]f32`); variables bound without a type (size
//!   parameters, loop and segment-space indices) are `i64`.
//! - Constants carry their type: `1i64`, `-0.5f32`, `1e-7f32`, `f32.nan`, `-f64.inf`, `true`.
//! - Statements and expressions as `print` writes them; see `docs/compiler.md`, "IR text format
//!   and filetests", for the grammar.
//! - One form at a time ([`crate::Form`]): `parse_program::<Core>` reads core IR and rejects a
//!   kernel or a threshold (at its keyword), as core IR's types cannot hold one;
//!   `parse_program::<kir::HostOp>` reads kernel IR, where they may be host statements but not
//!   inside a kernel or a lambda (core IR again).
//!
//! # Invariants
//!
//! - Never panics: every error is a [`ParseError`] located at a line and column.
//! - Parsing checks what printing derives, so text that would print differently is rejected
//!   rather than silently changed: the size parameter list, the header's result types, the
//!   SOAC keyword (`map`, `redomap`, `scanomap`, `screma`) against its operators, a kernel's
//!   keyword against its operators, a conversion's source type.
//! - It does not check the IR's invariants (scoping, typing, uniqueness): run
//!   [`super::verify::verify`] on the result.
//! - What the text does not show is rebuilt with defaults: source locations are empty spans,
//!   the source-level signature is derived from the IR types, the arena slots no variable uses
//!   are unnamed `i64` variables, and `unchecked` (`#[unsafe]` ranges) is empty.

use crate::kir::{HostOp, SegKind, SegLevel, SegOp, Threshold, ThresholdId};
use crate::math::MathFn;
use crate::op::{BinOp, UnOp};
use crate::print::size_params;
use crate::source::Span;
use crate::types::{self, PrimType, Size};
use crate::{
    AssertKind, Body, Const, DimIndex, Exp, Form, Function, HistOp, Lambda, LoopForm, Param,
    Program, RedOp, ScanOp, Signature, Soac, Stmt, SubExp, Type, VarId, VarInfo,
};
use std::fmt;

/// A parse error at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses a whole program (thresholds, then functions) in the form `H`: core IR
/// (`parse_program::<Core>`) rejects kernels and thresholds in statements.
pub fn parse_program<H: Form>(text: &str) -> Result<Program<H>, ParseError> {
    let tokens = lex(text)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        vars: Vec::new(),
    };
    let mut program = Program::default();
    while p.peek_word("threshold") {
        program.thresholds.push(p.threshold()?);
    }
    while !p.at_end() {
        program.functions.push(p.function()?);
    }
    Ok(program)
}

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// An identifier, keyword or variable (`[A-Za-z_][A-Za-z0-9_']*`).
    Word(String),
    /// A number with its suffix, sign included (`-1i64`, `0.5f32`).
    Number(String),
    Str(String),
    /// A comment: the text after `--` and one space, to the end of the line.
    Comment(String),
    /// Punctuation and operators.
    Punct(&'static str),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) | Tok::Number(w) => write!(f, "`{w}`"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::Comment(_) => f.write_str("a comment"),
            Tok::Punct(p) => write!(f, "`{p}`"),
            Tok::End => f.write_str("the end of the text"),
        }
    }
}

struct Token {
    tok: Tok,
    line: usize,
    col: usize,
}

/// Operators and punctuation, longest first.
const PUNCT: [&str; 31] = [
    "**", "//", "%%", "==", "!=", "<=", ">=", "<<", ">>", "->", "(", ")", "[", "]", "{", "}", ",",
    ":", "=", "<", ">", "|", "^", "&", "+", "-", "*", "/", "%", "!", "\\",
];

/// The punctuation `.` (in `f32.sqrt`) is separate: it is not an operator.
const DOT: &str = ".";

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let err = |line, col, message: String| ParseError { line, col, message };
    while i < chars.len() {
        let c = chars[i];
        let (start_line, start_col) = (line, col);
        let start = i;
        let tok = if c == '\n' {
            line += 1;
            col = 1;
            i += 1;
            continue;
        } else if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            let comment: String = chars[start + 2..i].iter().collect();
            let comment = comment.strip_prefix(' ').unwrap_or(&comment).to_string();
            Tok::Comment(comment)
        } else if is_word_start(c) {
            while i < chars.len() && is_word_char(chars[i]) {
                i += 1;
            }
            Tok::Word(chars[start..i].iter().collect())
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i += 1;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign =
                    (d == '+' || d == '-') && matches!(chars[i - 1], 'e' | 'E') && {
                        // Only after digits: `1e-7`, not a suffix ending in `e`.
                        chars[start..i - 1].iter().all(|x| !x.is_ascii_alphabetic())
                    };
                if d.is_ascii_alphanumeric() || d == '.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Number(chars[start..i].iter().collect())
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(err(start_line, start_col, "unterminated string".into()));
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let (ch, used) = unescape(&chars[i + 1..]).ok_or_else(|| {
                            err(line, col + (i - start), "invalid escape in a string".into())
                        })?;
                        s.push(ch);
                        i += 1 + used;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            Tok::Str(s)
        } else if c == '.' {
            i += 1;
            Tok::Punct(DOT)
        } else {
            let rest: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) else {
                return Err(err(line, col, format!("unexpected character `{c}`")));
            };
            i += p.len();
            Tok::Punct(p)
        };
        col += i - start;
        tokens.push(Token {
            tok,
            line: start_line,
            col: start_col,
        });
    }
    tokens.push(Token {
        tok: Tok::End,
        line,
        col,
    });
    Ok(tokens)
}

/// The character an escape (after its `\`) denotes, as Rust's `{:?}` writes strings, and the
/// number of characters it used.
fn unescape(rest: &[char]) -> Option<(char, usize)> {
    let simple = match rest.first()? {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        '\\' => '\\',
        '"' => '"',
        '\'' => '\'',
        'u' => {
            if rest.get(1) != Some(&'{') {
                return None;
            }
            let close = rest.iter().position(|&c| c == '}')?;
            let hex: String = rest[2..close].iter().collect();
            let ch = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
            return Some((ch, close + 1));
        }
        _ => return None,
    };
    Some((simple, 1))
}

/// A constant from a number token (`-1i64`, `0.5f32`, `1e-7f64`).
fn number(text: &str) -> Option<Const> {
    let split = text
        .char_indices()
        .find(|&(_, c)| matches!(c, 'i' | 'u' | 'f'))
        .map(|(k, _)| k)?;
    let (digits, suffix) = text.split_at(split);
    Some(match suffix {
        "i8" => Const::I8(digits.parse().ok()?),
        "i16" => Const::I16(digits.parse().ok()?),
        "i32" => Const::I32(digits.parse().ok()?),
        "i64" => Const::I64(digits.parse().ok()?),
        "u8" => Const::U8(digits.parse().ok()?),
        "f32" => Const::F32(digits.parse().ok()?),
        "f64" => Const::F64(digits.parse().ok()?),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Parser

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// The arena of the function being parsed: name and type of each index seen so far.
    vars: Vec<Option<Slot>>,
}

struct Slot {
    name: String,
    ty: Option<Type>,
}

type Res<T> = Result<T, ParseError>;

impl Parser {
    // --- tokens -------------------------------------------------------------------------------

    /// The index of the next token that is not a comment.
    fn next_index(&self) -> usize {
        let mut k = self.pos;
        while matches!(self.tokens[k].tok, Tok::Comment(_)) {
            k += 1;
        }
        k
    }

    fn peek(&self) -> &Tok {
        &self.tokens[self.next_index()].tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        let mut k = self.next_index();
        for _ in 0..ahead {
            k += 1;
            while matches!(
                self.tokens[k.min(self.tokens.len() - 1)].tok,
                Tok::Comment(_)
            ) {
                k += 1;
            }
        }
        &self.tokens[k.min(self.tokens.len() - 1)].tok
    }

    fn at_end(&self) -> bool {
        *self.peek() == Tok::End
    }

    fn bump(&mut self) -> Tok {
        let k = self.next_index();
        self.pos = (k + 1).min(self.tokens.len() - 1);
        self.tokens[k].tok.clone()
    }

    fn error<T>(&self, message: impl Into<String>) -> Res<T> {
        let t = &self.tokens[self.next_index()];
        Err(ParseError {
            line: t.line,
            col: t.col,
            message: message.into(),
        })
    }

    fn expected<T>(&self, what: &str) -> Res<T> {
        self.error(format!("expected {what}, found {}", self.peek()))
    }

    fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn peek_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Word(x) if x == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let found = self.peek_punct(p);
        if found {
            self.bump();
        }
        found
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let found = self.peek_word(w);
        if found {
            self.bump();
        }
        found
    }

    fn punct(&mut self, p: &str) -> Res<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            self.expected(&format!("`{p}`"))
        }
    }

    fn keyword(&mut self, w: &str) -> Res<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            self.expected(&format!("`{w}`"))
        }
    }

    fn word(&mut self, what: &str) -> Res<String> {
        match self.peek() {
            Tok::Word(w) => {
                let w = w.clone();
                self.bump();
                Ok(w)
            }
            _ => self.expected(what),
        }
    }

    /// `open item (, item)* close`, possibly empty.
    fn list<T>(
        &mut self,
        open: &str,
        close: &str,
        mut item: impl FnMut(&mut Parser) -> Res<T>,
    ) -> Res<Vec<T>> {
        self.punct(open)?;
        let mut items = Vec::new();
        if self.eat_punct(close) {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat_punct(close) {
                return Ok(items);
            }
            self.punct(",")?;
        }
    }

    /// One item, or a parenthesised list of zero or several (as `print`'s `tuple` writes them).
    fn tuple<T>(&mut self, item: impl FnMut(&mut Parser) -> Res<T>) -> Res<Vec<T>> {
        if self.peek_punct("(") {
            self.list("(", ")", item)
        } else {
            let mut item = item;
            Ok(vec![item(self)?])
        }
    }

    // --- variables, constants, types ----------------------------------------------------------

    /// A variable mention `name_id`, checked against the other mentions of `id`.
    fn var(&mut self) -> Res<VarId> {
        let Tok::Word(w) = self.peek().clone() else {
            return self.expected("a variable (`name_id`)");
        };
        let parsed = w
            .rsplit_once('_')
            .and_then(|(name, id)| Some((name, id.parse::<u32>().ok()?)))
            .filter(|(_, id)| (*id as usize) < (1 << 24));
        let Some((name, id)) = parsed else {
            return self.expected("a variable (`name_id`)");
        };
        let name = if name == "v" { "" } else { name };
        let k = id as usize;
        if self.vars.len() <= k {
            self.vars.resize_with(k + 1, || None);
        }
        match &self.vars[k] {
            Some(slot) if slot.name != name => {
                let earlier = if slot.name.is_empty() {
                    "v"
                } else {
                    &slot.name
                };
                return self.error(format!(
                    "variable {id} is `{w}` here but `{earlier}_{id}` elsewhere"
                ));
            }
            Some(_) => {}
            None => {
                self.vars[k] = Some(Slot {
                    name: name.to_string(),
                    ty: None,
                })
            }
        }
        self.bump();
        Ok(VarId(id))
    }

    /// `x_1: t`: a variable and its type.
    fn binder(&mut self) -> Res<VarId> {
        let v = self.var()?;
        self.punct(":")?;
        let ty = self.ty()?;
        self.set_type(v, ty)?;
        Ok(v)
    }

    fn set_type(&mut self, v: VarId, ty: Type) -> Res<()> {
        if let Some(Some(slot)) = self.vars.get_mut(v.index()) {
            match &slot.ty {
                Some(old) if *old != ty => {
                    return self
                        .error(format!("variable {} is bound again with another type", v.0));
                }
                _ => slot.ty = Some(ty),
            }
        }
        Ok(())
    }

    /// A prim type name.
    fn prim(&mut self) -> Res<PrimType> {
        match self.peek() {
            Tok::Word(w) => match PrimType::from_name(w) {
                Some(p) => {
                    self.bump();
                    Ok(p)
                }
                None => self.expected("a scalar type"),
            },
            _ => self.expected("a scalar type"),
        }
    }

    /// `[d]...[d]prim`.
    fn ty(&mut self) -> Res<Type> {
        let mut shape = Vec::new();
        while self.eat_punct("[") {
            shape.push(self.subexp()?);
            self.punct("]")?;
        }
        Ok(Type::with_shape(self.prim()?, shape))
    }

    fn types(&mut self) -> Res<Vec<Type>> {
        self.tuple(Parser::ty)
    }

    /// A constant or a variable.
    fn subexp(&mut self) -> Res<SubExp> {
        match self.peek().clone() {
            Tok::Number(text) => match number(&text) {
                Some(c) => {
                    self.bump();
                    Ok(SubExp::Const(c))
                }
                None => self.error(format!(
                    "`{text}` is not a constant of a scalar type (write a suffix: `1i64`, `0.5f32`)"
                )),
            },
            Tok::Word(w) if w == "true" || w == "false" => {
                self.bump();
                Ok(SubExp::Const(Const::Bool(w == "true")))
            }
            Tok::Word(w) if PrimType::from_name(&w).is_some() => self.special_float(false),
            Tok::Punct("-") => {
                self.bump();
                self.special_float(true)
            }
            Tok::Word(_) => Ok(SubExp::Var(self.var()?)),
            _ => self.expected("a constant or a variable"),
        }
    }

    /// `f32.nan`, `f64.inf` (negated after a `-`).
    fn special_float(&mut self, negative: bool) -> Res<SubExp> {
        let ty = self.prim()?;
        self.punct(DOT)?;
        let member = self.word("`nan` or `inf`")?;
        let x = match member.as_str() {
            "nan" => f64::NAN,
            "inf" if negative => f64::NEG_INFINITY,
            "inf" => f64::INFINITY,
            _ => return self.error(format!("expected `nan` or `inf`, found `{member}`")),
        };
        let c = match ty {
            PrimType::F32 => Const::F32(x as f32),
            PrimType::F64 => Const::F64(x),
            _ => return self.error(format!("`{ty}` has no `{member}`")),
        };
        if negative && member == "nan" {
            return self.error("`-nan` is written `nan`");
        }
        Ok(SubExp::Const(c))
    }

    fn subexps(&mut self, open: &str, close: &str) -> Res<Vec<SubExp>> {
        self.list(open, close, Parser::subexp)
    }

    fn vars_list(&mut self) -> Res<Vec<VarId>> {
        self.list("(", ")", Parser::var)
    }

    // --- program structure --------------------------------------------------------------------

    /// `threshold NAME = DEFAULT -- DOC`.
    fn threshold(&mut self) -> Res<Threshold> {
        self.keyword("threshold")?;
        let id = self.threshold_id()?;
        self.punct("=")?;
        let default = match self.peek().clone() {
            Tok::Number(n) => match n.parse::<i64>() {
                Ok(d) => {
                    self.bump();
                    d
                }
                Err(_) => return self.expected("an integer default"),
            },
            _ => return self.expected("an integer default"),
        };
        // The comment is the documentation: read it directly, not skipped.
        let doc = match &self.tokens[self.pos].tok {
            Tok::Comment(doc) => doc.clone(),
            _ => return self.expected("`-- ` and the threshold's documentation"),
        };
        self.pos += 1;
        Ok(Threshold { id, default, doc })
    }

    fn threshold_id(&mut self) -> Res<ThresholdId> {
        let name = self.word("a threshold name")?;
        match ThresholdId::parse(&name) {
            Some(id) => Ok(id),
            None => self.error(format!(
                "`{name}` is not a threshold name (`suff_outer_par_K`, `suff_intra_par_K`)"
            )),
        }
    }

    fn function<H: Form>(&mut self) -> Res<Function<H>> {
        self.vars.clear();
        self.keyword("entry")?;
        let name = self.word("the entry point's name")?;
        let sizes_at = self.next_index();
        let sizes = if self.peek_punct("[") {
            self.list("[", "]", Parser::var)?
        } else {
            Vec::new()
        };
        let params = self.list("(", ")", |p| {
            let unique = p.eat_punct("*");
            Ok(Param {
                var: p.binder()?,
                unique,
            })
        })?;
        self.punct(":")?;
        let results_at = self.next_index();
        let results = self.types()?;
        self.punct("=")?;
        let body = self.body_lines()?;
        let vars = std::mem::take(&mut self.vars)
            .into_iter()
            .map(|slot| match slot {
                Some(Slot { name, ty }) => VarInfo {
                    name,
                    ty: ty.unwrap_or(Type::Prim(PrimType::I64)),
                },
                None => VarInfo {
                    name: String::new(),
                    ty: Type::Prim(PrimType::I64),
                },
            })
            .collect();
        let mut function = Function {
            name,
            vars,
            params,
            body,
            signature: Signature {
                params: Vec::new(),
                results: Vec::new(),
                fields: Vec::new(),
            },
            loc: Span::default(),
        };
        if size_params(&function) != sizes {
            return self.error_at(
                sizes_at,
                "the size parameters must be the variables of the parameters' dimensions that \
                 are not parameters, in order of appearance",
            );
        }
        let actual: Vec<Type> = function
            .body
            .result
            .iter()
            .map(|&se| function.subexp_type(se))
            .collect();
        if actual != results {
            return self.error_at(
                results_at,
                "the result types differ from the types of the body's results",
            );
        }
        function.signature = derived_signature(&function);
        Ok(function)
    }

    fn error_at<T>(&self, index: usize, message: &str) -> Res<T> {
        let t = &self.tokens[index];
        Err(ParseError {
            line: t.line,
            col: t.col,
            message: message.to_string(),
        })
    }

    /// Statements then `in results` (a function's body, or inside braces).
    fn body_lines<H: Form>(&mut self) -> Res<Body<H>> {
        let mut stmts = Vec::new();
        while self.peek_word("let") {
            stmts.push(self.stmt()?);
        }
        self.keyword("in")?;
        let result = self.tuple(Parser::subexp)?;
        Ok(Body { stmts, result })
    }

    /// `{ body }`.
    fn block<H: Form>(&mut self) -> Res<Body<H>> {
        self.punct("{")?;
        let body = self.body_lines()?;
        self.punct("}")?;
        Ok(body)
    }

    fn stmt<H: Form>(&mut self) -> Res<Stmt<H>> {
        self.keyword("let")?;
        let pat = self.tuple(Parser::binder)?;
        self.punct("=")?;
        let exp = self.exp()?;
        Ok(Stmt {
            pat,
            exp,
            loc: Span::default(),
        })
    }

    // --- expressions --------------------------------------------------------------------------

    fn exp<H: Form>(&mut self) -> Res<Exp<H>> {
        let Tok::Word(w) = self.peek().clone() else {
            return self.operator_exp();
        };
        if PrimType::from_name(&w).is_some()
            && *self.peek_at(1) == Tok::Punct(DOT)
            && let Tok::Word(member) = self.peek_at(2).clone()
            && member != "nan"
            && member != "inf"
        {
            return self.call_exp(&member);
        }
        match w.as_str() {
            "if" => self.if_exp(),
            "loop" => self.loop_exp(),
            "map" | "redomap" | "scanomap" | "screma" => self.screma(&w),
            "scatter" => self.scatter(),
            "hist" => self.hist(),
            "segmap" | "segred" | "segscan" | "seghist" => self.seg(&w),
            "iota" => {
                self.bump();
                let n = self.single_arg()?;
                Ok(Exp::Iota(n))
            }
            "replicate" => {
                self.bump();
                let args = self.subexps("(", ")")?;
                match args[..] {
                    [n, v] => Ok(Exp::Replicate(n, v)),
                    _ => self.error("`replicate` takes a count and a value"),
                }
            }
            "rearrange" => {
                self.bump();
                self.punct("(")?;
                let perm = self.list("(", ")", |p| match p.peek().clone() {
                    Tok::Number(n) => match n.parse::<usize>() {
                        Ok(d) => {
                            p.bump();
                            Ok(d)
                        }
                        Err(_) => p.expected("a dimension number"),
                    },
                    _ => p.expected("a dimension number"),
                })?;
                self.punct(",")?;
                let v = self.var()?;
                self.punct(")")?;
                Ok(Exp::Rearrange(v, perm))
            }
            "reshape" => {
                self.bump();
                self.punct("(")?;
                let shape = self.subexps("(", ")")?;
                self.punct(",")?;
                let v = self.var()?;
                self.punct(")")?;
                Ok(Exp::Reshape(v, shape))
            }
            "concat" => {
                self.bump();
                Ok(Exp::Concat(self.vars_list()?))
            }
            "copy" => {
                self.bump();
                self.punct("(")?;
                let v = self.var()?;
                self.punct(")")?;
                Ok(Exp::Copy(v))
            }
            "assert" | "assert_user" => {
                self.bump();
                let kind = if w == "assert" {
                    AssertKind::Size
                } else {
                    AssertKind::User
                };
                self.punct("(")?;
                let cond = self.subexp()?;
                self.punct(",")?;
                let Tok::Str(message) = self.peek().clone() else {
                    return self.expected("a string");
                };
                self.bump();
                self.punct(")")?;
                Ok(Exp::Assert {
                    cond,
                    message,
                    kind,
                })
            }
            "trace" => {
                self.bump();
                self.punct("(")?;
                let Tok::Str(label) = self.peek().clone() else {
                    return self.expected("a string");
                };
                self.bump();
                self.punct(",")?;
                let value = self.subexp()?;
                self.punct(")")?;
                Ok(Exp::Trace { label, value })
            }
            "threshold" => {
                let at = self.next_index();
                self.bump();
                self.punct("(")?;
                let id = self.threshold_id()?;
                self.punct(",")?;
                let size = self.subexp()?;
                self.punct(")")?;
                self.host(at, HostOp::Threshold { id, size })
            }
            _ => self.operator_exp(),
        }
    }

    fn single_arg(&mut self) -> Res<SubExp> {
        self.punct("(")?;
        let a = self.subexp()?;
        self.punct(")")?;
        Ok(a)
    }

    /// `t.f(args)`: a math function or a conversion (`f32.i64(x)`) at scalar type `t`.
    fn call_exp<H: Form>(&mut self, member: &str) -> Res<Exp<H>> {
        let ty = self.prim()?;
        self.punct(DOT)?;
        self.bump();
        if let Some(from) = PrimType::from_name(member) {
            let at = self.next_index();
            let a = self.single_arg()?;
            let actual = match a {
                SubExp::Const(c) => Some(c.prim_type()),
                SubExp::Var(v) => self.vars[v.index()]
                    .as_ref()
                    .and_then(|s| s.ty.as_ref().map(Type::elem)),
            };
            if actual.is_some_and(|t| t != from) {
                return self.error_at(at, &format!("the operand of `{ty}.{from}` is not `{from}`"));
            }
            return Ok(Exp::Convert(ty, a));
        }
        match MathFn::named(member) {
            Some(op) => Ok(Exp::Math(op, ty, self.subexps("(", ")")?)),
            None => self.error(format!(
                "`{ty}.{member}` is not a math function or conversion"
            )),
        }
    }

    /// An operand alone, an operator application, an index, an update or an array literal.
    fn operator_exp<H: Form>(&mut self) -> Res<Exp<H>> {
        if self.peek_punct("[") {
            let elems = self.subexps("[", "]")?;
            self.punct(":")?;
            let ty = self.ty()?;
            return Ok(Exp::ArrayLit(elems, ty));
        }
        if self.eat_punct("!") {
            return Ok(Exp::UnOp(UnOp::Not, self.unop_operand()?));
        }
        let negate = self.peek_punct("-")
            && !matches!(self.peek_at(1), Tok::Word(w) if PrimType::from_name(w).is_some());
        if negate {
            self.bump();
            return Ok(Exp::UnOp(UnOp::Neg, self.unop_operand()?));
        }
        let a = self.subexp()?;
        if let Tok::Punct(p) = self.peek().clone()
            && let Some(op) = BinOp::ALL.into_iter().find(|op| op.symbol() == p)
        {
            self.bump();
            return Ok(Exp::BinOp(op, a, self.subexp()?));
        }
        let SubExp::Var(v) = a else {
            return Ok(Exp::SubExp(a));
        };
        if self.peek_punct("[") {
            return Ok(Exp::Index(v, self.slice()?));
        }
        if self.eat_word("with") {
            let slice = self.slice()?;
            self.punct("=")?;
            return Ok(Exp::Update(v, slice, self.subexp()?));
        }
        Ok(Exp::SubExp(a))
    }

    /// The operand of a unary operator: a variable, or a constant in parentheses.
    fn unop_operand(&mut self) -> Res<SubExp> {
        if self.eat_punct("(") {
            let c = self.subexp()?;
            self.punct(")")?;
            if c.as_var().is_some() {
                return self.error("only a constant operand is parenthesised");
            }
            Ok(c)
        } else {
            Ok(SubExp::Var(self.var()?))
        }
    }

    /// `[i, a:+n*s, ...]`.
    fn slice(&mut self) -> Res<Vec<DimIndex>> {
        self.list("[", "]", |p| {
            let start = p.subexp()?;
            if !p.eat_punct(":") {
                return Ok(DimIndex::Fix(start));
            }
            p.punct("+")?;
            let len = p.subexp()?;
            p.punct("*")?;
            let stride = p.subexp()?;
            Ok(DimIndex::Slice { start, len, stride })
        })
    }

    /// `if c : ts then { ... } else { ... }`.
    fn if_exp<H: Form>(&mut self) -> Res<Exp<H>> {
        self.keyword("if")?;
        let cond = self.subexp()?;
        self.punct(":")?;
        let ret = self.types()?;
        self.keyword("then")?;
        let then_body = self.block()?;
        self.keyword("else")?;
        let else_body = self.block()?;
        Ok(Exp::If {
            cond,
            then_body,
            else_body,
            ret,
        })
    }

    /// `loop (x_1: t = init, ...) for i_2 < n do { ... }` or `... while c_3 do { ... }`.
    fn loop_exp<H: Form>(&mut self) -> Res<Exp<H>> {
        self.keyword("loop")?;
        let params = self.list("(", ")", |p| {
            let v = p.binder()?;
            p.punct("=")?;
            Ok((v, p.subexp()?))
        })?;
        let form = if self.eat_word("for") {
            let index = self.var()?;
            self.punct("<")?;
            let bound = self.subexp()?;
            LoopForm::For { index, bound }
        } else if self.eat_word("while") {
            LoopForm::While { cond: self.var()? }
        } else {
            return self.expected("`for` or `while`");
        };
        self.keyword("do")?;
        let body = self.block()?;
        Ok(Exp::Loop { params, form, body })
    }

    /// `\(x_1: t, ...) : ts -> { ... }`, or `-> results` for a body without statements.
    fn lambda(&mut self) -> Res<Lambda> {
        self.punct("\\")?;
        let params = self.list("(", ")", Parser::binder)?;
        self.punct(":")?;
        let ret = self.types()?;
        self.punct("->")?;
        let body = if self.peek_punct("{") {
            let body = self.block()?;
            if body.stmts.is_empty() {
                return self.error("a lambda without statements is written `-> results`");
            }
            body
        } else {
            Body {
                stmts: Vec::new(),
                result: self.tuple(Parser::subexp)?,
            }
        };
        Ok(Lambda { params, body, ret })
    }

    /// `lambda (neutral...)`, after an operator's keyword.
    fn operator(&mut self) -> Res<(Lambda, Vec<SubExp>)> {
        let lambda = self.lambda()?;
        let neutral = self.subexps("(", ")")?;
        Ok((lambda, neutral))
    }

    /// The operator lines of a screma or a kernel: `scan`, `reduce`, `reduce_comm`, `hist into`.
    fn operators(&mut self) -> Res<(Vec<ScanOp>, Vec<RedOp>, Vec<HistOp>)> {
        let (mut scans, mut reds, mut hists) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            if self.eat_word("scan") {
                let (lambda, neutral) = self.operator()?;
                scans.push(ScanOp { lambda, neutral });
            } else if self.peek_word("reduce") || self.peek_word("reduce_comm") {
                let commutative = self.peek_word("reduce_comm");
                self.bump();
                let (lambda, neutral) = self.operator()?;
                reds.push(RedOp {
                    lambda,
                    neutral,
                    commutative,
                });
            } else if self.peek_word("hist") && *self.peek_at(1) == Tok::Word("into".into()) {
                self.bump();
                self.bump();
                let dests = self.vars_list()?;
                self.keyword("bins")?;
                let num_bins = self.subexp()?;
                let (op, neutral) = self.operator()?;
                hists.push(HistOp {
                    num_bins,
                    dests,
                    op,
                    neutral,
                });
            } else {
                return Ok((scans, reds, hists));
            }
        }
    }

    /// `map w (xs) lambda`, or `redomap|scanomap|screma w (xs)`, operators, `map lambda`.
    fn screma<H: Form>(&mut self, keyword: &str) -> Res<Exp<H>> {
        let at = self.next_index();
        self.bump();
        let width = self.subexp()?;
        let inputs = self.vars_list()?;
        let (scans, reds, map) = if keyword == "map" {
            (Vec::new(), Vec::new(), self.lambda()?)
        } else {
            let (scans, reds, hists) = self.operators()?;
            let expected = match (scans.is_empty(), reds.is_empty()) {
                (true, true) => "map",
                (true, false) => "redomap",
                (false, true) => "scanomap",
                (false, false) => "screma",
            };
            if expected != keyword || !hists.is_empty() {
                return self.error_at(
                    at,
                    &format!("these operators make a `{expected}`, not a `{keyword}`"),
                );
            }
            self.keyword("map")?;
            (scans, reds, self.lambda()?)
        };
        Ok(Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        }))
    }

    /// `scatter w (xs) into (dests) lambda`.
    fn scatter<H: Form>(&mut self) -> Res<Exp<H>> {
        self.keyword("scatter")?;
        let width = self.subexp()?;
        let inputs = self.vars_list()?;
        self.keyword("into")?;
        let dests = self.vars_list()?;
        let map = self.lambda()?;
        Ok(Exp::Soac(Soac::Scatter {
            width,
            inputs,
            map,
            dests,
        }))
    }

    /// `hist w (xs)`, `hist into` lines, `map lambda`.
    fn hist<H: Form>(&mut self) -> Res<Exp<H>> {
        let at = self.next_index();
        self.keyword("hist")?;
        let width = self.subexp()?;
        let inputs = self.vars_list()?;
        let (scans, reds, hists) = self.operators()?;
        if !scans.is_empty() || !reds.is_empty() {
            return self.error_at(at, "a `hist` has only `hist into` operators");
        }
        self.keyword("map")?;
        let map = self.lambda()?;
        Ok(Exp::Soac(Soac::Hist {
            width,
            inputs,
            map,
            hists,
        }))
    }

    /// `segX level (i_1 < n, ...) : ts`, operators, `do { ... }`.
    fn seg<H: Form>(&mut self, keyword: &str) -> Res<Exp<H>> {
        let at = self.next_index();
        self.bump();
        let level = match self.word("`thread` or `block`")?.as_str() {
            "thread" => SegLevel::Thread,
            "block" => SegLevel::Block,
            other => return self.error(format!("expected `thread` or `block`, found `{other}`")),
        };
        let space = self.list("(", ")", |p| {
            let v = p.var()?;
            p.punct("<")?;
            Ok((v, p.subexp()?))
        })?;
        self.punct(":")?;
        let ret = self.types()?;
        let (scans, reds, hists) = self.operators()?;
        let kind = match keyword {
            "segmap" if scans.is_empty() && reds.is_empty() && hists.is_empty() => SegKind::Map,
            "segred" if scans.is_empty() && hists.is_empty() => SegKind::Red(reds),
            "segscan" if reds.is_empty() && hists.is_empty() => SegKind::Scan(scans),
            "seghist" if scans.is_empty() && reds.is_empty() => SegKind::Hist(hists),
            _ => {
                return self.error_at(at, &format!("a `{keyword}` does not take these operators"));
            }
        };
        self.keyword("do")?;
        let body = self.block()?;
        let seg = SegOp {
            level,
            space,
            kind,
            body,
            ret,
        };
        self.host(at, HostOp::Seg(Box::new(seg)))
    }

    /// A host operation (kernel IR), which the form `H` must allow; `at` is its first token.
    fn host<H: Form>(&self, at: usize, op: HostOp) -> Res<Exp<H>> {
        match H::from_host(op) {
            Some(op) => Ok(Exp::Host(op)),
            None => self.error_at(at, "a kernel or a threshold outside kernel IR's host code"),
        }
    }
}

/// A source-level signature for a parsed function, from its IR types: parameters named as
/// printed, sizes named after their variables.
fn derived_signature<H: Form>(function: &Function<H>) -> Signature {
    let source_type = |ty: &Type| {
        let mut t = types::Type::Prim(ty.elem());
        for dim in ty.shape().iter().rev() {
            let size = match dim {
                SubExp::Const(c) => Size::Const(c.bits()),
                SubExp::Var(v) => Size::Var(crate::print::var_name(function, *v)),
            };
            t = types::Type::array(t, size);
        }
        t
    };
    Signature {
        params: function
            .params
            .iter()
            .map(|p| {
                (
                    crate::print::var_name(function, p.var),
                    source_type(function.ty(p.var)),
                )
            })
            .collect(),
        results: function
            .body
            .result
            .iter()
            .map(|&se| source_type(&function.subexp_type(se)))
            .collect(),
        fields: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::print_program;

    fn round_trip(text: &str) {
        let program = parse_program::<HostOp>(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(print_program(&program), text);
    }

    fn error(text: &str) -> String {
        match parse_program::<HostOp>(text) {
            Ok(_) => panic!("parsed: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn scalars_and_constants() {
        round_trip(
            "entry main (x_0: i64, y_1: f32) : (i64, f32, bool, f64) =\n  \
             let a_2: i64 = x_0 + -1i64\n  \
             let b_3: f32 = y_1 * 1e-7f32\n  \
             let c_4: bool = f32.isnan(b_3)\n  \
             let d_5: f64 = f64.f32(b_3)\n  \
             let e_6: f64 = -f64.inf\n  \
             let n_7: i64 = -(3i64)\n  \
             let m_8: i64 = -n_7\n  \
             let t_9: bool = !c_4\n  \
             let u_10: f32 = f32.nan\n  \
             let v_11: f32 = f32.max(u_10, -0.0f32)\n  \
             let () = assert(t_9, \"a \\\"quoted\\\" message\\n\")\n  \
             in (a_2, v_11, true, d_5)\n",
        );
    }

    #[test]
    fn arrays_soacs_and_kernels() {
        round_trip(
            "threshold suff_outer_par_0 = 32768 -- main: map 0\n\n\
             entry main [n_0] (xs_1: [n_0]f32, *ys_2: [n_0]i64) : ([n_0]f32, f32, [2i64]i64) =\n  \
             let c_3: bool = threshold(suff_outer_par_0, n_0)\n  \
             let r_4: [n_0]f32 = segmap thread (gtid_5 < n_0) : f32\n    \
             do {\n      \
             let x_6: f32 = xs_1[gtid_5]\n      \
             in x_6\n    \
             }\n  \
             let s_7: f32 = redomap n_0 (r_4)\n    \
             reduce_comm \\(a_8: f32, b_9: f32) : f32 -> {\n      \
             let x_10: f32 = a_8 + b_9\n      \
             in x_10\n    \
             } (0.0f32)\n    \
             map \\(x_11: f32) : f32 -> x_11\n  \
             let l_12: [2i64]i64 = [1i64, 2i64] : i64\n  \
             let z_13: [n_0]i64 = ys_2 with [0i64:+1i64*1i64] = l_12\n  \
             in (r_4, s_7, l_12)\n",
        );
    }

    #[test]
    fn comments_are_skipped() {
        let text = "-- kernel main: a.og:1:1\nentry main (x_0: i64) : i64 = -- header\n  in x_0\n";
        let program = parse_program::<crate::Core>(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            print_program(&program),
            "entry main (x_0: i64) : i64 =\n  in x_0\n"
        );
    }

    #[test]
    fn errors_are_located() {
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  in y\n"),
            "2:6: expected a variable (`name_id`), found `y`"
        );
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  let y_1: i64 = x_0 $ 1i64\n  in y_1\n"),
            "2:22: unexpected character `$`"
        );
        assert_eq!(
            error("entry main (x_0: i64) : f32 =\n  in x_0\n"),
            "1:25: the result types differ from the types of the body's results"
        );
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  in y_0\n"),
            "2:6: variable 0 is `y_0` here but `x_0` elsewhere"
        );
        assert!(
            error("entry main (x_0: i64) : i64 =\n  let y_1: i64 = 1\n  in y_1\n")
                .starts_with("2:18: `1` is not a constant")
        );
        assert!(error("entry main (x_0: i64) : i64 =\n  let").starts_with("2:6: expected"));
        assert!(error("entry m (x_0: i64) : i64 =\n let s_1: i64 = \"ab").contains("unterminated"));
    }
}
