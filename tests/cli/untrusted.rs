//! Libraries are untrusted input (issue 39): a hand-edited `.ogl` file whose program would read
//! or write out of bounds, or whose entry points do not match their signatures, is refused at
//! load with a message naming the file, and an unedited one still runs.

use super::*;
use serde_json::{Value as Json, json};

/// Builds `source` (as `name.og`) into `name.ogl` in `dir`; returns the library's path and
/// decoded JSON.
fn build(dir: &Path, name: &str, source: &str) -> (PathBuf, Json) {
    let program = write(dir, &format!("{name}.og"), source);
    let lib = dir.join(format!("{name}.ogl"));
    let out = ogham(&[
        "build",
        program.to_str().unwrap(),
        "-o",
        lib.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json = serde_json::from_str(&std::fs::read_to_string(&lib).unwrap()).unwrap();
    (lib, json)
}

/// Writes `json` as the library `name.ogl` in `dir`.
fn save(dir: &Path, name: &str, json: &Json) -> PathBuf {
    let path = dir.join(format!("{name}.ogl"));
    std::fs::write(&path, json.to_string()).unwrap();
    path
}

/// The index in the library's sources of the file whose name ends with `name`, and its length.
fn source_file(json: &Json, name: &str) -> (usize, usize) {
    let files = json["sources"]["files"].as_array().unwrap();
    let i = files
        .iter()
        .position(|f| f["name"].as_str().unwrap().ends_with(name))
        .unwrap();
    (i, files[i]["text"].as_str().unwrap().len())
}

fn run(lib: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", lib.to_str().unwrap()];
    all.extend(args);
    ogham(&all)
}

const GET: &str = "entry main (xs: []f32) (i: i64) : f32 = xs[i]\n";

/// An unchecked range over the whole file turned every bounds check off: index 1000 read heap
/// garbage, 10^5 crashed.
#[test]
fn an_unchecked_range_that_is_no_unsafe_definition_is_refused() {
    let dir = scratch("untrusted_unchecked");
    let (lib, mut json) = build(&dir, "get", GET);
    let out = run(&lib, &["[1f32, 2f32]", "1000"]);
    assert_user_error(&out, "R0702");

    let (file, len) = source_file(&json, "get.og");
    json["program"]["unchecked"] = json!([{ "file": file, "start": 0, "end": len }]);
    let edited = save(&dir, "edited", &json);
    for index in ["1000", "100000"] {
        let out = run(&edited, &["[1f32, 2f32]", index]);
        assert_eq!(code(&out), 1, "{}", stdout(&out));
        assert!(
            stderr(&out).contains("edited.ogl")
                && stderr(&out).contains("is not an `#[unsafe]` definition"),
            "{}",
            stderr(&out)
        );
    }
}

/// The ranges of real `#[unsafe]` definitions are accepted: their indices go unchecked, as
/// the source asks.
#[test]
fn the_ranges_of_unsafe_definitions_are_accepted() {
    let dir = scratch("untrusted_unsafe");
    let source = "#[unsafe]\ndef get (xs: []f32) (i: i64) : f32 = xs[i]\n\
                  entry main (xs: []f32) (i: i64) : f32 = get xs i + xs[i]\n";
    let (lib, json) = build(&dir, "unsafe", source);
    assert_eq!(json["program"]["unchecked"].as_array().unwrap().len(), 1);
    let out = run(&lib, &["[1f32, 2f32]", "1"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "4.0f32");
    // The checked index (outside the definition) still fails.
    assert_user_error(&run(&lib, &["[1f32, 2f32]", "2"]), "R0702");
}

/// An entry point whose parameters or results are not its signature's is refused; before, a
/// result of another type was returned as is and a parameter of another type was an internal
/// error at the call.
#[test]
fn an_entry_that_does_not_match_its_signature_is_refused() {
    let dir = scratch("untrusted_signature");
    let (lib, json) = build(&dir, "inc", "entry main (x: i32) : i32 = x + 1\n");
    assert_eq!(stdout(&run(&lib, &["1i32"])).trim(), "2i32");

    let mut result = json.clone();
    result["program"]["functions"][0]["signature"]["results"][0] = json!({ "Prim": "F32" });
    let edited = save(&dir, "result", &result);
    let out = run(&edited, &["1i32"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("result 0 is not a f32"),
        "{}",
        stderr(&out)
    );

    let mut param = json;
    param["program"]["functions"][0]["signature"]["params"][0][1] = json!({ "Prim": "I64" });
    let edited = save(&dir, "param", &param);
    let out = run(&edited, &["1i64"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("parameter 0 is not a i64"),
        "{}",
        stderr(&out)
    );
}

/// The checked coercion `ys :> [n]f32` (a `reshape`) replaced by an `if` declared `[n]f32`
/// whose branches return `ys`: the kernel read `ys` at the indices of `n` with its bounds
/// check omitted as proven (a 1-element `ys` read at 1 and 2; a crash at n = 2 * 10^6).
#[test]
fn an_if_in_place_of_a_size_coercion_is_refused() {
    let dir = scratch("untrusted_coercion");
    let source = "entry main [n] (xs: [n]f32) (ys: []f32) : [n]f32 = map2 (+) xs (ys :> [n]f32)\n";
    let (lib, mut json) = build(&dir, "coerce", source);
    assert_user_error(&run(&lib, &["[1f32, 2f32, 3f32]", "[1f32]"]), "R0705");

    let stmt = &mut json["program"]["functions"][0]["body"]["stmts"][0];
    let reshape = stmt["exp"]["Reshape"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let [ys, dims] = &reshape[..] else {
        panic!("the coercion is the first statement: {stmt}");
    };
    let branch = json!({ "stmts": [], "result": [{ "Var": ys }] });
    stmt["exp"] = json!({ "If": {
        "cond": { "Const": { "ty": "Bool", "bits": 1 } },
        "then_body": branch,
        "else_body": branch,
        "ret": [{ "Array": { "elem": "F32", "shape": dims } }],
    } });
    let edited = save(&dir, "edited", &json);
    let out = run(&edited, &["[1f32, 2f32, 3f32]", "[1f32]"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("result 0 of the then branch has type"),
        "{}",
        stderr(&out)
    );
}
