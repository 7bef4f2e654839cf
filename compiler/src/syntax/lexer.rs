//! The lexer: source text to a token stream for the grammar.
//!
//! A [logos] lexer produces the raw tokens; [`tokenize`] then applies the rules that need
//! context, so the grammar can stay LR(1):
//!
//! - `[` directly after an identifier, a literal, `)`, `]`, `}` or a field access (no whitespace
//!   in between) is an index bracket ([`Tok::IndexOpen`]); otherwise it opens an array literal,
//!   an array type or a size parameter ([`Tok::LBracket`]).
//! - A field access `.x` / `.0` must directly follow such a token too (E0104 otherwise).
//! - `(` followed by a type variable opens a constrained type parameter `('t: float)`
//!   ([`Tok::ParamOpen`]): no other construct puts a type variable after `(`, and the distinct
//!   token keeps `def f ('t: num) (x: t)` free of a conflict with parameter patterns.
//! - Comments are dropped (their ranges are kept in [`Lexed::comments`], for the formatter).
//!   A doc comment (`-- |` as the first thing on a line, continued by the `--` lines right
//!   below it) is collected into [`Lexed::docs`] for the parser to attach to the definition
//!   that follows it.
//! - Lexical errors become diagnostics (E0101–E0104) and a [`Tok::Error`] token, which the
//!   grammar never accepts: the parser recovers there without reporting the same spot twice.
//!
//! Invariant: token spans are byte offsets into the text, strictly increasing, never empty.

use crate::syntax::ast::{LitValue, Literal};
use logos::Logos;
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{FileId, Span};
use ogham_ir::types::PrimType;

/// Why logos could not produce a token.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LexError {
    #[default]
    UnexpectedChar,
    /// A numeric literal with a bad digit, suffix or exponent (`1i33`, `0x`, `1e`).
    InvalidNumber,
    /// An integer literal that does not fit in 64 bits.
    IntTooLarge,
    UnterminatedString,
}

