//! Lexing and parsing: source text to [`ast`] with spans.
//!
//! [`lexer`] turns text into tokens (resolving the whitespace-sensitive `a[i]` / `a [i]` and
//! `e.x` rules and collecting doc comments); the LR(1) grammar in `grammar.lalrpop` builds the
//! AST through a [`Builder`], which hands out [`ast::ExprId`]s and records syntax errors.
//! The grammar recovers at declaration level: a broken definition is reported once and parsing
//! goes on with the next `def`/`entry`/`type`/`import`, so one run reports every broken
//! declaration without follow-on noise. [`print`] writes an AST back as source text (one line
//! a declaration, grouping shown); [`format`] lays a file out again, comments and all
//! (`ogham fmt`).
//!
//! Syntax error codes: E0101 unexpected character, E0102 invalid numeric literal, E0103
//! unterminated string, E0104 detached field access, E0105 unexpected token (also a string
//! literal as the argument of a function other than `trace`; a `..` outside `for i in a..b`
//! gets a help), E0106 unexpected end of file, E0107 invalid size or field number, E0108 a
//! range loop's counter that is not a name; E0109 (the formatter's) a file it cannot format
//! faithfully.

pub mod ast;
pub mod format;
pub mod lexer;
pub mod print;

use ast::{
    BinOp, Expr, ExprId, ExprKind, Ident, LitValue, Literal, LoopForm, Pattern, QualName, SizeExp,
    TypeExp,
};
use lalrpop_util::{ErrorRecovery, ParseError};
use lexer::{LexError, Tok};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::{FileId, Span};
use std::cell::{Cell, RefCell};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_imports)]
    grammar,
    "/syntax/grammar.rs"
);

/// Parses one module. `next_id` is the first free [`ast::ExprId`]; it is advanced past every id
/// the module uses, so ids stay unique across the modules of a program.
/// Returns all syntax errors found (the parser recovers where it can).
pub fn parse_module(
    file: FileId,
    text: &str,
    next_id: &mut u32,
) -> Result<Vec<ast::Decl>, Vec<Diagnostic>> {
    let lexed = lexer::tokenize(file, text);
    let mut decls = parse_tokens(file, text, lexed.tokens, lexed.errors, next_id)?;
    attach_docs(text, &mut decls, lexed.docs);
    Ok(decls)
}

/// Parses one expression (for tests and tools); ids are handed out as by [`parse_module`].
pub fn parse_expr(file: FileId, text: &str, next_id: &mut u32) -> Result<Expr, Vec<Diagnostic>> {
    let lexed = lexer::tokenize(file, text);
    // Parsed as the body of `def _ = ...`, written with empty tokens in front of the text.
    let mut tokens = vec![
        (0, Tok::Def, 0),
        (0, Tok::Ident("_"), 0),
        (0, Tok::Assign, 0),
    ];
    tokens.extend(lexed.tokens);
    let decls = parse_tokens(file, text, tokens, lexed.errors, next_id)?;
    match <[ast::Decl; 1]>::try_from(decls) {
        Ok([ast::Decl::Def(def)]) => Ok(def.body),
        _ => Err(vec![
            Diagnostic::error("E0105", "expected a single expression")
                .with_primary(Span::new(file, 0, text.len()), "more than one expression"),
        ]),
    }
}

fn parse_tokens(
    file: FileId,
    text: &str,
    tokens: Vec<lexer::Spanned<'_>>,
    lex_errors: Vec<Diagnostic>,
    next_id: &mut u32,
) -> Result<Vec<ast::Decl>, Vec<Diagnostic>> {
    let builder = Builder {
        file,
        text,
        next_id: Cell::from_mut(next_id),
        diagnostics: RefCell::new(lex_errors),
    };
    let result = grammar::ModuleParser::new().parse(&builder, tokens.into_iter().map(Ok));
    let mut diagnostics = builder.diagnostics.into_inner();
    match result {
        Ok(decls) if diagnostics.is_empty() => return Ok(decls),
        Ok(_) => {}
        Err(error) => diagnostics.extend(syntax_error(file, text, error)),
    }
    diagnostics.sort_by_key(|d| d.span().map(|s| s.start));
    Err(diagnostics)
}

/// Attaches each doc comment to the declaration that starts on the line right below it.
fn attach_docs(text: &str, decls: &mut [ast::Decl], docs: Vec<(usize, String)>) {
    let mut docs = docs.into_iter().peekable();
    for decl in decls {
        let (start, slot) = match decl {
            ast::Decl::Def(d) => (d.span.start as usize, &mut d.doc),
            ast::Decl::TypeAlias(t) => (t.span.start as usize, &mut t.doc),
            ast::Decl::Import(_) => continue,
        };
        while let Some((end, doc)) = docs.next_if(|(end, _)| *end <= start) {
            let gap = &text[end..start];
            if gap.trim().is_empty() && gap.matches('\n').count() == 1 {
                *slot = Some(doc);
            }
        }
    }
}

