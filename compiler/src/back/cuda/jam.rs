//! Register tiling of a map of dot products over a shared matrix, planned by the `jam` pass
//! (`crate::plan::jam`, `@jam`: a map whose lambda is one map of one sum of lanewise products,
//! e.g. the Gram matrix `map (\c -> map (\d -> dot c d) ds) cs`), in a thread's sequential code:
//! a tile of [`ROWS`] outer iterations by [`COLS`] inner iterations runs together, so that each
//! step of the reduction loop loads each jammed row's element once for the tile's columns and
//! each inner row's element once for its rows (`ROWS + COLS` loads for `ROWS · COLS` products,
//! where one product at a time takes two), with `ROWS · COLS` accumulators in registers. This is
//! the register tiling of the BFAST paper's Gram product, for any map of the shape.
//!
//! A row that is a column of a gather of rows from a kernel input (`transpose g`, `g = map
//! (\key -> xt[key]) keys`: `gather.rs`) is read where the gather read it, `xt[keys[k], c]`, the
//! key loaded once per step for all the tile's rows of that gather.
//!
//! Emission follows the plan: the pieces come from the pass's matcher, and a statement that does
//! not match is emitted plainly (through `interleave.rs` or the shared lowering). Nothing is
//! decided at run time: a thread's rows need not be adjacent, since each load is its own. The
//! inner iterations left over (`inner width % COLS`) run one at a time for each of the tile's
//! rows through the inner lambda's own code; the outer iterations left over
//! (`width % ROWS`) are left to the caller, which runs them as it would have run them all.
//!
//! Invariants relied on: each dot product adds its own terms in order, from the neutral, with
//! the reduction operator's own code (`lower::accumulate`), so the results are bit-identical to
//! the plain loop. Every row is checked against the reduction's width before the loop, as in the
//! plain code: the jammed rows once per tile row, the inner rows once per tile column, the
//! uniform inputs once per tile. When several checks fail, the one reported may be another
//! iteration's than the interpreter's first (each is a real failure, reported with its
//! location), as with `@interleave`.

use super::emit::{CView, Emit, ctype, type_str, view_type};
use super::gather::{self, Gather};
use crate::back::lower::{self, Lower, Res};
use crate::plan::jam::Shape;
use ogham_ir::{Lambda, VarId};

/// Outer iterations per tile (rows of the result).
pub const ROWS: i64 = 4;
/// Inner iterations per tile (columns of the result).
pub const COLS: i64 = 4;

/// Emits the outer map's iterations `0 .. ROWS·⌊width/ROWS⌋` in tiles, writing row `i` of the
/// result to `arrays[0]` (the outer inputs, `inputs`, have their rows `i` in `rows`; `map` is
/// the outer lambda). Returns the first iteration left to run.
pub fn emit(
    e: &mut Emit,
    shape: &Shape,
    (inputs, map): (&[VarId], &Lambda),
    width: &str,
    rows: &[CView],
    arrays: &[CView],
) -> Res<String> {
    let block = e.temp("b");
    e.open(format!(
        "for (i64 {block} = 0; {block} < {width} / {ROWS}; {block}++)"
    ));
    // Per tile row: its index, its parameters' values (rows of the outer inputs) in variables,
    // and its row of the result.
    let mut tile_rows = Vec::new();
    for r in 0..ROWS {
        let i = e.temp("row");
        e.line(format!("const i64 {i} = {block} * {ROWS} + {r};"));
        let args = e.current_rows(&rows.to_vec(), &i);
        let params = hold(e, &map.params, args, "outer");
        let out = e.temp("out");
        let out_row = Emit::row(&arrays[0].name, arrays[0].rank, &i);
        e.line(format!(
            "const {} {out} = {out_row};",
            view_type(arrays[0].elem, 1)
        ));
        tile_rows.push(TileRow {
            params,
            out: CView {
                name: out,
                rank: 1,
                elem: arrays[0].elem,
            },
            index: i,
        });
    }
    let (inner_soac, inner_map) = shape.inner();
    e.checks.loc = shape.inner.loc;
    let (inner_width, inner_views) = lower::soac_inputs(e, inner_soac)?;
    let out_dims = Lower::dims(e, &arrays[0]);
    lower::check_same_shape(
        e,
        &out_dims[1..2],
        std::slice::from_ref(&inner_width),
        "row",
    )?;
    let gathers = Gathers {
        outer: gather::columns(e.f, &e.shared_arrays, inputs),
        inner: gather::columns(e.f, &e.shared_arrays, inner_soac.inputs()),
    };
    let col = e.temp("col");
    e.open(format!(
        "for (i64 {col} = 0; {col} < {inner_width} / {COLS} * {COLS}; {col} += {COLS})"
    ));
    tile(e, shape, &tile_rows, (&inner_views, &gathers), &col)?;
    e.close();
    // The inner iterations left over, one at a time for each tile row.
    let j = e.temp("j");
    e.open(format!(
        "for (i64 {j} = {inner_width} / {COLS} * {COLS}; {j} < {inner_width}; {j}++)"
    ));
    for TileRow { params, out, .. } in &tile_rows {
        e.open("");
        for (p, v) in map.params.iter().zip(params) {
            Lower::bind(e, *p, v.name.clone());
        }
        let args = e.current_rows(&inner_views, &j);
        let vals = lower::apply(e, inner_map, &args)?;
        lower::write_row(e, out, &j, &vals[0])?;
        e.close();
    }
    e.close();
    e.close();
    Ok(format!("{width} / {ROWS} * {ROWS}"))
}