/// The tokens of Ogham.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
pub enum Tok<'s> {
    #[token("def")]
    Def,
    #[token("entry")]
    Entry,
    #[token("let")]
    Let,
    #[token("in")]
    In,
    #[token("if")]
    If,
    #[token("assert")]
    Assert,
    #[token("then")]
    Then,
    #[token("else")]
    Else,
    #[token("loop")]
    Loop,
    #[token("for")]
    For,
    #[token("while")]
    While,
    #[token("do")]
    Do,
    #[token("with")]
    With,
    #[token("type")]
    Type,
    #[token("import")]
    Import,
    #[token("_", priority = 3)]
    Underscore,

    #[token("(")]
    LParen,
    /// `(` right before a type variable: opens a constrained type parameter `('t: float)`
    /// (made by [`tokenize`], never by logos).
    ParamOpen,
    #[token(")")]
    RParen,
    /// `[` opening an array literal, an array type or a size parameter.
    #[token("[")]
    LBracket,
    /// `[` directly after an expression: indexing (made by [`tokenize`], never by logos).
    IndexOpen,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token(":>")]
    ColonGt,
    #[token("->")]
    Arrow,
    #[token("\\")]
    Backslash,
    #[token("=")]
    Assign,
    #[token("#[")]
    HashBracket,
    #[token("!")]
    Bang,

    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("//")]
    SlashSlash,
    #[token("%%")]
    PercentPercent,
    #[token("**")]
    StarStar,
    #[token("==")]
    EqEq,
    #[token("!=")]
    BangEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("|>")]
    PipeRight,
    /// `..` of a range loop `for i in a..b`.
    #[token("..")]
    DotDot,
    #[token("<|")]
    PipeLeft,

    #[regex(r"[a-zA-Z_][a-zA-Z0-9_']*", |lex| lex.slice())]
    Ident(&'s str),
    /// `f32.sqrt`: a primitive type's module and a name, as one token.
    #[regex(r"(bool|i8|i16|i32|i64|u8|f32|f64)\.[a-zA-Z_][a-zA-Z0-9_']*", |lex| lex.slice())]
    QualName(&'s str),
    /// `'a` (the text without the quote).
    #[regex(r"'[a-zA-Z_][a-zA-Z0-9_']*", |lex| &lex.slice()[1..])]
    TypeVar(&'s str),
    /// `.x` or `.0` (the text without the dot).
    #[regex(r"\.([a-zA-Z_][a-zA-Z0-9_']*|[0-9]+)", |lex| &lex.slice()[1..])]
    Field(&'s str),
    #[regex(r"[0-9][0-9_]*(i8|i16|i32|i64|u8|f32|f64)?", |lex| decimal(lex.slice()), priority = 5)]
    #[regex(r"0[xX][0-9a-fA-F][0-9a-fA-F_]*(i8|i16|i32|i64|u8)?", |lex| radix(lex.slice(), 16), priority = 5)]
    #[regex(r"0[bB][01][01_]*(i8|i16|i32|i64|u8|f32|f64)?", |lex| radix(lex.slice(), 2), priority = 5)]
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?(f32|f64)?", |lex| float(lex.slice()), priority = 5)]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*(f32|f64)?", |lex| float(lex.slice()), priority = 5)]
    #[regex(r"[0-9][0-9a-zA-Z_']*", invalid_number, priority = 1)]
    #[token("true", |_| Literal { value: LitValue::Bool(true), suffix: None })]
    #[token("false", |_| Literal { value: LitValue::Bool(false), suffix: None })]
    #[token("nan", |_| Literal { value: LitValue::Nan, suffix: None })]
    #[token("inf", |_| Literal { value: LitValue::Inf, suffix: None })]
    Lit(Literal),
    /// `"lib/linalg"` (the text between the quotes; no escapes are interpreted).
    #[regex(r#""([^"\\\n]|\\[^\n])*""#, |lex| { let s = lex.slice(); &s[1..s.len() - 1] })]
    #[regex(r#""([^"\\\n]|\\[^\n])*"#, unterminated_string)]
    Str(&'s str),
    #[regex(r"--[^\n]*", |lex| lex.slice(), allow_greedy = true)]
    Comment(&'s str),

    /// A lexical error, already reported (made by [`tokenize`], never by logos).
    Error,
}

const SUFFIXES: [(&str, PrimType); 7] = [
    ("i8", PrimType::I8),
    ("i16", PrimType::I16),
    ("i32", PrimType::I32),
    ("i64", PrimType::I64),
    ("u8", PrimType::U8),
    ("f32", PrimType::F32),
    ("f64", PrimType::F64),
];

/// Splits a type suffix off a numeric literal: `"12i64"` -> `("12", Some(I64))`.
fn split_suffix(text: &str) -> (&str, Option<PrimType>) {
    for (name, ty) in SUFFIXES {
        if let Some(digits) = text.strip_suffix(name) {
            return (digits, Some(ty));
        }
    }
    (text, None)
}

/// An integer literal; one with a float suffix (`1f32`) is a float literal.
fn int_literal(value: u64, suffix: Option<PrimType>) -> Literal {
    let value = match suffix {
        Some(t) if t.is_float() => LitValue::Float(value as f64),
        _ => LitValue::Int(value),
    };
    Literal { value, suffix }
}

fn decimal(text: &str) -> Result<Literal, LexError> {
    let (digits, suffix) = split_suffix(text);
    let value = digits
        .replace('_', "")
        .parse()
        .map_err(|_| LexError::IntTooLarge)?;
    Ok(int_literal(value, suffix))
}

fn radix(text: &str, radix: u32) -> Result<Literal, LexError> {
    // The regex excludes hex digits from suffixes that could be read as digits (`f32`).
    let (digits, suffix) = split_suffix(&text[2..]);
    let value =
        u64::from_str_radix(&digits.replace('_', ""), radix).map_err(|_| LexError::IntTooLarge)?;
    Ok(int_literal(value, suffix))
}

fn float(text: &str) -> Result<Literal, LexError> {
    let (digits, suffix) = split_suffix(text);
    let value = digits
        .replace('_', "")
        .parse()
        .map_err(|_| LexError::InvalidNumber)?;
    Ok(Literal {
        value: LitValue::Float(value),
        suffix,
    })
}

fn invalid_number<'s>(_: &mut logos::Lexer<'s, Tok<'s>>) -> Result<Literal, LexError> {
    Err(LexError::InvalidNumber)
}

fn unterminated_string<'s>(_: &mut logos::Lexer<'s, Tok<'s>>) -> Result<&'s str, LexError> {
    Err(LexError::UnterminatedString)
}

/// A token with its byte range, as lalrpop wants it.
pub type Spanned<'s> = (usize, Tok<'s>, usize);

/// The result of lexing one file.
#[derive(Debug, Default)]
pub struct Lexed<'s> {
    pub tokens: Vec<Spanned<'s>>,
    /// Doc comments: the byte offset where the comment block ends and its text (the lines
    /// without the `-- |` / `--` markers, joined by newlines).
    pub docs: Vec<(usize, String)>,
    /// The byte range of every comment (doc comments too), in order; for the formatter.
    pub comments: Vec<(usize, usize)>,
    pub errors: Vec<Diagnostic>,
}