/// What the grammar's actions use to build the AST: spans in the current file, fresh
/// expression ids, and a place to put syntax errors.
pub(crate) struct Builder<'a> {
    file: FileId,
    text: &'a str,
    next_id: &'a Cell<u32>,
    diagnostics: RefCell<Vec<Diagnostic>>,
}

impl Builder<'_> {
    fn span(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    fn ident(&self, l: usize, name: &str, r: usize) -> Ident {
        Ident {
            name: name.to_string(),
            span: self.span(l, r),
        }
    }

    fn expr(&self, l: usize, r: usize, kind: ExprKind) -> Box<Expr> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        Box::new(Expr {
            id: ExprId(id),
            span: self.span(l, r),
            kind,
        })
    }

    fn binop(&self, l: usize, r: usize, op: BinOp, a: Box<Expr>, b: Box<Expr>) -> Box<Expr> {
        self.expr(l, r, ExprKind::BinOp(op, a, b))
    }

    /// `name "label" e`: a trace when `name` is `trace`; otherwise an error (no function takes
    /// a string), and `e`.
    fn trace(
        &self,
        l: usize,
        name_end: usize,
        r: usize,
        name: &str,
        label: &str,
        e: Box<Expr>,
    ) -> Box<Expr> {
        if name != "trace" {
            self.error(
                Diagnostic::error("E0105", "a string literal is not a value")
                    .with_primary(self.span(l, name_end), format!("`{name}` cannot take a string"))
                    .with_help("only `trace \"label\" e` and `assert cond \"message\" e` take a string literal"),
            );
            return e;
        }
        self.expr(l, r, ExprKind::Trace(label.to_string(), e))
    }

    fn qual_name(&self, text: &str) -> QualName {
        let (qualifier, name) = text.split_once('.').unwrap_or(("", text));
        QualName {
            qualifier: Some(qualifier.to_string()),
            name: name.to_string(),
        }
    }

    /// A type written as a single name: a primitive type, or a type variable or alias.
    fn type_name(&self, name: Ident, span: Span) -> TypeExp {
        match ogham_ir::types::PrimType::from_name(&name.name) {
            Some(p) => TypeExp::Prim(p, span),
            None => TypeExp::Name(name, Vec::new(), span),
        }
    }

    /// `for p in lo..hi`: the counter `p` must be a name (or `_`).
    fn range_form(&self, p: Pattern, lo: Box<Expr>, hi: Box<Expr>) -> LoopForm {
        let counter = match p {
            Pattern::Var(i) => i,
            Pattern::Wildcard(span) => Ident {
                name: "_".to_string(),
                span,
            },
            other => {
                let span = other.span();
                self.error(
                    Diagnostic::error("E0108", "the counter of a range loop must be a name")
                        .with_primary(span, "not a name")
                        .with_help("write `for i in a..b`; patterns are for `for x in xs`"),
                );
                Ident {
                    name: "_".to_string(),
                    span,
                }
            }
        };
        LoopForm::Range(counter, lo, hi)
    }

    /// The size in `[3]t`: an integer literal without suffix.
    fn size_const(&self, lit: Literal, span: Span) -> SizeExp {
        match lit {
            Literal {
                value: LitValue::Int(n),
                suffix: None,
            } => SizeExp::Const(n, span),
            _ => {
                self.error(
                    Diagnostic::error("E0107", "invalid array size")
                        .with_primary(span, "expected a size name or an integer without suffix"),
                );
                SizeExp::Any(span)
            }
        }
    }

    /// A tuple field number after `with` (`t with 0 = v`).
    fn field_number(&self, lit: Literal, span: Span) -> Ident {
        let name = match lit {
            Literal {
                value: LitValue::Int(n),
                suffix: None,
            } => n.to_string(),
            _ => {
                self.error(
                    Diagnostic::error("E0107", "invalid field name").with_primary(
                        span,
                        "expected a field name or a tuple position such as `0`",
                    ),
                );
                String::new()
            }
        };
        Ident { name, span }
    }

    fn error(&self, diagnostic: Diagnostic) {
        self.diagnostics.borrow_mut().push(diagnostic);
    }

    /// Records a syntax error the grammar recovered from.
    fn recovered(&self, recovery: ErrorRecovery<usize, Tok<'_>, LexError>) {
        if let Some(d) = syntax_error(self.file, self.text, recovery.error) {
            self.error(d);
        }
    }
}

