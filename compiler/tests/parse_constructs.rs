//! The parser on every construct of the language: each input is parsed and printed back in the
//! fully parenthesised form of `syntax::print`, which shows the grouping the parser chose.

use ogham_compiler::syntax::ast::*;
use ogham_compiler::syntax::{parse_module, print};
use ogham_ir::diag::render;
use ogham_ir::source::{FileId, SourceMap, Span};
use ogham_ir::types::PrimType;

fn parse(src: &str) -> Vec<Decl> {
    let mut next = 0;
    match parse_module(FileId(0), src, &mut next) {
        Ok(decls) => decls,
        Err(diags) => {
            let mut sources = SourceMap::new();
            sources.add("test.og", None, src);
            panic!("parse failed:\n{}", render(&sources, &diags));
        }
    }
}

fn body(src: &str) -> Expr {
    match parse(&format!("def x = {src}")).pop() {
        Some(Decl::Def(d)) => d.body,
        _ => panic!("expected one definition"),
    }
}

/// Parses `src` as an expression and prints it back.
fn e(src: &str) -> String {
    print::expr(&body(src))
}

fn check(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        assert_eq!(e(src), *want, "parsing {src:?}");
    }
}

#[test]
fn binary_operator_precedence() {
    check(&[
        ("a |> f || b", "a |> (f || b)"),
        ("a || b && c", "a || (b && c)"),
        ("a && b == c", "a && (b == c)"),
        ("a == b | c", "a == (b | c)"),
        ("a | b << c", "a | (b << c)"),
        ("a << b + c", "a << (b + c)"),
        ("a + b * c", "a + (b * c)"),
        ("a * b ** c", "a * (b ** c)"),
        ("a ^ b & c", "(a ^ b) & c"),
        ("a < b != c >= d", "((a < b) != c) >= d"),
        ("a // b %% c / d % e", "(((a // b) %% c) / d) % e"),
    ]);
}

#[test]
fn associativity() {
    check(&[
        ("a - b - c", "(a - b) - c"),
        ("a / b * c", "(a / b) * c"),
        ("a ** b ** c", "a ** (b ** c)"),
        ("xs |> f |> g", "(xs |> f) |> g"),
        ("f <| g <| x", "f <| (g <| x)"),
        ("(f <| x) |> g", "(f <| x) |> g"),
    ]);
}

#[test]
fn unary_and_application() {
    check(&[
        ("-x + y", "(-x) + y"),
        ("-f x", "-(f x)"),
        ("!a && b", "(!a) && b"),
        ("a * -b", "a * (-b)"),
        ("- -x", "-(-x)"),
        ("f x y + g z", "(f x y) + (g z)"),
        ("f -1", "f - 1"),
        ("f (-1)", "f (-1)"),
        ("- 2 ** 2", "(-2) ** 2"),
        ("map (\\x -> x + 1) xs", "map (\\x -> x + 1) xs"),
        ("f32.sqrt x", "f32.sqrt x"),
        ("f32.i64 n / 2f32", "(f32.i64 n) / 2.0f32"),
    ]);
}

#[test]
fn index_and_field_adjacency() {
    check(&[
        ("f a[i]", "f a[i]"),
        ("f a [i]", "f a [i]"),
        ("a[i][j]", "a[i][j]"),
        ("a[i, j]", "a[i, j]"),
        ("a[i:j]", "a[i:j]"),
        ("a[:n]", "a[:n]"),
        ("a[i:]", "a[i:]"),
        ("a[:, 0]", "a[:, 0]"),
        ("a[i:j:s]", "a[i:j:s]"),
        ("a[::2]", "a[::2]"),
        ("a[i + 1 : n - 1]", "a[(i + 1):(n - 1)]"),
        ("t.0", "t.0"),
        ("t.0.1", "t.0.1"),
        ("r.x.y", "r.x.y"),
        ("f r.x", "f r.x"),
        ("(f x).0", "(f x).0"),
        ("xs[0].1", "xs[0].1"),
        ("(a, b).1", "(a, b).1"),
        ("[1, 2][0]", "[1, 2][0]"),
        ("f (x)[0]", "f x[0]"),
    ]);
}

