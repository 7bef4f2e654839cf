//! Syntax errors: codes, messages and spans of lexical and grammatical errors, and recovery
//! (several broken declarations give one error each, and nothing for the correct ones).

use ogham_compiler::syntax::{parse_expr, parse_module, print};
use ogham_ir::diag::Diagnostic;
use ogham_ir::source::FileId;

fn errors(src: &str) -> Vec<Diagnostic> {
    let mut next = 0;
    match parse_module(FileId(0), src, &mut next) {
        Ok(_) => panic!("{src:?} parsed"),
        Err(d) => d,
    }
}

/// `(code, message, text under the primary span)` of each error.
fn summary(src: &str) -> Vec<(&'static str, String, String)> {
    errors(src)
        .into_iter()
        .map(|d| {
            let span = d.span().expect("syntax errors have spans");
            (d.code, d.message, src[span.range()].to_string())
        })
        .collect()
}

fn one(src: &str) -> (&'static str, String, String) {
    let mut all = summary(src);
    assert_eq!(all.len(), 1, "{src:?}: {all:?}");
    all.remove(0)
}

#[test]
fn lexical_errors() {
    assert_eq!(
        one("def f = x $ 1"),
        ("E0101", "unexpected character `$`".into(), "$".into())
    );
    assert_eq!(
        one("def f = 1i33"),
        (
            "E0102",
            "invalid numeric literal `1i33`".into(),
            "1i33".into()
        )
    );
    assert_eq!(
        one("def f = 0x"),
        ("E0102", "invalid numeric literal `0x`".into(), "0x".into())
    );
    let big = "def f = 99999999999999999999";
    assert_eq!(one(big).0, "E0102");
    assert_eq!(
        one("import \"lib/x"),
        (
            "E0103",
            "unterminated string literal".into(),
            "\"lib/x".into()
        )
    );
    assert_eq!(
        one("def f = a .x"),
        (
            "E0104",
            "field access `.x` must directly follow an expression".into(),
            ".x".into()
        )
    );
}

#[test]
fn unexpected_tokens_name_what_was_expected() {
    assert_eq!(
        one("def f = )"),
        (
            "E0105",
            "expected an expression, found `)`".into(),
            ")".into()
        )
    );
    assert_eq!(one("def f (x: ) = 1").1, "expected a type, found `)`");
    assert_eq!(one("def = 3").1, "expected an identifier, found `=`");
    assert_eq!(
        one("def f = let (a, = 1 in a").1,
        "expected a pattern, found `=`"
    );
    assert_eq!(
        one("def f = [1, 2 def g = 1").1,
        "expected `]` or `,`, found `def`"
    );
    assert_eq!(one("def f = 1 )").1, "expected a definition, found `)`");
    assert_eq!(
        one("def f (x: [1.5]f32) = x"),
        ("E0107", "invalid array size".into(), "[1.5]".into())
    );
}

#[test]
fn unexpected_end_of_file() {
    let (code, message, under) = one("def f = let x = 1");
    assert_eq!(
        (code, message.as_str(), under.as_str()),
        ("E0106", "expected `let` or `in`, found end of file", "")
    );
    assert_eq!(
        one("def f = if a then b\n").1,
        "expected `else`, found end of file"
    );
    assert_eq!(
        one("def f = (1 + 2").1,
        "expected `)` or `,`, found end of file"
    );
    let d = errors("def f = 1 +  \n");
    assert_eq!(
        d[0].span().map(|s| s.start),
        Some(11),
        "points right after the last token"
    );
}

#[test]
fn recovery_reports_each_broken_declaration_once() {
    let src = "def a = 1 +\n\
               def b = 2\n\
               def c = (3\n\
               entry d = 4 $ 5\n\
               def e = [1, 2\n\
               type t = )\n\
               def ok = 1";
    let codes: Vec<_> = summary(src)
        .into_iter()
        .map(|(c, m, u)| format!("{c} {m} at {u:?}"))
        .collect();
    assert_eq!(
        codes,
        [
            "E0105 expected an expression, found `def` at \"def\"",
            "E0105 expected `)` or `,`, found `entry` at \"entry\"",
            "E0101 unexpected character `$` at \"$\"",
            "E0105 expected `]` or `,`, found `type` at \"type\"",
            "E0105 expected a type, found `)` at \")\"",
        ]
    );
}

#[test]
fn parse_expr_parses_one_expression() {
    let mut next = 3;
    let e = parse_expr(FileId(0), "map (\\x -> x * 2) xs[1:]", &mut next).expect("parses");
    assert_eq!(print::expr(&e), "map (\\x -> x * 2) xs[1:]");
    assert_eq!(e.span.start, 0);
    assert_eq!(next, 3 + 9);
    assert!(parse_expr(FileId(0), "1 def g = 2", &mut next).is_err());
    assert!(parse_expr(FileId(0), "", &mut next).is_err());
}
