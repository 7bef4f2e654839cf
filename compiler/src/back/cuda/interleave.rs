//! Interleaved reductions in a thread's sequential code, planned by the `interleave` pass
//! (`crate::plan::interleave`, `@interleave`: a map whose lambda computes one reduction between
//! flat statements, e.g. `map (\c -> dot r c) cs`): the map's iterations run [`LANES`] at a
//! time. Each iteration's statements before the reduction run in a C block of their own, which
//! copies the values the rest needs into variables of the enclosing block; then one loop over
//! the reduction's width carries one accumulator per iteration, so that the additions of
//! different iterations are independent instructions (instruction-level parallelism in one
//! thread) instead of one dependency chain per iteration; then each iteration's statements
//! after the reduction and its results, again in a block of their own. The iterations left
//! over (`width % LANES`) run one by one (`crate::back::lower::sequential`).
//!
//! Invariants relied on: every variable is bound once, so an iteration's variables can be
//! declared again, under their own names, in each of its blocks (C scoping keeps the
//! iterations apart). Each accumulator adds its own terms in order, starting from the neutral,
//! with the scalar code's operations, so the results are bit-identical. The checks of the
//! interleaved iterations run in a different order than one iteration after the other: when
//! several fail, the one reported may differ from the interpreter's first (each is a real
//! failure, reported with its location), as on the CPU.

use super::emit::{CView, Emit, ctype, type_str, var};
use crate::back::lower::{self, Lower, Res};
use crate::plan::interleave::Shape;
use ogham_ir::{Lambda, SubExp, VarId};

/// How many iterations run together.
pub const LANES: i64 = 4;

/// One of the interleaved iterations: its row, the variables holding its values bound before
/// the reduction (its parameters included), and its accumulators.
struct Lane {
    row: String,
    captured: Vec<(VarId, String)>,
    accs: Vec<Vec<String>>,
}

/// Emits the map's iterations `0 .. LANES·⌊width/LANES⌋` interleaved, writing iteration `i`'s
/// results to row `i` of `arrays` (its inputs' rows are rows `i` of `rows`). Returns the first
/// iteration left to run.
pub fn emit(
    e: &mut Emit,
    shape: &Shape,
    width: &str,
    rows: &[CView],
    arrays: &[CView],
) -> Res<String> {
    let (_, _, _, reds) = shape.screma();
    let ops = ogham_ir::screma_operators(&[], reds);
    let block = e.temp("b");
    e.open(format!(
        "for (i64 {block} = 0; {block} < {width} / {LANES}; {block}++)"
    ));
    let mut lanes = Vec::new();
    for lane in 0..LANES {
        lanes.push(before(e, shape, &ops, (&block, lane), rows)?);
    }
    shared_loop(e, shape, &ops, &lanes)?;
    for lane in &lanes {
        after(e, shape, lane, arrays)?;
    }
    e.close();
    Ok(format!("{width} / {LANES} * {LANES}"))
}

/// Iteration `block·LANES + lane`'s statements before the reduction, in a block of their own;
/// its values and accumulators are declared outside it.
fn before(
    e: &mut Emit,
    shape: &Shape,
    ops: &[(&Lambda, &[SubExp])],
    (block, lane): (&str, i64),
    rows: &[CView],
) -> Res<Lane> {
    let row = e.temp("row");
    e.line(format!("const i64 {row} = {block} * {LANES} + {lane};"));
    let captured: Vec<(VarId, String)> = shape
        .bound
        .iter()
        .map(|v| {
            let t = e.temp("cap");
            e.line(format!("{} {t};", type_str(e.f.ty(*v))));
            (*v, t)
        })
        .collect();
    let accs: Vec<Vec<String>> = ops
        .iter()
        .map(|(_, neutral)| {
            neutral
                .iter()
                .map(|n| {
                    let t = e.temp("acc");
                    e.line(format!("{} {t};", ctype(e.f.subexp_type(*n).elem())));
                    t
                })
                .collect()
        })
        .collect();
    e.open("");
    let args = e.current_rows(&rows.to_vec(), &row);
    for (p, a) in shape.map.params.iter().zip(args) {
        Lower::bind(e, *p, a);
    }
    for stmt in shape.before {
        lower::stmt(e, stmt)?;
    }
    e.checks.loc = shape.reduction.loc;
    let (k, inputs, _, _) = shape.screma();
    let k = Emit::operand(e, *k);
    for v in inputs {
        let view = Lower::view(e, *v)?;
        let dims = Lower::dims(e, &view);
        lower::check_same_shape(e, &dims[..1], std::slice::from_ref(&k), "SOAC input")?;
    }
    for (v, t) in &captured {
        e.line(format!("{t} = {};", var(*v)));
    }
    for ((_, neutral), accs) in ops.iter().zip(&accs) {
        for (n, acc) in neutral.iter().zip(accs) {
            let init = Emit::operand(e, *n);
            e.line(format!("{acc} = {init};"));
        }
    }
    e.close();
    Ok(Lane {
        row,
        captured,
        accs,
    })
}

/// One loop over the reduction's width, each step adding every iteration's term to its own
/// accumulators.
fn shared_loop(
    e: &mut Emit,
    shape: &Shape,
    ops: &[(&Lambda, &[SubExp])],
    lanes: &[Lane],
) -> Res<()> {
    let (k, inputs, inner, _) = shape.screma();
    let k = Emit::operand(e, *k);
    let j = e.temp("j");
    e.open_loop(format!("for (i64 {j} = 0; {j} < {k}; {j}++)"));
    for lane in lanes {
        e.open("");
        for (v, t) in &lane.captured {
            if shape.read_in_loop.contains(v) {
                e.declare(*v, t);
            }
        }
        let views: Vec<CView> = inputs
            .iter()
            .map(|v| Lower::view(e, *v))
            .collect::<Res<_>>()?;
        let args = e.current_rows(&views, &j);
        let vals = lower::apply(e, inner, &args)?;
        let mut c = 0;
        for ((op, neutral), accs) in ops.iter().zip(&lane.accs) {
            let m = neutral.len();
            lower::accumulate(e, op, accs, &vals[c..c + m])?;
            c += m;
        }
        e.close();
    }
    e.close();
    Ok(())
}

/// An iteration's statements after the reduction and its results, in a block of their own.
fn after(e: &mut Emit, shape: &Shape, lane: &Lane, arrays: &[CView]) -> Res<()> {
    e.open("");
    for (v, t) in &lane.captured {
        e.declare(*v, t);
    }
    for (v, acc) in shape.reduction.pat.iter().zip(lane.accs.iter().flatten()) {
        e.declare(*v, acc);
    }
    for stmt in shape.after {
        lower::stmt(e, stmt)?;
    }
    for (r, dst) in shape.map.body.result.iter().zip(arrays) {
        let val = Emit::operand(e, *r);
        lower::write_row(e, dst, &lane.row, &val)?;
    }
    e.close();
    Ok(())
}
