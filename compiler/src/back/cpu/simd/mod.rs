//! SIMD code for map kernels: one point per lane, the point's sequential code once for a group
//! of points (issue 4 item 4, issue 22 item 1).
//!
//! A `Thread`-level `SegMap` runs consecutive points in the lanes of 128-bit vectors, as ISPC
//! maps program instances to lanes: the outer parallel dimension is vectorised, the point's code
//! is unchanged. The kernel's result types choose the lanes ([`Width`]): four for `f32`/`i32`
//! results (`f32x4`, `i32x4`; a `bool` is an `i32x4` lane mask), two for `f64`/`i64` results
//! (`f64x2`, `i64x2`; a `bool` is an `i64x2` mask). What the point's code may contain:
//!
//! - *Lane values*: scalars of the width's float and integer types and `bool`s, computed by
//!   arithmetic, comparisons, `sqrt`, `abs`, rounding, `min`/`max`, `isnan`, `isinf`,
//!   float↔integer conversions (lane by lane for 64-bit ones), integer `/` and `%` by a
//!   constant power of two (an arithmetic shift, a mask: floored, as the interpreter's; the
//!   rewrite of `back/steps.rs`, which the scalar code shares), and
//!   the other float functions (`log`, `exp`, `pow`, `sin`, ...) by the scalar code's helper
//!   call, lane by lane (so bit-identical by construction).
//! - *Uniform values*: scalars of any type that depend only on the kernel's inputs, on uniform
//!   values and on counters of uniform loops, computed by operations that cannot fail (any
//!   arithmetic but integer division, math functions, conversions) or read from an input at
//!   uniform indices. They are computed once per group, as scalar code, and splatted where
//!   lanes use them.
//! - *Reads* of the kernel's inputs (or of rows of them) with one index component the lane
//!   index and the others uniform: a vector load when the lane index is the last component, a
//!   gather (one load per lane at the row stride) otherwise (`let row = xss[i]` then `row[j]`).
//! - `if`s with scalar results. When no branch has a loop or a read that checks its index here,
//!   both branches are computed and the lanes selected (they cannot fail or have effects);
//!   otherwise each branch runs under its execution mask (the enclosing mask and the condition,
//!   or its negation) and only when a lane is active in it, so a branch no lane takes is
//!   skipped and a uniform condition runs one branch.
//! - Loops with scalar lane parameters: `for j < n` with a uniform `n` (every lane iterates
//!   together; `j` is uniform), `for j < n` with a lane value `n` and `while` loops, whose lanes
//!   finish at their own trip counts: the loop runs while a lane of its execution mask goes on,
//!   and the lanes that are done keep their parameters (a lane select after each iteration).
//! - In-point reductions: a `redomap` with reductions only (no scans, no mapped arrays) whose
//!   lambdas are lane code, run as such a loop over its width with one accumulator per lane and
//!   reduction component, folded from the neutral element in order as the scalar code's loop
//!   does. Over a uniform width, each input is an `iota` of the width (the parameter is the
//!   counter), an input or a row of one at the lane index, with a scalar element per iteration
//!   (a uniform read, or a gather at the row stride); over a per-lane width (the width's
//!   integer type: `f64`/`i64` kernels, as `iota` is `i64`), `iota`s of it only, each lane
//!   stopping at its own width. Such an `iota` is never made: its size is checked instead (a
//!   negative one is the scalar code's error; above `MAX_IOTA` = 2^16 the scalar code's
//!   allocation might fail), and an input of another size than the width (the scalar code's
//!   error) sends the group to the scalar code.
//! - *Per-point arrays* (`arrays.rs`), in a kernel the `layout` pass made
//!   `PointLayout::Interleaved` (`opt/layout.rs`: its per-point arrays interleaved across the
//!   points in flight, here the lanes): one-dimensional arrays of the width's float or integer
//!   type made by `replicate` (of a lane value or uniform scalar, to a uniform length), read
//!   and updated in place at uniform indices (one vector load or store), carried by loops and
//!   passed through `if`s when the array is the same memory on every path (a loop's body
//!   returns its parameter updated in place; both branches return one array made before the
//!   `if`), so that code under a mask updates only its lanes. Such an array may be a kernel's
//!   result: each lane's copy is stored as its point's row. The group's arrays come from the
//!   worker's arena, which each group resets first. The cost rule (`check.rs`, `Check::plan`
//!   there): only four-lane kernels with a loop or an in-point reduction make arrays in lanes.
//!
//! Results are bit-identical to the scalar code: each lane performs the same IEEE operations in
//! the same order (no reassociation, no fused multiply-add), and `min`/`max`, comparisons and
//! conversions have the scalar code's semantics (NaN cases included). The points left over
//! (fewer than a group at the end of a range), every segment whose rows at the lane index are
//! not all in bounds, and every group in which a read at a uniform index (or a row taken at
//! one, checked at the row statement even when no element of it is read) would be out of
//! bounds, an `iota` size is out of range or a reduction's input has another size than its
//! width (the group bails out before it stores anything) run the scalar code, which also
//! reports any error exactly as before; so do groups in which an index into a per-point array
//! is out of bounds, a `replicate`'s length is negative or above `MAX_POINT_ARRAY` (2^20), the
//! arena cannot hand out a group's array, or an array result's length is not its output row's.
//! Anything else keeps the whole kernel scalar: scans, arrays other than the per-point arrays
//! above (maps making arrays, slices, arrays of arrays, copies, concatenations, an `iota` used
//! otherwise than as a reduction's input, per-point arrays as a reduction's input or indexed
//! at lane-dependent indices), lane values of another width than the results' (an `f32` series
//! read into an `f64` fit), results of two widths, and reads of the kernel's inputs at
//! lane-dependent indices (per-lane gathers: tried for STL's LOESS kernels, two lanes of `f64`,
//! and slower than the scalar code; and for per-point arrays, in a compaction, also slower).
//! BFAST's fused per-pixel kernel has all of these (`docs/compiler.md`, SIMD). `OGHAM_SIMD=why`
//! lists, per thread-level kernel compiled, whether it runs in lanes and, if not, each
//! innermost statement outside the subset.
//!
//! Invariants relied on: kernel inputs are contiguous and row-major (so the innermost index
//! addresses consecutive elements), a scalar result of a map kernel occupies one element of its
//! output per point, and the kernel's index range satisfies `0 <= i_start <= i_end`.
//!
//! Setting `OGHAM_SIMD=0` in the environment of the compiling process turns this off (for
//! measurements); `OGHAM_SIMD=why` keeps it on and says why kernels stay scalar.
//!
//! Files: this one plans a kernel ([`plan`]) and runs its groups ([`vector_points`]);
//! `check.rs` decides what is in the subset, `lanes.rs` emits lane code for statements,
//! `loops.rs` for loops and reductions, `arrays.rs` for per-point arrays; `elementwise.rs` runs
//! sequential elementwise maps inside a point's code in vectors along their own dimension, with
//! the same lane code, and `stream.rs` loops that write one element per iteration at a running
//! count.
//!
//! Why the decision is still taken here and not by a pass on kernel IR: what can run in lanes
//! is what this backend's lane code can emit (`check.rs` is that subset, not a program shape),
//! and it depends on the machine's vectors and on `OGHAM_SIMD`, which kernel IR must not. The
//! target-neutral part of across-point SIMD, where a kernel's per-point arrays live for lanes,
//! is the `layout` pass's (`opt/layout.rs`).