#[test]
fn sections() {
    check(&[
        ("(+)", "(+)"),
        ("(-)", "(-)"),
        ("(*2)", "(* 2)"),
        ("(2-)", "(2 -)"),
        ("(-1)", "-1"),
        ("(- x)", "-x"),
        ("(a * b +)", "((a * b) +)"),
        ("(<= x)", "(<= x)"),
        ("(|> f)", "(|> f)"),
        ("(x ** )", "(x **)"),
        ("(x <|)", "(x <|)"),
        ("reduce (+) 0 xs", "reduce (+) 0 xs"),
    ]);
    let sub = body("(2-)");
    assert!(matches!(sub.kind, ExprKind::LeftSection(BinOp::Sub, _)));
    assert!(matches!(body("(-1)").kind, ExprKind::UnOp(UnOp::Neg, _)));
}

#[test]
fn literals() {
    let lit = |src: &str| match body(src).kind {
        ExprKind::Lit(l) => l,
        k => panic!("{src}: not a literal: {k:?}"),
    };
    let int = |v, s| Literal {
        value: LitValue::Int(v),
        suffix: s,
    };
    let float = |v, s| Literal {
        value: LitValue::Float(v),
        suffix: s,
    };
    assert_eq!(lit("1"), int(1, None));
    assert_eq!(lit("1i64"), int(1, Some(PrimType::I64)));
    assert_eq!(lit("255u8"), int(255, Some(PrimType::U8)));
    assert_eq!(lit("1_000"), int(1000, None));
    assert_eq!(lit("0xff"), int(255, None));
    assert_eq!(lit("0xFFi32"), int(255, Some(PrimType::I32)));
    assert_eq!(lit("0b101"), int(5, None));
    assert_eq!(lit("18446744073709551615"), int(u64::MAX, None));
    assert_eq!(lit("1.5"), float(1.5, None));
    assert_eq!(lit("2.5f32"), float(2.5, Some(PrimType::F32)));
    assert_eq!(lit("1f32"), float(1.0, Some(PrimType::F32)));
    assert_eq!(lit("1e-3"), float(1e-3, None));
    assert_eq!(lit("1.5E+2f64"), float(150.0, Some(PrimType::F64)));
    assert_eq!(
        lit("true"),
        Literal {
            value: LitValue::Bool(true),
            suffix: None
        }
    );
    assert_eq!(
        lit("false"),
        Literal {
            value: LitValue::Bool(false),
            suffix: None
        }
    );
    assert_eq!(
        lit("nan"),
        Literal {
            value: LitValue::Nan,
            suffix: None
        }
    );
    assert_eq!(
        lit("inf"),
        Literal {
            value: LitValue::Inf,
            suffix: None
        }
    );
    match body("f64.nan").kind {
        ExprKind::Var(q) => assert_eq!(
            (q.qualifier.as_deref(), q.name.as_str()),
            (Some("f64"), "nan")
        ),
        k => panic!("{k:?}"),
    }
    match body("x'").kind {
        ExprKind::Var(q) => assert_eq!(q.name, "x'"),
        k => panic!("{k:?}"),
    }
}

