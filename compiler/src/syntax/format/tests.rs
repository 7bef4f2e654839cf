//! Unit tests of the formatter: the layout of each form, parentheses, comments in awkward
//! places, and errors. (Every `.og` file of the repository and generated programs are checked
//! by `tests/format.rs`.)

use super::{format_source, formatting_off};
use ogham_ir::source::FileId;

fn fmt(text: &str) -> String {
    match format_source(FileId(0), text) {
        Ok(out) => out,
        Err(d) => panic!("cannot format {text:?}: {d:?}"),
    }
}

/// `text` formats to `expected`, which formats to itself.
fn case(text: &str, expected: &str) {
    assert_eq!(fmt(text), expected, "formatting {text:?}");
    assert_eq!(
        fmt(expected),
        expected,
        "formatting the expected text again"
    );
}

#[test]
fn short_definitions_stay_on_one_line() {
    case("def   f (x:i32) :i32=x+1", "def f (x: i32) : i32 = x + 1\n");
    case(
        "import \"lib/stats\"\nimport \"lib/linalg\"\ndef a = 1\ndef b = 2\n",
        "import \"lib/stats\"\nimport \"lib/linalg\"\n\ndef a = 1\n\ndef b = 2\n",
    );
}

#[test]
fn let_chains_take_one_line_each() {
    case(
        "def f (x: i32) = let a = x + 1 let b = a * 2 in a + b",
        "def f (x: i32) =\n  let a = x + 1\n  let b = a * 2\n  in a + b\n",
    );
    // One `let` on one line with its body stays there.
    case(
        "def f x = map (\\y -> let z = y + 1 in z * z) x\n",
        "def f x = map (\\y -> let z = y + 1 in z * z) x\n",
    );
    case(
        "def f x =\n  let z = x + 1\n  in z\n",
        "def f x =\n  let z = x + 1\n  in z\n",
    );
}

#[test]
fn parentheses_only_where_needed_or_clearer() {
    case(
        "def f a b c = ((a + b) * c) - (a - (b - c))",
        "def f a b c = (a + b) * c - (a - (b - c))\n",
    );
    case(
        "def f a b = (a == b) || (a < b && b < 0)",
        "def f a b = a == b || (a < b && b < 0)\n",
    );
    case("def f i k = (i & k) == 0", "def f i k = (i & k) == 0\n");
    case("def f x = -(-x)", "def f x = -(-x)\n");
    case(
        "def f x = (-x) ** 2 + -(x ** 2)",
        "def f x = (-x) ** 2 + -(x ** 2)\n",
    );
    case(
        "def f x = g (-1) (h x) (x.0) ((1).0) (x[0])",
        "def f x = g (-1) (h x) x.0 (1).0 x[0]\n",
    );
    case(
        "def f x = (\\y -> y) (if x then 1 else 2)",
        "def f x = (\\y -> y) (if x then 1 else 2)\n",
    );
    case("def f x = (x |> g) <| 1", "def f x = (x |> g) <| 1\n");
    case("def f x = x |> g |> h", "def f x = x |> g |> h\n");
    case(
        "def f = (+ 1) (- 1) (2 **) (a <|)",
        "def f = (+ 1) (-1) (2 **) (a <|)\n",
    );
    case(
        "def f c x = if c then (if x then 1 else 2) else 3",
        "def f c x = if c then (if x then 1 else 2) else 3\n",
    );
}

#[test]
fn literals_and_strings_are_copied() {
    case(
        "def f = trace \"a\\\"b\" (0xff, 1_000i64, 1.5e-3f32, nan, true)",
        "def f = trace \"a\\\"b\" (0xff, 1_000i64, 1.5e-3f32, nan, true)\n",
    );
    case(
        "def f x = assert (x > 0) \"x must be positive\" x",
        "def f x = assert (x > 0) \"x must be positive\" x\n",
    );
}

