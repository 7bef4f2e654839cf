//! Running a kernel-IR entry point in parts of rows: when the entry point is separable along
//! its first array parameter's rows ([`ogham_ir::kir::rows`]), each part of `part_rows` rows
//! runs as a call of its own (with one launcher, so one device, module and memory pool), and
//! the parts' outputs are written into the whole outputs' rows as each part finishes.
//!
//! Identical outputs: each part takes the versions the whole run takes (the thresholds that
//! compare the number of rows are fixed to the whole run's decisions here; those on other
//! sizes decide alike in every part), and the launcher plans segmented reductions with the
//! whole run's segment count ([`RowParts::whole`]). Any failure of a part, or arguments that do
//! not fit (a parameter spread from a tuple, a first argument that is not an array), runs the
//! entry point whole instead, so errors are reported exactly as without parts (an error's
//! point would otherwise be counted from the part's first row).
//!
//! Invariants relied on: the inputs are not written (a part's input is a view of the caller's
//! array, copied on write like any borrowed array); each output of a separable entry point has
//! the rows as its leading dimension.

use super::boundary;
use super::eval::{self, Launcher};
use crate::error::{R_CUDA, error};
use crate::value::{Array, ArrayData, Value};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::rows::RowSplit;
use ogham_ir::kir::{Function, ThresholdId};
use std::collections::HashMap;
use std::sync::Arc;

type Res<T> = Result<T, Box<Diagnostic>>;

/// How to run an entry point in parts.
#[derive(Clone, Debug)]
pub struct RowParts {
    pub split: RowSplit,
    /// Rows per part (the last part takes the rest).
    pub part_rows: usize,
}

/// The number of rows of the whole run, for launch plans that must not depend on the part
/// (see the module header): the row count variable and its whole value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeRows {
    pub var: ogham_ir::VarId,
    pub rows: i64,
}

impl RowParts {
    /// The whole run's row count for `args`, when they can be split into more than one part.
    pub fn whole(&self, function: &Function, args: &[Value]) -> Option<WholeRows> {
        if args.len() != function.params.len() {
            return None;
        }
        match args.get(self.split.param)? {
            Value::Array(a) if a.shape()[0] > self.part_rows.max(1) => Some(WholeRows {
                var: self.split.rows,
                rows: a.shape()[0] as i64,
            }),
            _ => None,
        }
    }
}

/// Runs `function` on `args` (made [`shared`]) in parts (the module header), evaluating with
/// `limits` adjusted for the parts; the outputs and the number of parts, or `Ok(None)` when a
/// part failed (the caller runs the whole call instead).
pub(super) fn run(
    function: &Function,
    parts: &RowParts,
    whole: WholeRows,
    mut args: Vec<Value>,
    limits: &HashMap<ThresholdId, i64>,
    launcher: Option<&dyn Launcher>,
) -> Res<Option<(Vec<Value>, usize)>> {
    let mut part_limits = limits.clone();
    for id in &parts.split.thresholds {
        if let Some(limit) = part_limits.get_mut(id) {
            // `size >= limit` with the whole size, for every part's size.
            *limit = if whole.rows >= *limit { 0 } else { i64::MAX };
        }
    }
    let Value::Array(input) = args[parts.split.param].clone() else {
        unreachable!("`RowParts::whole` found an array")
    };
    let (shape, data) = input.into_parts();
    let data = Arc::new(data);
    let row_elems: usize = shape[1..].iter().product();
    let rows = whole.rows as usize;
    // The first part's outputs (their tuples and records, to rebuild), and every array in
    // them, whole.
    let mut layout: Option<Vec<Layout>> = None;
    let mut outputs: Vec<Option<(Vec<usize>, ArrayData)>> = Vec::new();
    let (mut start, mut count) = (0, 0);
    while start < rows {
        let n = parts.part_rows.max(1).min(rows - start);
        let view = ArrayData::range_view(&data, start * row_elems, n * row_elems)
            .expect("the part's rows are inside the input");
        let mut part_shape = shape.clone();
        part_shape[0] = n;
        args[parts.split.param] = Value::Array(Array::new(part_shape, view).expect("shape fits"));
        let Ok(params) = boundary::bind_arguments(function, args.clone()) else {
            return Ok(None);
        };
        let mut evaluator = eval::Evaluator::new(function, &part_limits, launcher);
        let Ok(results) = evaluator.run(&function.body, params) else {
            return Ok(None);
        };
        let part_outputs = boundary::gather_results(function, results)?;
        let mut arrays = Vec::new();
        let part_layout: Vec<Layout> = part_outputs
            .into_iter()
            .map(|v| leaves(v, &mut arrays))
            .collect();
        if layout.is_none() {
            outputs = arrays.iter().map(|_| None).collect();
            layout = Some(part_layout);
        } else if layout.as_ref() != Some(&part_layout) {
            return Ok(None);
        }
        for (whole_output, part) in outputs.iter_mut().zip(arrays) {
            if !place_rows(whole_output, part, start, n, rows)? {
                return Ok(None);
            }
        }
        start += n;
        count += 1;
    }
    let mut whole_arrays = outputs.into_iter().map(|o| {
        let (shape, data) = o.expect("every output placed");
        Value::Array(Array::new(shape, data).expect("shape fits"))
    });
    let layout = layout.expect("at least one part");
    let outputs = layout
        .iter()
        .map(|v| rebuild(v, &mut whole_arrays))
        .collect();
    Ok(Some((outputs, count)))
}