#[test]
fn let_chains_and_local_functions() {
    check(&[
        ("let x = 1 in x", "let x = 1 in x"),
        (
            "let x = 1\nlet y = 2\nin x + y",
            "let x = 1 in let y = 2 in x + y",
        ),
        ("let (a, b) = p in a", "let (a, b) = p in a"),
        ("let x: i64 = 5 in x", "let x: i64 = 5 in x"),
        ("let {a, b = c} = r in a", "let {a = a, b = c} = r in a"),
        ("let _ = 1 in 2", "let _ = 1 in 2"),
        (
            "let f (x: i64) = x + 1 in f 2",
            "let f (x: i64) = x + 1 in f 2",
        ),
        (
            "let f [n] 'a (xs: [n]a) : a = xs[0] in f",
            "let f [n] 'a (xs: [n]a) : a = xs[0] in f",
        ),
        ("let a[i] = v in a", "let a[i] = v in a"),
        ("let a[i, j] = v\nin a", "let a[i, j] = v in a"),
        (
            "let x = let y = 1 in y\nlet z = x in z",
            "let x = let y = 1 in y in let z = x in z",
        ),
        (
            "let x = if c then 1 else 2 let y = x in y",
            "let x = if c then 1 else 2 in let y = x in y",
        ),
    ]);
    assert!(matches!(
        body("let a[i] = v in a").kind,
        ExprKind::LetWith(..)
    ));
    assert!(matches!(
        body("let f x = x in f").kind,
        ExprKind::LetFun(..)
    ));
}

#[test]
fn trace_is_a_name_applied_to_a_string() {
    check(&[
        ("trace \"s\" (x / y) + 1", "(trace \"s\" (x / y)) + 1"),
        ("f (trace \"xs\" xs)", "f (trace \"xs\" xs)"),
        ("xs[trace \"i\" i]", "xs[(trace \"i\" i)]"),
        (
            "assert c \"m\" (trace \"v\" v)",
            "assert c \"m\" trace \"v\" v",
        ),
    ]);
    // `trace` stays an ordinary name elsewhere (a program may define a matrix trace).
    assert!(matches!(body("trace m").kind, ExprKind::Apply(..)));
    let mut next = 0;
    let errs = parse_module(FileId(0), "def x = f \"s\" y", &mut next).unwrap_err();
    assert_eq!(errs[0].code, "E0105");
}

#[test]
fn open_expressions() {
    check(&[
        ("if a then b else c + 1", "if a then b else c + 1"),
        (
            "assert (n > 0) \"n: positive\" n + 1",
            "assert (n > 0) \"n: positive\" n + 1",
        ),
        (
            "if a then if b then c else d else e",
            "if a then if b then c else d else e",
        ),
        ("\\x (y: f32) -> x + y", "\\x (y: f32) -> x + y"),
        ("\\(x, y) : f32 -> x", "\\(x, y) : f32 -> x"),
        ("\\x -> \\y -> x y", "\\x -> \\y -> x y"),
        ("x + (if c then 1 else 2)", "x + (if c then 1 else 2)"),
        (
            "loop acc = 0 for i < n do acc + i",
            "loop acc = 0 for i < n do acc + i",
        ),
        (
            "loop (a, b) = (x, y) while a < b do (b, a)",
            "loop (a, b) = (x, y) while a < b do (b, a)",
        ),
        (
            "loop acc = 0 for x in xs do acc + x",
            "loop acc = 0 for x in xs do acc + x",
        ),
        ("loop acc for i < 3 do acc", "loop acc for i < 3 do acc"),
        (
            "loop (acc: f32) = 0 for (a, b) in zip xs ys do acc",
            "loop acc: f32 = 0 for (a, b) in zip xs ys do acc",
        ),
    ]);
}

#[test]
fn updates_ascriptions_records() {
    check(&[
        ("a with [i] = v", "a with [i] = v"),
        ("a with [i, j] = v + 1", "a with [i, j] = v + 1"),
        ("a with [i:j] = v", "a with [i:j] = v"),
        ("r with x = 1", "r with x = 1"),
        ("r with x.y = 1", "r with x.y = 1"),
        ("t with 0 = 1", "t with 0 = 1"),
        ("x + y : i64", "(x + y) : i64"),
        ("xs :> [n]f32", "xs :> [n]f32"),
        ("(x : i32, y)", "(x : i32, y)"),
        ("{x = 1, y = 2f32}", "{x = 1, y = 2.0f32}"),
        ("{x, y}", "{x = x, y = y}"),
        ("{}", "{}"),
        ("()", "()"),
        ("[]", "[]"),
        ("[1, 2, 3,]", "[1, 2, 3]"),
        ("[[1, 2], [3, 4]]", "[[1, 2], [3, 4]]"),
        ("(1, (2, 3))", "(1, (2, 3))"),
    ]);
    assert!(matches!(body("a with [i] = v").kind, ExprKind::Update(..)));
    assert!(matches!(
        body("r with x = v").kind,
        ExprKind::RecordUpdate(..)
    ));
}

