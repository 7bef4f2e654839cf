//! Property tests of the parser: no input makes it panic, and printing a parsed program then
//! parsing it again gives the same program (compared through the printer, which ignores spans
//! and ids). 10,000 cases per property when `CI` is set, 500 otherwise.

use ogham_compiler::syntax::{parse_module, print};
use ogham_ir::source::FileId;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(if std::env::var_os("CI").is_some() {
        10_000
    } else {
        500
    })
}

/// Every kind of token, some malformed ones, and characters that are no token at all.
const VOCABULARY: &[&str] = &[
    "def",
    "entry",
    "let",
    "in",
    "if",
    "then",
    "else",
    "loop",
    "for",
    "while",
    "do",
    "with",
    "type",
    "import",
    "_",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ":>",
    "->",
    "\\",
    "=",
    "#[",
    "!",
    "+",
    "-",
    "*",
    "/",
    "%",
    "//",
    "%%",
    "**",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "|>",
    "<|",
    "x",
    "xs",
    "f",
    "x'",
    "_y",
    "i64",
    "f32",
    "f32.sqrt",
    "i64.max",
    "'a",
    ".0",
    ".x",
    "1",
    "2i64",
    "1.5",
    "2.5f32",
    "1e-3",
    "0xff",
    "0b101",
    "1_000",
    "1i33",
    "0x",
    "99999999999999999999",
    "true",
    "nan",
    "inf",
    "\"lib/x\"",
    "\"open",
    "-- comment\n",
    "-- | doc\n",
    "$",
    "@",
    "é",
    ".",
    "'",
    "\n",
    "\t",
];

fn parse(text: &str) -> Result<String, usize> {
    let mut next = 0;
    parse_module(FileId(0), text, &mut next)
        .map(|decls| print::module(&decls))
        .map_err(|diags| diags.len())
}

fn token_soup() -> impl Strategy<Value = String> {
    let token = proptest::sample::select(VOCABULARY);
    let sep = proptest::sample::select(&["", " ", " ", "\n"][..]);
    proptest::collection::vec((token, sep), 0..60).prop_map(|ts| {
        let body: String = ts.into_iter().flat_map(|(t, s)| [t, s]).collect();
        // Half the time inside a definition, so the expression grammar gets exercised.
        if body.len().is_multiple_of(2) {
            format!("def f = {body}")
        } else {
            body
        }
    })
}

/// Source text of an expression (open expressions parenthesised, as an operand must be).
fn expr_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        proptest::sample::select(&["x", "ys", "f32.sqrt", "i64.max", "x'", "()", "nan"][..])
            .prop_map(String::from),
        (0u64..1_000_000).prop_map(|n| n.to_string()),
        (
            0u32..1000,
            proptest::sample::select(&["", "f32", "f64"][..])
        )
            .prop_map(|(n, s)| format!("{n}.25{s}")),
        proptest::sample::select(&["i8", "i16", "i32", "i64", "u8"][..])
            .prop_map(|s| format!("7{s}")),
    ];
    // `<|` and `|>` do not mix without parentheses, so `<|` only comes fully parenthesised.
    let ops = &[
        "|>", "||", "&&", "==", "!=", "<", "<=", ">", ">=", "|", "^", "&", "<<", ">>", "+", "-",
        "*", "/", "%", "//", "%%", "**",
    ][..];
    leaf.prop_recursive(5, 48, 4, move |e| {
        let op = proptest::sample::select(ops);
        prop_oneof![
            (e.clone(), op.clone(), e.clone()).prop_map(|(a, o, b)| format!("{a} {o} ({b})")),
            (e.clone(), op.clone(), e.clone()).prop_map(|(a, o, b)| format!("({a}) {o} {b}")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("(({a}) <| ({b}))")),
            e.clone().prop_map(|a| format!("-({a})")),
            e.clone().prop_map(|a| format!("!({a})")),
            (e.clone(), e.clone(), e.clone()).prop_map(|(f, a, b)| format!("({f}) ({a}) ({b})")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            proptest::collection::vec(e.clone(), 0..4)
                .prop_map(|es| format!("[{}]", es.join(", "))),
            (e.clone(), e.clone()).prop_map(|(a, i)| format!("({a})[{i}]")),
            (e.clone(), e.clone(), e.clone())
                .prop_map(|(a, i, j)| format!("({a})[({i}):({j}), :, ::({i})]")),
            e.clone().prop_map(|a| format!("({a}).0.x")),
            (e.clone(), e.clone(), e.clone())
                .prop_map(|(c, a, b)| format!("(if {c} then {a} else {b})")),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("(let (p, _) = {a}\nlet q: i64 = p in {b})")),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("(let g [n] (z: [n]f32) = {a} in {b})")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("(let a[0, 1:] = {a} in {b})")),
            e.clone()
                .prop_map(|a| format!("(\\x (y: (i64, *[]f32)) : f32 -> {a})")),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("(loop acc = {a} for i < {b} do acc)")),
            (e.clone(), e.clone())
                .prop_map(|(a, b)| format!("(loop (u, v) = {a} for w in {b} do (v, u))")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("(loop s while {a} do {b})")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("(({a}) with [i, :] = {b})")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("(({a}) with x.0 = {b})")),
            e.clone()
                .prop_map(|a| format!("(({a}) : [n]{{a: f32, b: ()}})")),
            e.clone()
                .prop_map(|a| format!("(({a}) :> [3]vec [n] f32 -> bool)")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("{{x = {a}, y = {b}, z}}")),
            (op.clone(), e.clone()).prop_map(|(o, a)| if o == "-" {
                "(-)".to_string()
            } else {
                format!("({o} ({a}))")
            }),
            (op, e).prop_map(|(o, a)| format!("(({a}) {o})")),
        ]
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,80}") {
        let _ = parse(&text);
        let _ = parse(&format!("def f = {text}"));
    }

    #[test]
    fn random_tokens_never_panic(text in token_soup()) {
        let _ = parse(&text);
    }

    #[test]
    fn print_then_parse_is_identity(body in expr_text()) {
        let text = format!("-- | Doc.\n#[inline] def f [n] 'a (x: [n]a) {{b, c = _}} : [n]a = {body}\ntype t 'a = a");
        let printed = parse(&text).map_err(|n| TestCaseError::fail(format!("{n} errors in {text}")))?;
        let reparsed = parse(&printed).map_err(|n| TestCaseError::fail(format!("{n} errors in {printed}")))?;
        prop_assert_eq!(printed, reparsed);
    }
}