impl Tok<'_> {
    /// Whether an expression can end with this token, so that a `[` or `.x` right after it
    /// indexes or projects that expression.
    fn ends_atom(&self) -> bool {
        matches!(
            self,
            Tok::Ident(_)
                | Tok::QualName(_)
                | Tok::Lit(_)
                | Tok::Field(_)
                | Tok::RParen
                | Tok::RBracket
                | Tok::RBrace
        )
    }
}

/// Lexes `text` (the contents of `file`) into tokens, doc comments and lexical errors.
pub fn tokenize(file: FileId, text: &str) -> Lexed<'_> {
    let mut out = Lexed::default();
    // End of the previous real token, and whether a `[`/`.x` right there indexes it.
    let mut prev_end = usize::MAX;
    let mut prev_ends_atom = false;
    // The doc comment being collected: where it ends and its lines.
    let mut doc: Option<(usize, Vec<String>)> = None;
    let mut lexer = Tok::lexer(text);
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(file, range.start, range.end);
        let tok = match result {
            Ok(Tok::Comment(comment)) => {
                out.comments.push((range.start, range.end));
                let line_start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
                let own_line = text[line_start..range.start].trim().is_empty();
                let continues = doc.as_ref().is_some_and(|(end, _)| {
                    own_line && text[*end..range.start].matches('\n').count() == 1
                });
                let body = comment[2..].trim_start();
                if continues {
                    let (end, lines) = doc.as_mut().expect("checked above");
                    *end = range.end;
                    lines.push(body.to_string());
                } else {
                    out.docs
                        .extend(doc.take().map(|(end, lines)| (end, lines.join("\n"))));
                    if own_line && let Some(first) = body.strip_prefix('|') {
                        doc = Some((
                            range.end,
                            vec![first.strip_prefix(' ').unwrap_or(first).to_string()],
                        ));
                    }
                }
                continue;
            }
            Ok(Tok::LBracket) if prev_ends_atom && prev_end == range.start => Tok::IndexOpen,
            Ok(Tok::Field(name)) if !(prev_ends_atom && prev_end == range.start) => {
                out.errors.push(
                    Diagnostic::error(
                        "E0104",
                        format!("field access `.{name}` must directly follow an expression"),
                    )
                    .with_primary(span, "no expression right before this")
                    .with_help(format!("remove the space before `.{name}`")),
                );
                Tok::Error
            }
            Ok(tok) => tok,
            Err(error) => {
                out.errors.push(lex_error(error, lexer.slice(), span));
                Tok::Error
            }
        };
        out.docs
            .extend(doc.take().map(|(end, lines)| (end, lines.join("\n"))));
        prev_end = range.end;
        prev_ends_atom = tok.ends_atom();
        out.tokens.push((range.start, tok, range.end));
    }
    out.docs
        .extend(doc.take().map(|(end, lines)| (end, lines.join("\n"))));
    for i in 1..out.tokens.len() {
        if matches!(out.tokens[i].1, Tok::TypeVar(_)) && out.tokens[i - 1].1 == Tok::LParen {
            out.tokens[i - 1].1 = Tok::ParamOpen;
        }
    }
    out
}

fn lex_error(error: LexError, slice: &str, span: Span) -> Diagnostic {
    match error {
        LexError::UnexpectedChar => {
            let c = slice.chars().next().unwrap_or(' ');
            Diagnostic::error(
                "E0101",
                format!("unexpected character `{}`", c.escape_default()),
            )
            .with_primary(span, "not part of any token")
        }
        LexError::InvalidNumber => Diagnostic::error(
            "E0102",
            format!("invalid numeric literal `{slice}`"),
        )
        .with_primary(span, "not a number")
        .with_help(
            "numbers look like `1`, `1_000`, `0xff`, `0b101`, `1.5`, `1e-3`, with an optional type \
                 suffix `i8 i16 i32 i64 u8 f32 f64`",
        ),
        LexError::IntTooLarge => {
            Diagnostic::error("E0102", format!("integer literal `{slice}` is too large"))
                .with_primary(span, "does not fit in 64 bits")
        }
        LexError::UnterminatedString => Diagnostic::error("E0103", "unterminated string literal")
            .with_primary(span, "this string has no closing `\"`"),
    }
}