#[test]
fn long_forms_break() {
    let long = "def f (aaaaaaaaaa: i32) (bbbbbbbbbb: i32) = if aaaaaaaaaa < bbbbbbbbbb then aaaaaaaaaa * 2 + bbbbbbbbbb else bbbbbbbbbb * 3";
    case(
        long,
        "def f (aaaaaaaaaa: i32) (bbbbbbbbbb: i32) =\n  if aaaaaaaaaa < bbbbbbbbbb then aaaaaaaaaa * 2 + bbbbbbbbbb else bbbbbbbbbb * 3\n",
    );
    let app = format!(
        "def f xs = map2 (\\x y -> x + y) {} {}",
        "x".repeat(50),
        "y".repeat(50)
    );
    let expected = format!(
        "def f xs =\n  map2 (\\x y -> x + y) {}\n       {}\n",
        "x".repeat(50),
        "y".repeat(50)
    );
    case(&app, &expected);
    let sig = format!(
        "def f {} = 0",
        (0..20)
            .map(|i| format!("(x{i}: i64)"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let out = fmt(&sig);
    assert!(out.lines().all(|l| l.len() <= 100), "{out}");
    assert!(out.lines().nth(1).unwrap().starts_with("      (x"), "{out}");
}

#[test]
fn comments_stay_where_they_were() {
    case(
        "-- header\n\n-- | Doc of f.\n--   more.\ndef f x = -- after the =\n  -- own line\n  g x -- after g x\n    1\n-- end\n",
        "-- header\n\n-- | Doc of f.\n--   more.\ndef f x = -- after the =\n  -- own line\n  g x -- after g x\n    1\n-- end\n",
    );
    case(
        "def f c = if c -- the test\n then -- yes\n 1 else -- no\n 2\n",
        "def f c =\n  if c then -- the test\n    -- yes\n    1 -- no\n  else 2\n",
    );
    case(
        "type r = { a: i32, -- the a\n b: f32 } -- the b\n",
        "type r =\n  {a: i32, -- the a\n   b: f32} -- the b\n",
    );
}

#[test]
fn test_blocks_are_kept_verbatim() {
    let text = "-- Doubles.\n-- ==\n-- input { [1, 2] }\n-- output { [2, 4] }\n\nentry main (xs: []i32) : []i32 = map (* 2) xs\n";
    case(text, text);
}

#[test]
fn a_file_that_does_not_parse_gets_its_diagnostics() {
    let errors = format_source(FileId(0), "def f x = x + * 2\n").unwrap_err();
    assert_eq!(errors[0].code, "E0105");
    assert_eq!(errors[0].primary.as_ref().map(|l| l.span.start), Some(14));
}

#[test]
fn the_off_marker_is_a_comment_line() {
    assert!(formatting_off("def f = 1\n  -- ogham-fmt: off\n"));
    assert!(!formatting_off(
        "def f = 1 -- ogham-fmt: off is a trailing comment\n"
    ));
}

/// A `let` written on one line that does not fit, as an argument: formatting it again must
/// not move it (the source's line breaks decide whether such a `let` may stay on one line).
#[test]
fn a_broken_single_let_among_arguments_is_stable() {
    let text = "entry main (xs: []f32) (ys: []i32) =\n  (filter (\\q -> q > 0f32) xs, \
                reduce (+) 0f32 (let t1 = copy (reverse xs) in t1 with [reduce (+) 0i64 (map \
                i64.i32 ys)] = reduce f32.max (-f32.inf) xs))\n";
    let once = fmt(text);
    assert_eq!(fmt(&once), once);
}

#[test]
fn record_fields_are_punned_as_written() {
    case(
        "def area ({w, h = h}: {w: f32, h: f32}) = let {x, y = b} = {x = w, y = h} in x * b",
        "def area ({w, h}: {w: f32, h: f32}) = let {x, y = b} = {x = w, y = h} in x * b\n",
    );
}
