//! `ogham run -o DIR`: the files of the outputs and their names. Record results are written
//! as `NAME.npy`, named and ordered as Python names them (declared field order, `result{i}`,
//! paths joined with `_`); results without a record as `out0.npy`, ... as before; standard
//! error says which file holds which output. Through the compiled backend, the interpreter
//! of `--check-laws` and a `.ogl` library.

use super::*;

const PROGRAM: &str = "\
type summary = {valid: i64, mean: f32, amplitude: f32}
entry summarise [m] (xs: [m]f32) : [m]summary =
  map (\\x -> {valid = 1, mean = x, amplitude = 2 * x}) xs
entry nested [m] (xs: [m]f32) : (i64, [m]{lo: f32, hi: f32}) =
  (m, map (\\x -> {hi = x + 1, lo = x - 1}) xs)
entry plain [m] (xs: [m]f32) : ([m]f32, i64) = (xs, m)
entry clash (x: f32) : {a_b: f32, a: {b: f32}} = {a_b = x, a = {b = 2 * x}}
";

/// The `.npy` files in `dir`, sorted, with their values as text.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, npy::read(&path).unwrap().to_string())
        })
        .collect();
    names.sort();
    names
}

/// Runs `entry` of [`PROGRAM`] on `[1, 2]` (or `3` for `clash`) with `-o` into a fresh
/// directory `name` under `dir`: the files written and the standard error.
fn run_into(
    dir: &Path,
    program: &Path,
    name: &str,
    options: &[&str],
) -> (Vec<(String, String)>, String) {
    let outs = dir.join(name);
    let out_dir = outs.to_str().unwrap();
    let mut args = vec!["run", "-o", out_dir];
    args.extend_from_slice(options);
    let program = program.to_str().unwrap();
    args.push(program);
    args.push(if options.contains(&"clash") {
        "3f32"
    } else {
        "[1f32, 2f32]"
    });
    let out = ogham(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "nothing printed with -o");
    (files(&outs), stderr(&out))
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn record_results_are_written_by_name() {
    let dir = scratch("outputs_named");
    let program = write(&dir, "summary.og", PROGRAM);
    let summary = pairs(&[
        ("amplitude.npy", "[2.0f32, 4.0f32]"),
        ("mean.npy", "[1.0f32, 2.0f32]"),
        ("valid.npy", "[1i64, 1i64]"),
    ]);
    for (i, backend) in ["cpu", "interp"].iter().enumerate() {
        let name = format!("summary{i}");
        let (written, err) = run_into(
            &dir,
            &program,
            &name,
            &["--entry", "summarise", "--backend", backend],
        );
        assert_eq!(written, summary);
        // in declared order, each file with the output's name
        let base = dir.join(&name);
        let expected = format!(
            "wrote {0}/valid.npy: valid ([2]i64)\nwrote {0}/mean.npy: mean ([2]f32)\n\
             wrote {0}/amplitude.npy: amplitude ([2]f32)\n",
            base.display()
        );
        assert!(err.ends_with(&expected), "{err}");
    }
    let (written, err) = run_into(
        &dir,
        &program,
        "laws",
        &["--entry", "summarise", "--check-laws"],
    );
    assert_eq!(written, summary, "{err}");

    // A record inside several results: its parts named by their path.
    let (written, err) = run_into(&dir, &program, "nested", &["--entry", "nested"]);
    assert_eq!(
        written,
        pairs(&[
            ("result0.npy", "2i64"),
            ("result1_hi.npy", "[2.0f32, 3.0f32]"),
            ("result1_lo.npy", "[0.0f32, 1.0f32]"),
        ])
    );
    let lo = err.find("result1_lo.npy: result1_lo").expect(&err);
    let hi = err.find("result1_hi.npy: result1_hi").expect(&err);
    assert!(lo < hi, "declared order: {err}");
}

#[test]
fn results_without_records_keep_their_numbers() {
    let dir = scratch("outputs_numbered");
    let program = write(&dir, "summary.og", PROGRAM);
    let (written, err) = run_into(&dir, &program, "plain", &["--entry", "plain"]);
    assert_eq!(
        written,
        pairs(&[("out0.npy", "[1.0f32, 2.0f32]"), ("out1.npy", "2i64")])
    );
    assert!(err.contains("/out0.npy: result0 ([2]f32)\n"), "{err}");
    assert!(err.contains("/out1.npy: result1 (i64)\n"), "{err}");

    // Names that would clash (`a_b` and `a`'s `b`): numbered, still said.
    let (written, err) = run_into(&dir, &program, "clash", &["--entry", "clash"]);
    assert_eq!(
        written,
        pairs(&[("out0.npy", "3.0f32"), ("out1.npy", "6.0f32")])
    );
    assert!(err.contains("/out0.npy: a_b (f32)\n"), "{err}");
    assert!(err.contains("/out1.npy: a_b (f32)\n"), "{err}");
}

#[test]
fn a_library_names_record_results_too() {
    let dir = scratch("outputs_library");
    let program = write(&dir, "summary.og", PROGRAM);
    let out = ogham(&["build", program.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (written, _) = run_into(
        &dir,
        &dir.join("summary.ogl"),
        "lib",
        &["--entry", "summarise"],
    );
    assert_eq!(
        written.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["amplitude.npy", "mean.npy", "valid.npy"]
    );
}

#[test]
fn check_shows_record_results_in_declared_order() {
    let dir = scratch("outputs_check");
    let program = write(&dir, "summary.og", PROGRAM);
    let out = ogham(&["check", program.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(
        shown.contains("entry summarise (xs: [m]f32) : [m]{valid: i64, mean: f32, amplitude: f32}"),
        "{shown}"
    );
    // A tuple's results are results of their own: the record's order is its declaration's.
    assert!(
        shown.contains("entry nested (xs: [m]f32) : (i64, [m]{lo: f32, hi: f32})"),
        "{shown}"
    );
    assert!(
        shown.contains("entry clash (x: f32) : {a_b: f32, a: {b: f32}}"),
        "{shown}"
    );
}
