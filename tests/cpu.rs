//! The CPU backend beyond the corpus: `#[unsafe]` definitions lose their bounds checks, other
//! code keeps them.

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