#[test]
fn types() {
    let ret = |t: &str| match parse(&format!("def f : {t} = x")).pop() {
        Some(Decl::Def(d)) => print::type_exp(&d.ret.expect("a return type")),
        _ => unreachable!(),
    };
    for (src, want) in [
        ("f32", "f32"),
        ("[n]f32", "[n]f32"),
        ("[n][m]f32", "[n][m]f32"),
        ("[3]i64", "[3]i64"),
        ("[]bool", "[]bool"),
        ("(i8, i16)", "(i8, i16)"),
        ("()", "()"),
        ("{a: f32, b: i64}", "{a: f32, b: i64}"),
        ("a -> b -> c", "a -> b -> c"),
        ("(a -> b) -> c", "(a -> b) -> c"),
        ("*[n]f32", "*[n]f32"),
        ("vec 3", "vec [3]"),
        ("pair [n]f32", "pair [n] f32"),
        ("[n]vec a", "[n]vec a"),
        ("(u8)", "u8"),
    ] {
        assert_eq!(ret(src), want, "type {src:?}");
    }
    match parse("def f : [n][3]u8 = x").pop() {
        Some(Decl::Def(d)) => match d.ret {
            Some(TypeExp::Array(SizeExp::Named(n), inner, _)) => {
                assert_eq!(n.name, "n");
                assert!(matches!(*inner, TypeExp::Array(SizeExp::Const(3, _), _, _)));
            }
            t => panic!("{t:?}"),
        },
        _ => unreachable!(),
    }
}

#[test]
fn declarations() {
    let src = "import \"lib/linalg\"\n\
               -- | Sums.\n\
               -- Second line.\n\
               #[inline] #[unsafe]\n\
               def f [n] 'a (xs: [n]a) (k: i64) : [n]a = xs\n\
               \n\
               -- | Not attached: blank line below.\n\
               \n\
               entry main (xs: []f32) : (f32, i64) = (1f32, 2)\n\
               -- plain comment\n\
               type pair 'a [n] = ([n]a, [n]a)\n\
               def g[n] (x: [n]i32) = x\n";
    let decls = parse(src);
    let printed = print::module(&decls);
    assert_eq!(
        printed,
        "import \"lib/linalg\"\n\
         -- | Sums.\n\
         -- Second line.\n\
         #[inline] #[unsafe] def f [n] 'a (xs: [n]a) (k: i64) : [n]a = xs\n\
         entry main (xs: []f32) : (f32, i64) = (1.0f32, 2)\n\
         type pair 'a [n] = ([n]a, [n]a)\n\
         def g [n] (x: [n]i32) = x\n"
    );
    match &decls[1] {
        Decl::Def(d) => {
            assert_eq!(d.doc.as_deref(), Some("Sums.\nSecond line."));
            assert_eq!(
                d.attrs.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
                ["inline", "unsafe"]
            );
            assert!(!d.entry);
            assert_eq!(&src[d.span.range()][..9], "#[inline]");
        }
        d => panic!("{d:?}"),
    }
    match &decls[2] {
        Decl::Def(d) => assert!(d.entry && d.doc.is_none()),
        d => panic!("{d:?}"),
    }
}

#[test]
fn doc_comment_on_type_alias() {
    match parse("-- | Points.\ntype point = (f32, f32)").pop() {
        Some(Decl::TypeAlias(t)) => assert_eq!(t.doc.as_deref(), Some("Points.")),
        d => panic!("{d:?}"),
    }
}

