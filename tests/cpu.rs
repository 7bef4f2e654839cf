//! The CPU backend beyond the corpus: `#[unsafe]` definitions lose their bounds checks, other
//! code keeps them; compiled libraries (`ogham build`) round-trip.

use ogham::{Backend, Frontend};
use ogham_compiler::back::cpu::print_clif;
use ogham_compiler::pipeline::Options;

/// The number of failure blocks in the generated code of `source`.
fn load(source: &str) -> Frontend {
    Frontend::load_source("test.og", source).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn checks(source: &str) -> usize {
    let fe = load(source);
    let ir = fe.compile(Options::KERNEL).expect("the program compiles");
    print_clif(&ir).matches(" cold:").count()
}

const CHECKED: &str = "
def gather [n] (xs: [n]f32) (is: [n]i64) : [n]f32 = map (\\i -> xs[i]) is
entry main [n] (xs: [n]f32) (is: [n]i64) : [n]f32 = gather xs is
";

#[test]
fn unsafe_definitions_have_no_bounds_checks() {
    let unchecked = CHECKED.replace("def gather", "#[unsafe]\ndef gather");
    assert!(
        checks(CHECKED) >= 1,
        "the checked program has a bounds check"
    );
    assert_eq!(checks(&unchecked), checks(CHECKED) - 1);
}

#[test]
fn checked_code_reports_out_of_bounds_indices() {
    let fe = load(CHECKED);
    let args = vec![
        ogham_runtime::value::Value::Array(
            ogham_runtime::value::Array::from_f32(vec![2], vec![1.0, 2.0]).expect("shape"),
        ),
        ogham_runtime::value::Value::Array(
            ogham_runtime::value::Array::from_i64(vec![2], vec![1, 5]).expect("shape"),
        ),
    ];
    let err = Backend::Cpu
        .run(&fe, "main", args, None)
        .expect_err("index 5 is out of bounds");
    assert_eq!(err.code, "R0702");
    assert!(
        err.message.contains("index 5 out of bounds"),
        "{}",
        err.message
    );
}

/// A library written by `ogham build`'s code path, loaded back, gives the same outputs as the
/// program run from source (NaN constants included), and damaged files are rejected.
#[test]
fn libraries_round_trip() {
    use ogham_runtime::library::Library;
    use ogham_runtime::value::{Array, Value};
    let source = "
entry main [n] (xs: [n]f32) : ([n]f32, f32) =
  let ys = map (\\x -> if x > 2 then f32.nan else x * 2) xs
  in (ys, reduce (+) 0 (map (\\y -> if f32.isnan y then 0 else y) ys))
";
    let fe = load(source);
    let program = fe.compile(Options::KERNEL).expect("the program compiles");
    let dir = std::env::temp_dir().join(format!("ogham-lib-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("test.ogl");
    Library::new(fe.sources.clone(), program)
        .save(&path)
        .expect("saved");
    let lib = Library::load(&path).expect("loaded");
    assert_eq!(lib.entries().map(|(n, _)| n).collect::<Vec<_>>(), ["main"]);
    let xs = || {
        vec![Value::Array(
            Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).expect("shape"),
        )]
    };
    let from_lib = lib.call("main", xs()).expect("runs");
    let from_source = Backend::Cpu.run(&fe, "main", xs(), None).expect("runs");
    assert_eq!(format!("{from_lib:?}"), format!("{from_source:?}"));
    assert!(format!("{from_lib:?}").contains("NaN"), "{from_lib:?}");
    let text = std::fs::read_to_string(&path).expect("readable");
    std::fs::write(&path, text.replace("\"version\":1", "\"version\":99")).expect("written");
    let err = Library::load(&path)
        .err()
        .expect("a newer version is rejected");
    assert!(err.contains("version 99"), "{err}");
    std::fs::write(&path, "{}").expect("written");
    assert!(Library::load(&path).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
