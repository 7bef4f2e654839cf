//! Helpers shared by the interpreter's end-to-end tests: load a program from text, check it,
//! run an entry point, and build or inspect values.

#![allow(dead_code)]

use ogham_compiler::loader::load_source;
use ogham_compiler::typeck::check;
use ogham_interp::run_entry;
use ogham_ir::diag::render;
use ogham_ir::source::SourceMap;
use ogham_runtime::value::{Array, ArrayData, Scalar, Value};

/// Runs entry `entry` of `src`; front-end errors panic (tests use valid programs), run-time
/// errors come back as `(code, rendered diagnostic)`.
pub fn run_named(src: &str, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, (String, String)> {
    let mut sources = SourceMap::new();
    let program = match load_source(&mut sources, "test.og", src) {
        Ok(p) => p,
        Err(ds) => panic!("parse error:\n{}", render(&sources, &ds)),
    };
    let checked = match check(&sources, &program) {
        Ok(c) => c,
        Err(ds) => panic!("type error:\n{}", render(&sources, &ds)),
    };
    run_entry(&sources, &program, &checked, entry, args).map_err(|d| {
        (
            d.code.to_string(),
            render(&sources, std::slice::from_ref(&d)),
        )
    })
}

pub fn run(src: &str, args: Vec<Value>) -> Result<Vec<Value>, (String, String)> {
    run_named(src, "main", args)
}

/// Runs `main` and returns its single output, printed in Futhark's value syntax.
pub fn eval(src: &str, args: Vec<Value>) -> String {
    match run(src, args) {
        Ok(vs) => vs
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        Err((_, msg)) => panic!("run-time error:\n{msg}"),
    }
}

/// Runs `main` expecting a run-time error; returns its code and rendered text.
pub fn fails(src: &str, args: Vec<Value>) -> (String, String) {
    match run(src, args) {
        Ok(vs) => panic!("expected an error, got {vs:?}"),
        Err(e) => e,
    }
}

pub fn f32s(xs: &[f32]) -> Value {
    Value::Array(Array::from_f32(vec![xs.len()], xs.to_vec()).unwrap())
}

pub fn f64s(xs: &[f64]) -> Value {
    Value::Array(Array::from_f64(vec![xs.len()], xs.to_vec()).unwrap())
}

pub fn i64s(xs: &[i64]) -> Value {
    Value::Array(Array::from_i64(vec![xs.len()], xs.to_vec()).unwrap())
}

pub fn i32s(xs: &[i32]) -> Value {
    Value::Array(Array::new(vec![xs.len()], ArrayData::I32(xs.to_vec().into())).unwrap())
}

pub fn matrix_f32(rows: usize, cols: usize, xs: &[f32]) -> Value {
    Value::Array(Array::from_f32(vec![rows, cols], xs.to_vec()).unwrap())
}

pub fn i64v(x: i64) -> Value {
    Value::Scalar(Scalar::I64(x))
}

pub fn i32v(x: i32) -> Value {
    Value::Scalar(Scalar::I32(x))
}

pub fn f32v(x: f32) -> Value {
    Value::Scalar(Scalar::F32(x))
}