/// Collects every expression id and checks spans lie inside the text.
fn ids(e: &Expr, text: &str, out: &mut Vec<u32>) {
    assert!(
        e.span.start < e.span.end && e.span.end as usize <= text.len(),
        "bad span {:?}",
        e.span
    );
    out.push(e.id.0);
    let mut sub = |x: &Expr| ids(x, text, out);
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::OpSection(_) => {}
        ExprKind::Tuple(es) | ExprKind::ArrayLit(es) => es.iter().for_each(sub),
        ExprKind::Record(fs) => fs.iter().for_each(|(_, e)| sub(e)),
        ExprKind::Field(e, _)
        | ExprKind::UnOp(_, e)
        | ExprKind::LeftSection(_, e)
        | ExprKind::RightSection(_, e)
        | ExprKind::Trace(_, e) => sub(e),
        ExprKind::Ascribe(e, _) | ExprKind::Coerce(e, _) | ExprKind::Lambda(_, _, e) => sub(e),
        ExprKind::Index(e, idx) => {
            sub(e);
            index_ids(idx, &mut sub);
        }
        ExprKind::Apply(f, args) => {
            sub(f);
            args.iter().for_each(sub);
        }
        ExprKind::BinOp(_, a, b)
        | ExprKind::Let(_, a, b)
        | ExprKind::RecordUpdate(a, _, b)
        | ExprKind::Assert(a, _, b) => {
            sub(a);
            sub(b);
        }
        ExprKind::LetFun(f, b) => {
            sub(&f.body);
            sub(b);
        }
        ExprKind::LetWith(_, idx, v, b) => {
            index_ids(idx, &mut sub);
            sub(v);
            sub(b);
        }
        ExprKind::Update(a, idx, v) => {
            sub(a);
            index_ids(idx, &mut sub);
            sub(v);
        }
        ExprKind::If(c, t, f) => {
            sub(c);
            sub(t);
            sub(f);
        }
        ExprKind::Loop {
            init, form, body, ..
        } => {
            init.iter().for_each(|e| sub(e));
            match form {
                LoopForm::For(_, n) | LoopForm::ForIn(_, n) | LoopForm::While(n) => sub(n),
                LoopForm::Range(_, lo, hi) => {
                    sub(lo);
                    sub(hi);
                }
            }
            sub(body);
        }
    }
}

fn index_ids(idx: &[IndexArg], sub: &mut impl FnMut(&Expr)) {
    for a in idx {
        match a {
            IndexArg::Index(e) => sub(e),
            IndexArg::Slice {
                start, end, stride, ..
            } => {
                for e in [start, end, stride].into_iter().flatten() {
                    sub(e);
                }
            }
        }
    }
}

#[test]
fn expression_ids_are_dense_and_spans_nonempty() {
    let text = "def f (xs: []i32) = let y = xs[1:2] with [0] = 3 in map (\\x -> x + 1) y\n\
                entry main = loop acc = {a = 1} for i < 10 do acc with a = acc.a + i\n\
                def g = (+ 1) ((2 *) (f [1, 2, 3])[0]) |> (\\t -> t.0) : i32";
    let mut next = 7;
    let decls = parse_module(FileId(0), text, &mut next).expect("parses");
    let mut all = Vec::new();
    for d in &decls {
        if let Decl::Def(d) = d {
            ids(&d.body, text, &mut all);
        }
    }
    all.sort();
    assert_eq!(all, (7..next).collect::<Vec<_>>());
}

#[test]
fn spans_point_at_the_source() {
    let text = "def f = a + g b";
    let e = body("a + g b");
    assert_eq!(e.span, Span::new(FileId(0), 8, 15));
    match e.kind {
        ExprKind::BinOp(_, a, b) => {
            assert_eq!(&text[a.span.range()], "a");
            assert_eq!(&text[b.span.range()], "g b");
        }
        k => panic!("{k:?}"),
    }
}