/// The diagnostic for a parse error; `None` when the offending token is a lexical error that
/// has been reported already.
fn syntax_error(
    file: FileId,
    text: &str,
    error: ParseError<usize, Tok<'_>, LexError>,
) -> Option<Diagnostic> {
    let found = |l: usize, r: usize| format!("`{}`", text.get(l..r).unwrap_or_default());
    let (code, message, span, label) = match error {
        ParseError::UnrecognizedToken {
            token: (_, Tok::Error, _),
            ..
        } => return None,
        ParseError::UnrecognizedToken {
            token: (l, _, r),
            expected,
        } => {
            let expected = describe_expected(&expected);
            let message = format!("expected {expected}, found {}", found(l, r));
            ("E0105", message, (l, r), format!("expected {expected}"))
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let expected = describe_expected(&expected);
            let message = format!("expected {expected}, found end of file");
            (
                "E0106",
                message,
                (location, location),
                format!("expected {expected}"),
            )
        }
        ParseError::ExtraToken { token: (l, _, r) } => (
            "E0105",
            format!("unexpected {}", found(l, r)),
            (l, r),
            "unexpected token".to_string(),
        ),
        // Only lalrpop's own lexer and fallible actions make these; the grammar uses neither.
        ParseError::InvalidToken { location } => (
            "E0105",
            "invalid token".to_string(),
            (location, location),
            String::new(),
        ),
        ParseError::User { error } => (
            "E0105",
            format!("invalid token ({error:?})"),
            (0, 0),
            String::new(),
        ),
    };
    let d = Diagnostic::error(code, message).with_primary(Span::new(file, span.0, span.1), label);
    Some(if text.get(span.0..span.1) == Some("..") {
        d.with_help(
            "`..` belongs only to range loops, `loop acc = init for i in a..b do ...` (i = a, \
             a+1, ..., b-1); for an array of the range write `map (+ a) (iota (b - a))`",
        )
    } else {
        d
    })
}

/// Tokens that can start an expression, a type, a pattern and a declaration, as lalrpop names
/// the grammar's terminals.
const EXPR_START: &[&str] = &[
    "Lit",
    "Ident",
    "QualName",
    "\"(\"",
    "\"[\"",
    "\"{\"",
    "\"-\"",
    "\"!\"",
    "\"\\\\\"",
    "\"if\"",
    "\"let\"",
    "\"loop\"",
    "\"assert\"",
];
const TYPE_START: &[&str] = &["Ident", "\"(\"", "\"{\"", "\"[\"", "\"[idx\"", "\"*\""];
const PATTERN_START: &[&str] = &["Ident", "\"_\"", "\"(\"", "\"{\""];
const DECL_START: &[&str] = &["\"def\"", "\"entry\"", "\"type\"", "\"import\"", "\"#[\""];
const BINARY_OPS: &[&str] = &[
    "\"|>\"", "\"<|\"", "\"||\"", "\"&&\"", "\"==\"", "\"!=\"", "\"<\"", "\"<=\"", "\">\"",
    "\">=\"", "\"|\"", "\"^\"", "\"&\"", "\"<<\"", "\">>\"", "\"+\"", "\"-\"", "\"*\"", "\"/\"",
    "\"%\"", "\"//\"", "\"%%\"", "\"**\"",
];
/// What may follow a complete operand besides a binary operator.
const AFTER_OPERAND: &[&str] = &["\"[idx\"", "Field", "\":\"", "\":>\"", "\"with\"", "\"..\""];

/// A readable list of what the parser expected, from lalrpop's terminal names: token classes
/// become "an expression", "a type", ... and the rest are listed as `tokens`.
fn describe_expected(expected: &[String]) -> String {
    let has = |t: &str| expected.iter().any(|e| e == t);
    // `('` (a constrained type parameter) is a `(` where a parameter pattern could also be.
    let mut rest: Vec<&str> = expected
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "\"('\"")
        .collect();
    let mut items: Vec<String> = Vec::new();
    let take = |set: &[&str], rest: &mut Vec<&str>| rest.retain(|t| !set.contains(t));
    let expr = has("Lit") && has("Ident") && has("\"(\"");
    // `|>` binds loosest, so it may follow any complete operand.
    let operand_done = has("\"|>\"");
    if operand_done {
        // After a complete operand anything expression-like could follow; name only the rest.
        take(EXPR_START, &mut rest);
        take(BINARY_OPS, &mut rest);
        take(AFTER_OPERAND, &mut rest);
    } else if expr {
        items.push("an expression".into());
        take(EXPR_START, &mut rest);
    } else if has("Ident") && has("\"*\"") && has("\"[\"") {
        items.push("a type".into());
        take(TYPE_START, &mut rest);
    } else if has("Ident") && has("\"_\"") {
        items.push("a pattern".into());
        take(PATTERN_START, &mut rest);
    }
    if has("\"def\"") {
        items.push("a definition".into());
        take(DECL_START, &mut rest);
    }
    items.extend(rest.iter().map(|t| match *t {
        "Ident" => "an identifier".to_string(),
        "QualName" => "a qualified name".to_string(),
        "Lit" => "a literal".to_string(),
        "Str" => "a string".to_string(),
        "TypeVar" => "a type variable".to_string(),
        "Field" => "a field access".to_string(),
        "\"[idx\"" => "`[`".to_string(),
        quoted => format!("`{}`", quoted.trim_matches('"').replace("\\\\", "\\")),
    }));
    // Both kinds of `[` read the same.
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(item.clone()));
    if operand_done && items.is_empty() {
        items.push("an operator".into());
    }
    match items.len() {
        0 => "something else".to_string(),
        1 => items.remove(0),
        n => format!("{} or {}", items[..n - 1].join(", "), items[n - 1]),
    }
}