/// Where an output's values are in its tuples (and records).
#[derive(PartialEq)]
enum Layout {
    Leaf,
    Tuple(Vec<Layout>),
}

/// Moves the values inside `v`'s tuples to `out`, in order; where they were.
fn leaves(v: Value, out: &mut Vec<Value>) -> Layout {
    match v {
        Value::Tuple(vs) => Layout::Tuple(vs.into_iter().map(|v| leaves(v, out)).collect()),
        leaf => {
            out.push(leaf);
            Layout::Leaf
        }
    }
}

/// The value of `layout` with its leaves taken from `leaves` in order.
fn rebuild(layout: &Layout, leaves: &mut impl Iterator<Item = Value>) -> Value {
    match layout {
        Layout::Tuple(ls) => Value::Tuple(ls.iter().map(|l| rebuild(l, leaves)).collect()),
        Layout::Leaf => leaves.next().expect("as many leaves as the layout"),
    }
}

/// `args` with every array's elements on the host and shared by views, so that a part's
/// arguments and a whole run's after it copy none of them.
pub(super) fn shared(args: Vec<Value>) -> Res<Vec<Value>> {
    args.into_iter()
        .map(|arg| match arg {
            Value::Array(a) => {
                let (shape, mut data) = a.into_parts();
                data.settle()
                    .map_err(|e| error(R_CUDA, Default::default(), e))?;
                let data = Arc::new(data);
                let view = ArrayData::range_view(&data, 0, data.len()).expect("the whole array");
                Ok(Value::Array(Array::new(shape, view).expect("same shape")))
            }
            other => Ok(other),
        })
        .collect()
}

/// Writes `part`'s rows (rows `start..start + n` of the whole output of `rows` rows) into
/// `whole`, made at the first part; false when `part` is not an array of `n` rows of the same
/// shape and type as the other parts' (the caller runs the whole call instead).
fn place_rows(
    whole: &mut Option<(Vec<usize>, ArrayData)>,
    part: Value,
    start: usize,
    n: usize,
    rows: usize,
) -> Res<bool> {
    let Value::Array(part) = part else {
        return Ok(false);
    };
    if part.shape()[0] != n {
        return Ok(false);
    }
    let row_shape = &part.shape()[1..];
    if whole.is_none() {
        let mut shape = vec![rows];
        shape.extend_from_slice(row_shape);
        let elems = shape.iter().product();
        let Some(data) = ArrayData::zeroed(part.elem_type(), elems) else {
            return Err(error(
                R_CUDA,
                Default::default(),
                format!("cannot allocate an output of {elems} elements"),
            ));
        };
        *whole = Some((shape, data));
    }
    let (shape, data) = whole.as_mut().expect("made above");
    if shape[1..] != *row_shape || data.prim_type() != part.elem_type() {
        return Ok(false);
    }
    let row_bytes = row_shape.iter().product::<usize>() * data.prim_type_size();
    // SAFETY: rows `start..start + n` of the whole output are `n * row_bytes` bytes inside its
    // owned buffer (`start + n <= rows`), which nothing else references.
    let dst = unsafe {
        std::slice::from_raw_parts_mut(data.as_mut_ptr().add(start * row_bytes), n * row_bytes)
    };
    part.data()
        .read_into(dst)
        .map_err(|e| error(R_CUDA, Default::default(), e))?;
    Ok(true)
}