mod arrays;
mod check;
pub mod elementwise;
mod lanes;
mod loops;
pub mod stream;

use super::codegen::{Gen, Res, elem_size};
use super::helpers::HelperId;
use check::Check;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32X4, F64X2, I8, I32X4, I64, I64X2};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use lanes::Lanes;
use ogham_ir::kir::{PointLayout, SegKind, SegLevel, SegOp};
use ogham_ir::types::PrimType;
use ogham_ir::{self as ir, SubExp, VarId};
use std::collections::{HashMap, HashSet};

/// The lanes of a kernel's vectors: four 32-bit lanes (`f32`, `i32`; a `bool` is an `i32x4`
/// lane mask) or two 64-bit lanes (`f64`, `i64`; a `bool` is an `i64x2` mask), chosen by the
/// kernel's result types.
#[derive(Clone, Copy, PartialEq)]
pub enum Width {
    Four,
    Two,
}

impl Width {
    /// Points per vector iteration.
    fn lanes(self) -> i64 {
        match self {
            Width::Four => 4,
            Width::Two => 2,
        }
    }

    fn float(self) -> PrimType {
        match self {
            Width::Four => PrimType::F32,
            Width::Two => PrimType::F64,
        }
    }

    /// The width whose lanes hold every one of `types`, all numbers of 32 bits (four lanes) or
    /// all of 64 (two).
    fn of_scalars(types: &[PrimType]) -> Option<Width> {
        if types
            .iter()
            .all(|t| matches!(t, PrimType::F32 | PrimType::I32))
        {
            Some(Width::Four)
        } else if types
            .iter()
            .all(|t| matches!(t, PrimType::F64 | PrimType::I64))
        {
            Some(Width::Two)
        } else {
            None
        }
    }

    fn int(self) -> PrimType {
        match self {
            Width::Four => PrimType::I32,
            Width::Two => PrimType::I64,
        }
    }

