//! `trace "label" e` from the command line: what each executor prints (the same traces on
//! `interp`, `core` and `kir`, in evaluation order, which fusion may change), the compiled
//! backends' warning `W0730`, `ogham run --pixel` and `ogham repl`.

use super::{ogham, ogham_with_stdin, scratch, write};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The trace lines of a run's standard error, sorted (executors may interleave them
/// differently).
fn sorted_traces(o: &std::process::Output) -> Vec<String> {
    let mut lines: Vec<String> = stderr(o)
        .lines()
        .filter(|l| l.starts_with("trace "))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn case(name: &str) -> String {
    format!("{}/tests/cases/trace/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_tracing_executor_prints_the_same_traces() {
    let runs: [(&str, &[&str]); 3] = [
        ("identity.og", &["[1f32, 2f32, 4f32]", "2f32"]),
        ("fusion.og", &["[1i64, 2i64, 3i64]"]),
        ("not_merged.og", &["3i64", "[1i64, 2i64]"]),
    ];
    for (file, args) in runs {
        let path = case(file);
        let run = |backend: &str| {
            let mut argv = vec!["run", "--backend", backend, path.as_str()];
            argv.extend(args);
            let o = ogham(&argv);
            assert!(o.status.success(), "{file} on {backend}: {}", stderr(&o));
            o
        };
        let reference = run("interp");
        assert!(!sorted_traces(&reference).is_empty(), "{file}");
        for backend in ["core", "kir"] {
            let o = run(backend);
            assert_eq!(stdout(&o), stdout(&reference), "{file} on {backend}");
            assert_eq!(
                sorted_traces(&o),
                sorted_traces(&reference),
                "{file} on {backend}"
            );
        }
    }
    let o = ogham(&["run", &case("identity.og"), "[1f32, 2f32, 4f32]", "2f32"]);
    let at = |l: u32, c: u32| format!("tests/cases/trace/identity.og:{l}:{c}");
    let expected = [
        format!("trace d at {}: 2.0f32", at(13, 22)),
        format!("trace slope at {}: 0.5f32", at(8, 37)),
        format!("trace slope at {}: 1.0f32", at(8, 37)),
        format!("trace slope at {}: 2.0f32", at(8, 37)),
        format!("trace total at {}: 3.5f32", at(12, 15)),
        format!("trace ys at {}: [0.5f32, 1.0f32, 2.0f32]", at(13, 7)),
    ];
    let got: Vec<String> = sorted_traces(&o)
        .into_iter()
        .map(|l| {
            l.replace(env!("CARGO_MANIFEST_DIR"), "")
                .replace("/tests", "tests")
        })
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn the_compiled_backends_warn_and_print_no_trace() {
    let dir = scratch("trace_compiled");
    let file = write(
        &dir,
        "p.og",
        "entry main (xs: []f32) : []f32 = map (\\x -> trace \"x\" (x + 1f32)) xs\n",
    );
    let file = file.to_str().unwrap();
    for _ in 0..2 {
        let o = ogham(&["run", "--backend", "cpu", file, "[1f32, 2f32]"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), "[2.0f32, 3.0f32]\n");
        let err = stderr(&o);
        assert!(err.contains("warning[W0730]"), "{err}");
        assert!(sorted_traces(&o).is_empty(), "{err}");
    }
    let lib = dir.join("p.ogl");
    let o = ogham(&["build", file, "-o", lib.to_str().unwrap()]);
    assert!(
        o.status.success() && stderr(&o).contains("W0730"),
        "{}",
        stderr(&o)
    );
    let o = ogham(&["run", "--backend", "interp", file, "[1f32]"]);
    assert!(!stderr(&o).contains("W0730"), "{}", stderr(&o));
    assert_eq!(sorted_traces(&o).len(), 1);
}

const PIXELS: &str = "\
-- | The mean of each pixel's series, with its intermediates traced.
entry mean [m][n] (stack: [m][n]f32) (weights: [n]f32) (scale: f32) : [m]f32 =
  map (\\px ->
         let total = trace \"total\" (reduce (+) 0f32 (map2 (*) px weights))
         in scale * total / f32.i64 n)
      stack

entry grid [h][w][n] (cube: [h][w][n]f32) : [h][w]f32 =
  map (map (\\px -> trace \"first\" px[0])) cube
";

#[test]
fn pixel_runs_one_pixel_of_the_arguments_that_carry_it() {
    let dir = scratch("trace_pixel");
    let file = write(&dir, "px.og", PIXELS);
    let file = file.to_str().unwrap();
    let stack = "[[1f32, 2f32], [3f32, 4f32], [5f32, 6f32]]";
    let o = ogham(&[
        "run",
        "--entry",
        "mean",
        "--pixel",
        "1",
        file,
        stack,
        "[1f32, 1f32]",
        "2f32",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[7.0f32]\n");
    let traces = sorted_traces(&o);
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert!(traces[0].ends_with(": 7.0f32"), "{traces:?}");

    let cube = "[[[1f32], [2f32]], [[3f32], [4f32]]]";
    let o = ogham(&["run", "--entry", "grid", "--pixel", "1,0", file, cube]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[[3.0f32]]\n");

    let o = ogham(&["run", "--entry", "grid", "--pixel", "2,0", file, cube]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("out of range"), "{}", stderr(&o));
    let o = ogham(&[
        "run",
        "--entry",
        "mean",
        "--pixel",
        "0,0",
        file,
        stack,
        "[1f32, 1f32]",
        "1f32",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no pixel axis"), "{}", stderr(&o));
}

#[test]
fn repl_evaluates_piped_lines_in_the_scope_of_a_file() {
    let dir = scratch("trace_repl");
    let file = write(&dir, "px.og", PIXELS);
    let npy = dir.join("stack.npy");
    let stack = ogham::runtime::value::Array::from_f32(vec![2, 2], vec![1., 2., 3., 4.]).unwrap();
    ogham::runtime::npy::write(&npy, &ogham::runtime::value::Value::Array(stack)).unwrap();
    let input = format!(
        ":load s {}\nlet w = [1f32, 3f32]\nmean s w 1f32\n:type mean\n:type mean s\nundefined_name\n:quit\n",
        npy.display()
    );
    let o = ogham_with_stdin(&["repl", file.to_str().unwrap()], &input);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "s : [2][2]f32\n[3.5f32, 7.5f32]\nmean : [][]f32 -> []f32 -> f32 -> []f32\n\
         mean s : []f32 -> f32 -> []f32\n"
    );
    let err = stderr(&o);
    assert_eq!(sorted_traces(&o).len(), 2, "{err}");
    assert!(err.contains("error[E0204]"), "{err}");
}
