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

#[test]
fn divisions_and_calls_keep_their_parentheses_for_the_reader() {
    // A division or remainder under another multiplicative operator is parenthesised.
    case(
        "def f a h = 1 - (a / h) * (a / h)",
        "def f a h = 1 - (a / h) * (a / h)\n",
    );
    case("def f a h = a / h * a", "def f a h = (a / h) * a\n");
    case("def f i n m = i % n * m", "def f i n m = (i % n) * m\n");
    // Not under the same operator, and not a product under a division.
    case("def f a b c = a / b / c", "def f a b c = a / b / c\n");
    case("def f a b c = a * b / c", "def f a b c = a * b / c\n");
    // A negation of a call: `!(f x)`, not `!f x`, which reads as `(!f) x`.
    case("def f x = !(isnan x)", "def f x = !(isnan x)\n");
    case("def f x = !isnan x", "def f x = !(isnan x)\n");
    case("def f x = -(g x) + -x", "def f x = -(g x) + -x\n");
    case("def f x = !x[0]", "def f x = !x[0]\n");
}

#[test]
fn long_tuples_and_tuple_types_fill_their_lines() {
    let names: Vec<String> = (0..16).map(|i| format!("value_{i:02}")).collect();
    let text = format!("def f = ({})", names.join(", "));
    let out = fmt(&text);
    assert_eq!(
        out,
        "def f =\n  (value_00, value_01, value_02, value_03, value_04, value_05, value_06, value_07, value_08,\n   value_09, value_10, value_11, value_12, value_13, value_14, value_15)\n"
    );
    assert_eq!(fmt(&out), out);
    // Items that are not short (calls) still go one a line.
    let calls: Vec<String> = "abcd"
        .chars()
        .map(|c| format!("f32.sqrt {}", c.to_string().repeat(20)))
        .collect();
    case(
        &format!("def f = ({})", calls.join(", ")),
        &format!("def f =\n  ({})\n", calls.join(",\n   ")),
    );
    // A tuple type in a signature: the return type goes to its own line, then fills.
    let types = ["[m][N]f64"; 12].join(", ");
    case(
        &format!("entry main [m][N] (xs: [m][N]f64) : ({types}) = g xs"),
        "entry main [m][N] (xs: [m][N]f64)\n           : ([m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64,\n              [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64) =\n  g xs\n",
    );
    // A type alias of one, and an array of tuples.
    case(
        &format!("type outputs [m] [N] = [m]({types})"),
        "type outputs [m] [N] =\n  [m]([m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64,\n      [m][N]f64, [m][N]f64, [m][N]f64, [m][N]f64)\n",
    );
}

#[test]
fn a_signature_with_its_equals_sign_fits_in_the_width() {
    // 99 columns without ` =`: the return type moves to the next line.
    let t = format!("{}[mm]f32", "[n]".repeat(25));
    let text = format!("def f (x: {t}) : i64 = x");
    assert_eq!(text.len(), 99 + " = x".len());
    case(&text, &format!("def f (x: {t})\n      : i64 =\n  x\n"));
}

#[test]
fn comments_in_signatures_stay_between_the_parameters() {
    case(
        "def f (x: i32) -- the x\n      (y: i32) : i32 =\n  x + y\n",
        "def f (x: i32) -- the x\n      (y: i32) : i32 =\n  x + y\n",
    );
    case(
        "def f (x: i32)\n      -- the y:\n      (y: i32) (z: i32) : i32 = x + y\n",
        "def f (x: i32)\n      -- the y:\n      (y: i32) (z: i32) : i32 =\n  x + y\n",
    );
    // Above a local function, a comment stays above it.
    case(
        "def f (x: i32) =\n  let a = x\n  -- twice\n  let g (y: i32) : i32 = y * 2\n  in g a\n",
        "def f (x: i32) =\n  let a = x\n  -- twice\n  let g (y: i32) : i32 = y * 2\n  in g a\n",
    );
}