    /// Whether a scalar type has lanes here.
    fn laned(self, t: PrimType) -> bool {
        t == self.float() || t == self.int() || t == PrimType::Bool
    }

    /// The vector of a laned type (a `bool` as its mask).
    fn vector(self, t: PrimType) -> Type {
        match (self, t == self.float()) {
            (Width::Four, true) => F32X4,
            (Width::Four, false) => I32X4,
            (Width::Two, true) => F64X2,
            (Width::Two, false) => I64X2,
        }
    }

    fn mask(self) -> Type {
        self.vector(self.int())
    }
}

/// One index component of a read: a uniform scalar or the lane index.
#[derive(Clone, Copy, PartialEq)]
enum Comp {
    Uniform(SubExp),
    Lane,
}

/// Where a parameter of an in-point reduction's map lambda takes its elements from.
#[derive(Clone, PartialEq)]
enum Source {
    /// The reduction's counter: the input is an `iota` of the reduction's width.
    Counter,
    /// An element of an input (or of a row of one) whose other components are these.
    Element(VarId, Vec<Comp>),
}

/// A vectorisable map kernel: the rows of inputs its code takes, the reads whose lane
/// component must be checked before a segment runs in vectors, and its uniform statements.
pub struct Plan {
    /// Rows of inputs (`let row = xss[s]`, `let row = xss[i]`), by the row's variable: the
    /// input and the components taken.
    rows: HashMap<VarId, (VarId, Vec<Comp>)>,
    /// Inputs read with a lane component, with the components up to and including it (the
    /// uniform ones are the kernel's: bound before the point's code runs).
    reads: Vec<(VarId, Vec<Comp>)>,
    /// The first variable bound by each statement computed as uniform scalar code.
    uniform: HashSet<VarId>,
    /// The first variable bound by each `if` whose branches run under execution masks.
    masked: HashSet<VarId>,
    /// The sources of the map lambdas' parameters of in-point reductions.
    sources: HashMap<VarId, Source>,
    width: Width,
    /// Whether the point's code makes per-point arrays (from the worker's arena, which each
    /// group resets first, as the scalar code does before each point).
    arrays: bool,
}

/// Whether SIMD code is on: not turned off by `OGHAM_SIMD=0` in the environment.
pub fn enabled() -> bool {
    std::env::var_os("OGHAM_SIMD").is_none_or(|v| v != "0")
}

/// The plan for kernel `seg` (named `name`) of function `f`, or `None` when its point's code
/// is not in the subset described in the module header (or SIMD is turned off). With
/// `OGHAM_SIMD=why` in the environment, says on standard error for each thread-level
/// kernel whether it runs in lanes and, if not, why not (each innermost statement outside the
/// subset), for surveys of what keeps kernels scalar.
pub fn plan(f: &ir::kir::Function, seg: &SegOp, name: &str) -> Option<Plan> {
    if !enabled() || seg.level != SegLevel::Thread {
        return None;
    }
    let survey = std::env::var_os("OGHAM_SIMD").is_some_and(|v| v == "why");
    let planned = try_plan(f, seg, survey);
    if survey {
        match &planned {
            Ok(plan) => eprintln!("simd {name}: {} lanes", plan.width.lanes()),
            Err(why) => eprintln!("simd {name}: scalar: {why}"),
        }
    }
    planned.ok()
}

/// The plan of a thread-level kernel, or why it has none. A kernel whose results choose no
/// width is still checked (at two lanes when a result is 64-bit, else four) so that the
/// reason names what else keeps it scalar. A `survey` lists every statement outside the subset
/// (the check goes on after each), not only the first.
fn try_plan(f: &ir::kir::Function, seg: &SegOp, survey: bool) -> Result<Plan, String> {
    if seg.kind != SegKind::Map {
        return Err("not a map kernel".into());
    }
    // Scalars, or per-point arrays of one dimension (in kernels whose arrays are interleaved).
    let interleaved = seg.layout == PointLayout::Interleaved;
    let all = |types: &[PrimType]| {
        seg.ret
            .iter()
            .all(|t| types.contains(&t.elem()) && (t.rank() == 0 || (t.rank() == 1 && interleaved)))
    };
    let width = if all(&[PrimType::F32, PrimType::I32]) {
        Some(Width::Four)
    } else if all(&[PrimType::F64, PrimType::I64]) {
        Some(Width::Two)
    } else {
        None
    };
    let checked = width.unwrap_or(
        if seg
            .ret
            .iter()
            .any(|t| matches!(t.elem(), PrimType::F64 | PrimType::I64))
        {
            Width::Two
        } else {
            Width::Four
        },
    );
    let mut check = Check::new(f, seg, checked).ok_or("no space")?;
    check.survey = survey;
    let ok = check.body(&seg.body);
    match (width, check.plan(ok)) {
        (Some(_), planned) => planned,
        (None, planned) => {
            let why = planned.err();
            let types: Vec<String> = seg
                .ret
                .iter()
                .map(|t| ir::print::print_type(f, t))
                .collect();
            let body = why.map_or(String::new(), |w| format!("; and {w}"));
            Err(format!("results {}{body}", types.join(", ")))
        }
    }
}