/// A row of a tile: the outer lambda's parameters' values (rows of the outer inputs), its row
/// of the result and its index (a C variable).
struct TileRow {
    params: Vec<CView>,
    out: CView,
    index: String,
}

/// Per input of the outer and of the inner map: the gather whose columns its rows are
/// (`gather.rs`), read through the gather's keys.
struct Gathers {
    outer: Vec<Option<Gather>>,
    inner: Vec<Option<Gather>>,
}

/// The tile of the tile rows `tile_rows` and the inner iterations `col .. col + COLS`: the
/// rows checked, one loop over the reduction's width with an accumulator per dot product, the
/// sums stored to the result. A row that is a column of a gather (`gathers`) is read where the
/// gather read it (`src[keys[k], column]`), each step loading the key once.
fn tile(
    e: &mut Emit,
    shape: &Shape,
    tile_rows: &[TileRow],
    (inner_views, gathers): (&[CView], &Gathers),
    col: &str,
) -> Res<()> {
    let (_, inner_map) = shape.inner();
    let (k, red_inputs, red_map, neutral) = shape.reduction();
    let op = shape.operator();
    e.open("");
    // Per tile column: the inner map's parameters' values (rows of its inputs).
    let mut tile_cols: Vec<Vec<CView>> = Vec::new();
    for c in 0..COLS {
        let j = format!("({col} + {c})");
        let args = e.current_rows(&inner_views.to_vec(), &j);
        tile_cols.push(hold(e, &inner_map.params, args, "inner"));
    }
    e.checks.loc = shape.reduction.loc;
    let k = Emit::operand(e, k);
    // The view of reduction input `input` in tile row `r` and column `c`.
    let view = |e: &mut Emit, input: usize, r: usize, c: usize| -> Res<CView> {
        let var = red_inputs[input];
        if let Some(p) = inner_map.params.iter().position(|p| *p == var) {
            return Ok(tile_cols[c][p].clone());
        }
        match shape.jammed[input] {
            Some(q) => Ok(tile_rows[r].params[q].clone()),
            None => Lower::view(e, var),
        }
    };
    // The gather whose column input `input` is in tile row `r` and column `c`, and the column's
    // index, when it is one.
    let gathered = |input: usize, r: usize, c: usize| -> Option<(Gather, String)> {
        let var = red_inputs[input];
        if let Some(p) = inner_map.params.iter().position(|p| *p == var) {
            return Some((gathers.inner[p]?, format!("({col} + {c})")));
        }
        let q = shape.jammed[input]?;
        Some((gathers.outer[q]?, tile_rows[r].index.clone()))
    };
    // Which of the tile's rows and columns input `input` has one of its own for: a jammed input
    // one per tile row, an inner row one per tile column, a uniform input one for all.
    let places = |input: usize| -> Vec<(usize, usize)> {
        match own(shape, input) {
            Own::PerRow => (0..tile_rows.len()).map(|r| (r, 0)).collect(),
            Own::PerColumn => (0..tile_cols.len()).map(|c| (0, c)).collect(),
            Own::One => vec![(0, 0)],
        }
    };
    // Each distinct row checked once (the plain code checks it in every dot product it is in).
    for input in 0..red_inputs.len() {
        for (r, c) in places(input) {
            let v = view(e, input, r, c)?;
            let dims = Lower::dims(e, &v);
            lower::check_same_shape(e, &dims[..1], std::slice::from_ref(&k), "SOAC input")?;
        }
    }
    let init = Emit::operand(e, neutral);
    let elem = e.f.subexp_type(neutral).elem();
    let accs: Vec<Vec<String>> = (0..tile_rows.len())
        .map(|_| {
            (0..tile_cols.len())
                .map(|_| {
                    let acc = e.temp("acc");
                    e.line(format!("{} {acc} = {init};", ctype(elem)));
                    acc
                })
                .collect()
        })
        .collect();
    let step = e.temp("k");
    e.open_loop(format!("for (i64 {step} = 0; {step} < {k}; {step}++)"));
    // Each input's element of this step, loaded once per row or column it has; each gather's
    // key once.
    let mut loaded: Vec<Vec<String>> = Vec::new();
    let mut keys: Vec<(VarId, String)> = Vec::new();
    for input in 0..red_inputs.len() {
        let mut elements = Vec::new();
        for (r, c) in places(input) {
            let v = view(e, input, r, c)?;
            let x = e.temp("x");
            let at = match gathered(input, r, c) {
                Some((g, column)) => {
                    let key = match keys.iter().find(|(k, _)| *k == g.keys) {
                        Some((_, key)) => key.clone(),
                        None => {
                            let key = e.temp("key");
                            let of = Lower::view(e, g.keys)?;
                            let at = Emit::row(&of.name, of.rank, &step);
                            e.line(format!("const i64 {key} = {at};"));
                            keys.push((g.keys, key.clone()));
                            key
                        }
                    };
                    let src = Lower::view(e, g.src)?.name;
                    format!("{src}.p[({key}) * {src}.s[0] + ({column}) * {src}.s[1]]")
                }
                None => Emit::row(&v.name, v.rank, &step),
            };
            e.line(format!("const {} {x} = {at};", ctype(v.elem)));
            elements.push(x);
        }
        loaded.push(elements);
    }
    // Input `input`'s element for tile row `r` and column `c`.
    let element = |input: usize, r: usize, c: usize| -> String {
        let at = match own(shape, input) {
            Own::PerRow => r,
            Own::PerColumn => c,
            Own::One => 0,
        };
        loaded[input][at].clone()
    };
    for (r, row_accs) in accs.iter().enumerate() {
        for (c, acc) in row_accs.iter().enumerate() {
            e.open("");
            let args: Vec<String> = (0..red_inputs.len()).map(|x| element(x, r, c)).collect();
            let vals = lower::apply(e, red_map, &args)?;
            lower::accumulate(e, op, std::slice::from_ref(acc), &vals)?;
            e.close();
        }
    }
    e.close();
    for (r, row_accs) in accs.iter().enumerate() {
        for (c, acc) in row_accs.iter().enumerate() {
            let j = format!("({col} + {c})");
            lower::write_row(e, &tile_rows[r].out, &j, acc)?;
        }
    }
    e.close();
    Ok(())
}

/// The values `args` of the lambda parameters `params` (rows or scalars), each held in a
/// variable of its own named after `what`, as views.
fn hold(e: &mut Emit, params: &[VarId], args: Vec<String>, what: &str) -> Vec<CView> {
    params
        .iter()
        .zip(args)
        .map(|(p, arg)| {
            let ty = e.f.ty(*p);
            let name = e.temp(what);
            e.line(format!("const {} {name} = {arg};", type_str(ty)));
            CView {
                name,
                rank: ty.rank(),
                elem: ty.elem(),
            }
        })
        .collect()
}

/// Which rows of its own an input of the reduction has in a tile.
enum Own {
    /// A jammed input: one row per tile row.
    PerRow,
    /// A row of the inner map's inputs: one per tile column.
    PerColumn,
    /// A uniform input: the same row in the whole tile.
    One,
}

fn own(shape: &Shape, input: usize) -> Own {
    match (shape.jammed[input], shape.dot.varying()[input]) {
        (Some(_), _) => Own::PerRow,
        (None, true) => Own::PerColumn,
        (None, false) => Own::One,
    }
}