/// Runs the points `i_start..` of the current segment (`s`, whose coordinates are bound) a
/// group of lanes at a time while a whole group remains and every read's lane component is in
/// bounds; returns the first point left for the scalar code. `outputs` are the element
/// pointers of the kernel's results and their rows' lengths (1 for a scalar result).
pub fn vector_points(
    g: &mut Gen,
    plan: &Plan,
    seg: &SegOp,
    (s, inner): (Value, Value),
    (i_start, i_end): (Value, Value),
    outputs: &[(Value, Value)],
) -> Res<Value> {
    // In bounds: the uniform components before the lane's, and the lane's extent covers the
    // whole range.
    let mut ok = g.b.ins().iconst(I8, 1);
    for (arr, comps) in &plan.reads {
        let view = g.view(*arr)?;
        for (c, dim) in comps.iter().zip(&view.dims) {
            let inside = match c {
                Comp::Uniform(c) => {
                    let c = g.scalar(*c)?;
                    g.b.ins().icmp(IntCC::UnsignedLessThan, c, *dim)
                }
                Comp::Lane => g.b.ins().icmp(IntCC::SignedLessThanOrEqual, i_end, *dim),
            };
            ok = g.b.ins().band(ok, inside);
        }
    }
    let lanes = plan.width.lanes();
    let cursor = g.b.declare_var(I64);
    g.b.def_var(cursor, i_start);
    let (header, body, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
    g.b.ins().brif(ok, header, &[], exit, &[]);
    g.b.switch_to_block(header);
    let i = g.b.use_var(cursor);
    let left = g.b.ins().isub(i_end, i);
    let more =
        g.b.ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, left, lanes);
    g.loop_branch(more, body, exit);
    g.b.switch_to_block(body);
    g.b.seal_block(body);
    if plan.arrays {
        let ctx = g.ctx;
        g.call(HelperId::ArenaReset, &[ctx]);
    }
    let mut group = Lanes::new(i, seg, plan, exit);
    let results = group.body(g, &seg.body)?;
    let row_start = g.b.ins().imul(s, inner);
    let p = g.b.ins().iadd(row_start, i);
    // Array results: each lane's array is its point's row of the output, of the row's length
    // (checked before anything of the group is stored; else the scalar code reports it).
    let arrays: Vec<Option<PointArray>> = seg
        .body
        .result
        .iter()
        .zip(&seg.ret)
        .map(|(r, ty)| match r {
            SubExp::Var(v) if ty.rank() > 0 => group.array(*v),
            _ => None,
        })
        .collect();
    for (array, (_, row)) in arrays.iter().zip(outputs) {
        if let Some(array) = array {
            let fits = g.b.ins().icmp(IntCC::Equal, array.len(), *row);
            group.bail_unless(g, fits);
        }
    }
    for (((out, row), val), (ty, array)) in
        outputs.iter().zip(results).zip(seg.ret.iter().zip(&arrays))
    {
        // A scalar result is one element per point.
        let at = match array {
            Some(_) => g.b.ins().imul(p, *row),
            None => p,
        };
        let bytes = g.b.ins().imul_imm_s(at, elem_size(ty.elem()));
        let addr = g.b.ins().iadd(*out, bytes);
        match array {
            Some(array) => group.store_rows(g, array, addr, *row)?,
            None => {
                g.b.ins()
                    .store(MemFlagsData::new().with_notrap(), val, addr, 0);
            }
        }
    }
    let next = g.b.ins().iadd_imm_s(i, lanes);
    g.b.def_var(cursor, next);
    g.b.ins().jump(header, &[]);
    g.b.seal_block(header);
    g.b.switch_to_block(exit);
    g.b.seal_block(exit);
    Ok(g.b.use_var(cursor))
}

/// A group's copy of a per-point array (`arrays.rs`, used by the lane code of `lanes.rs`):
/// `len` vectors at `ptr`.
#[derive(Clone, Copy)]
struct PointArray {
    ptr: Value,
    len: Value,
    elem: PrimType,
}

impl PointArray {
    /// The address of the array's memory.
    fn ptr(&self) -> Value {
        self.ptr
    }

    /// The array's length.
    fn len(&self) -> Value {
        self.len
    }
}
