//! The `__global__` functions of one kernel around the body code of `emit`.
//!
//! Thread level, `NAME(ctx, launch, arena, arena_stride, n_items, chunks, partial, carry, slots...)`: the
//! space is segments (points of the outer dimensions) × the innermost dimension, cut into
//! `n_items = segments × chunks` work items; thread `g` runs items `g, g + threads, ...`. Item
//! `r` is chunk `r % chunks` of segment `r / chunks`: innermost indices
//! `[c·inner/chunks, (c+1)·inner/chunks)` — or, for reductions whose operators are all
//! commutative, `c, c + chunks, ...`, so that neighbouring threads read neighbouring elements.
//! A map runs with `chunks = inner` (one point per item); a histogram with `chunks = 1` (its
//! points are applied in order, as the interpreter does).
//!
//! - A reduction writes one value per segment or, when `partial` is not null, the item's
//!   accumulators as 64-bit slots at `partial[r·width ..]`; `NAME_combine(ctx, launch, segments,
//!   chunks, partial, slots...)` then folds each segment's partials in order and writes the results.
//! - A scan with `partial` not null only computes its items' totals; `NAME_combine` turns them
//!   into each item's carry-in (the totals before it, in order); the second launch, with
//!   `carry`, scans every item from its carry-in and writes the results.
//!
//! Block level, `NAME(ctx, launch, arena, arena_stride, n_items, slots...)`: one block per point (blocks
//! take points `b, b + blocks, ...`), of whole warps; dynamic shared memory of `8 · blockDim ·
//! shared_slots` bytes for the block's reductions and scans. The kernel's `block_widths` are the
//! widths of the loops its blocks share out (SOACs, iotas, fills, output rows) as the runtime
//! finds them at launch (constants, scalar inputs' slots, output rows' sizes), or `None` when one
//! is computed in the kernel or the block combines floats (the runtime then takes its fixed
//! block size). Arena: block `b` owns `BLOCK_ARENA_SHARES` regions of `arena_stride` bytes for
//! arrays made at block level and, when its threads make arrays of their own
//! (`CudaKernel::threads_allocate`), one more region per thread after them.
//!
//! Arguments: 64-bit slots as on the CPU, laid out by `ogham_ir::abi::ArgSlots` (an array's
//! pointer is the device's), passed by value as the kernel's last parameters `og_a0, og_a1,
//! ...` (every signature above ends with them). CUDA keeps kernel parameters in its constant
//! bank, which instructions read as operands: the inputs' values and extents take no registers
//! until a thread computes with them, and no copy goes up before a launch. At most
//! [`MAX_ARG_SLOTS`] fit CUDA's 4 KiB of parameters; a kernel with more is left to the host.
//!
//! A failed check writes the context record (`ctx`) with the
//! launch's number (`launch`, from 1 in launch order) and returns; every kernel keeps its current
//! point in `og_at` (a thread-level item's segment start, then each point; a block's point; a
//! combine thread's segment) so that the record keeps the lowest. Every kernel starts by
//! returning when the record names an earlier launch: the runtime does not wait for a launch to
//! read its record, so the launches after a failed one run before the host knows.
//!
//! What a point does with its values is the shared `lower::point`; its scan writes are guarded
//! by `!partial`, since the first launch of a two-pass scan computes totals only (the CPU's
//! first pass writes: see `docs/compiler.md`, "Kernel calling convention"). Histogram
//! destinations are viewed as `[segments × bins]` rows by the shared `lower::kernel_hist_dests`.

use super::Unsupported;
use super::emit::{Emit, Res, ctype, var};
use crate::back::lower;
use ogham_ir::abi::{self, ArgSlots, ErrorSite};
use ogham_ir::artifact::cuda::{Counting, CudaKernel, Width};
use ogham_ir::kir::{HostStmt, PointLayout, SegKind, SegLevel, SegOp};
use ogham_ir::math::MathFn;
use ogham_ir::op::BinOp;
use ogham_ir::source::Span;
use ogham_ir::{Lambda, SubExp, VarId};
use std::collections::HashMap;

/// The text of one kernel and its launch plan.
pub struct Built {
    pub text: String,
    pub kernel: CudaKernel,
}

/// Declares the kernel's inputs from their argument slots ([`ArgSlots`]); their values and
/// extents are the same in every thread ([`Emit::uniform_extents`], [`Emit::shared_arrays`]).
fn load_inputs(e: &mut Emit, slots: &ArgSlots, inputs: &[VarId]) {
    for (v, at) in inputs.iter().zip(slots.inputs()) {
        let first = at.first;
        match e.f.ty(*v).clone() {
            ogham_ir::Type::Prim(p) => {
                let t = ctype(p);
                e.line(format!(
                    "const {t} {} = og_unbits<{t}>({});",
                    var(*v),
                    slot(first)
                ));
                e.uniform_extents.insert(var(*v));
            }
            ogham_ir::Type::Array { elem, .. } => {
                let t = ctype(elem);
                let r = at.rank;
                let dims: Vec<String> = (0..r)
                    .map(|d| format!("(i64){}", slot(at.extent(d))))
                    .collect();
                e.line(format!(
                    "View<{t}, {r}> {} = og_view<{t}, {r}>(({t}*){}, {{{}}});",
                    var(*v),
                    slot(first),
                    dims.join(", ")
                ));
                e.uniform_extents.extend(Emit::dims(&var(*v), r));
                e.shared_arrays.insert(*v);
            }
        }
    }
}

/// Declares the output pointers and row sizes (`og_out<j>`, `og_row<j>`) of the outputs bound to
/// `pat` from their argument slots.
fn load_outputs(e: &mut Emit, slots: &ArgSlots, pat: &[VarId]) {
    for (j, (v, at)) in pat.iter().zip(slots.outputs()).enumerate() {
        let t = ctype(e.f.ty(*v).elem());
        e.line(format!(
            "{t}* og_out{j} = ({t}*){}; const i64 og_row{j} = (i64){};",
            slot(at.ptr),
            slot(at.row)
        ));
    }
}

/// Writes `val` (of type `ty`) as output `j`'s value at flat position `p`.
fn write_output(
    e: &mut Emit,
    j: usize,
    p: &str,
    val: &str,
    ty: &ogham_ir::Type,
    block: bool,
) -> Res<()> {
    if ty.rank() == 0 {
        let w = format!("og_out{j}[{p}] = {val};");
        e.line(if block {
            format!("if (threadIdx.x == 0) {w}")
        } else {
            w
        });
        return Ok(());
    }
    lower::check_point_result(e, format!("og_count({val})"), format!("og_row{j}"))?;
    let r = ty.rank();
    let dims: Vec<String> = (0..r).map(|k| format!("{val}.d[{k}]")).collect();
    let (first, step) = if block {
        e.shares_out(&format!("og_row{j}"));
        ("threadIdx.x", "blockDim.x")
    } else {
        ("0", "1")
    };
    e.line(format!(
        "og_copy(og_view<{t}, {r}>(og_out{j} + ({p}) * og_row{j}, {{{}}}), {val}, {first}, {step});",
        dims.join(", "),
        t = ctype(ty.elem())
    ));
    Ok(())
}

/// Binds the space's index variables of dimensions `dims` from the flat position `flat`.
fn decode(e: &mut Emit, seg: &SegOp, dims: usize, flat: &str) {
    e.line(format!("i64 og_rest = {flat};"));
    for d in (0..dims).rev() {
        let extent = e.operand(seg.space[d].1);
        e.line(format!(
            "const i64 {} = og_rest % {extent}; og_rest /= {extent};",
            var(seg.space[d].0)
        ));
    }
}

/// The most argument slots a kernel takes: CUDA passes at most 4 KiB of parameters to a
/// kernel, and 64 bytes of them are the kernel's own (context, launch number, arena, sizes).
/// A kernel with more is evaluated on the host.
pub const MAX_ARG_SLOTS: usize = 500;

/// A kernel's arguments: the slots ([`ArgSlots`]) of its inputs and of the outputs bound to
/// `pat`.
struct Args<'a> {
    slots: ArgSlots,
    inputs: Vec<VarId>,
    pat: &'a [VarId],
}

/// Builds kernel `seg` (statement `stmt` of function `f`) named `name`.
pub fn build(
    f: &ogham_ir::kir::Function,
    stmt: &HostStmt,
    seg: &SegOp,
    name: &str,
    unchecked: &[Span],
    counting: Counting,
) -> Result<Built, Unsupported> {
    let inputs = abi::kernel_inputs(f, stmt);
    let slots = ArgSlots::of_kernel(f, seg, &inputs, &stmt.pat);
    if slots.len() > MAX_ARG_SLOTS {
        return Err(Unsupported(format!(
            "{} argument slots, more than the {MAX_ARG_SLOTS} that CUDA's 4 KiB of kernel parameters hold",
            slots.len()
        )));
    }
    let args = Args {
        slots,
        inputs,
        pat: &stmt.pat,
    };
    match seg.level {
        SegLevel::Thread => thread_kernel(f, seg, name, unchecked, counting, args),
        SegLevel::Block => block_kernel(f, seg, name, unchecked, counting, args),
    }
}

fn thread_kernel(
    f: &ogham_ir::kir::Function,
    seg: &SegOp,
    name: &str,
    unchecked: &[Span],
    counting: Counting,
    args: Args,
) -> Result<Built, Unsupported> {
    let mut e = Emit::new((f, seg), unchecked, counting, 1);
    e.lanes = seg.layout == PointLayout::Interleaved;
    e.line("i64 og_at = 0;");
    load_inputs(&mut e, &args.slots, &args.inputs);
    load_outputs(&mut e, &args.slots, args.pat);
    let rank = seg.space.len();
    let inner = e.operand(seg.space[rank - 1].1);
    let ops = seg.kind.operators();
    let width: usize = ops.iter().map(|(_, n)| n.len()).sum();
    let commutative = matches!(&seg.kind, SegKind::Red(reds) if reds.iter().all(|r| r.commutative));
    let hist_dests = match &seg.kind {
        SegKind::Hist(hists) => lower::kernel_hist_dests(&mut e, hists, rank)?,
        _ => Vec::new(),
    };
    e.line("const i64 og_gid = blockIdx.x * (i64)blockDim.x + threadIdx.x;");
    // The interleaved sub-arenas are declared here once the body's element sizes are known.
    let lanes_at = (e.mark(), e.depth());
    if !e.lanes {
        e.line("OgArena og_arena = {arena + og_gid * arena_stride, 0, arena_stride};");
    }
    e.open_loop("for (i64 og_r = og_gid; og_r < n_items; og_r += (i64)gridDim.x * blockDim.x)");
    e.line("const i64 og_s = og_r / chunks, og_c = og_r % chunks;");
    e.line(format!("og_at = og_s * {inner};"));
    decode(&mut e, seg, rank - 1, "og_s");
    // Accumulators: from the neutral elements, or a scan's carry-in.
    let accs = thread_accumulators(&mut e, f, &ops, width)?;
    let i = var(seg.space[rank - 1].0);
    if commutative {
        e.open(format!(
            "for (i64 {i} = og_c; {i} < {inner}; {i} += chunks)"
        ));
    } else {
        e.open(format!(
            "for (i64 {i} = og_c * {inner} / chunks; {i} < (og_c + 1) * {inner} / chunks; {i}++)"
        ));
    }
    e.line(if e.lanes {
        "og_lanes_reset(og_lanes);"
    } else {
        "og_arena.used = 0;"
    });
    e.line(format!("const i64 og_p = og_s * {inner} + {i};"));
    e.line("og_at = og_p;");
    let vals = lower::body(&mut e, &seg.body)?;
    // A scan's first pass (totals only) writes nothing.
    let segment = "og_s".to_string();
    let scan_writes = Some("!partial".to_string());
    lower::point(
        &mut e,
        &seg.kind,
        &accs,
        (&hist_dests, &segment),
        &vals,
        scan_writes,
        &mut |e, j, val| write_output(e, j, "og_p", val, &seg.ret[j], false),
    )?;
    e.close();
    store_totals(&mut e, &seg.kind, &accs.concat(), width);
    e.close();
    let lanes = e.lanes;
    if lanes {
        // The runtime's arena holds `arena_stride` bytes per class for every thread of the grid.
        let init = format!(
            "OgLanes og_lanes = og_lanes_init(arena, arena_stride, og_gid, (i64)gridDim.x * blockDim.x, {});",
            e.lane_classes()
        );
        e.insert_line(lanes_at.0, lanes_at.1, &init);
    }
    let emitted = e.finish();
    let mut sites = emitted.sites;
    let mut text = global(
        name,
        "char* arena, i64 arena_stride, i64 n_items, i64 chunks, u64* partial, const u64* carry",
        &args.slots,
        &emitted.text,
    );
    // A tree groups the chunks' totals otherwise than the sequential combine: only for
    // built-in operators that any grouping leaves exact ([`exact_operator`]), of integers or
    // booleans.
    let by_warps = match &seg.kind {
        SegKind::Red(_) => ops.iter().all(|(lambda, neutral)| {
            exact_operator(lambda) && neutral.iter().all(|n| !f.subexp_type(*n).elem().is_float())
        }),
        _ => false,
    };
    let combine = if width > 0 {
        let (c, combine_sites) = if by_warps {
            warp_combine_kernel(f, seg, name, &args, sites.len(), unchecked, counting)?
        } else {
            combine_kernel(f, seg, name, &args, sites.len(), unchecked, counting)?
        };
        text.push('\n');
        text.push_str(&c);
        sites.extend(combine_sites);
        Some(format!("{name}_combine"))
    } else {
        None
    };
    Ok(Built {
        text,
        kernel: CudaKernel {
            name: name.to_string(),
            level: seg.level,
            inputs: args.inputs,
            sites,
            accumulators: width,
            combine,
            combine_by_warps: by_warps && width > 0,
            shared_slots: 0,
            block_widths: None,
            allocates: emitted.allocates,
            threads_allocate: emitted.allocates,
            // Only interleaved kernels allocate from `og_lanes`.
            lane_classes: emitted.lane_classes.count_ones() as i64,
        },
    })
}

/// The accumulators of a thread kernel's operators (`og_acc0`, ...), each from its neutral
/// element or, continuing a scan, from the carry-in.
fn thread_accumulators(
    e: &mut Emit,
    f: &ogham_ir::kir::Function,
    ops: &[(&Lambda, &[SubExp])],
    width: usize,
) -> Result<Vec<Vec<String>>, Unsupported> {
    let mut accs: Vec<Vec<String>> = Vec::new();
    let mut k = 0;
    for (_, neutral) in ops {
        let mut names = Vec::new();
        for n in neutral.iter() {
            let ty = f.subexp_type(*n);
            if ty.rank() > 0 {
                return Err(Unsupported(
                    "a reduction or scan of arrays in a kernel".to_string(),
                ));
            }
            let t = ctype(ty.elem());
            let acc = format!("og_acc{k}");
            let init = e.operand(*n);
            e.line(format!(
                "{t} {acc} = carry ? og_unbits<{t}>(carry[og_r * {width} + {k}]) : {init};"
            ));
            names.push(acc);
            k += 1;
        }
        accs.push(names);
    }
    Ok(accs)
}

/// A reduction or scan task's totals: to `partial` when given, else (a reduction) into the
/// outputs at the segment.
fn store_totals(e: &mut Emit, kind: &SegKind, flat_accs: &[String], width: usize) {
    match kind {
        SegKind::Red(_) => {
            e.open("if (partial)");
            for (c, a) in flat_accs.iter().enumerate() {
                e.line(format!("partial[og_r * {width} + {c}] = og_bits({a});"));
            }
            e.else_branch();
            for (c, a) in flat_accs.iter().enumerate() {
                e.line(format!("og_out{c}[og_s] = {a};"));
            }
            e.close();
        }
        SegKind::Scan(_) => {
            e.open("if (partial)");
            for (c, a) in flat_accs.iter().enumerate() {
                e.line(format!("partial[og_r * {width} + {c}] = og_bits({a});"));
            }
            e.close();
        }
        SegKind::Map | SegKind::Hist(_) => {}
    }
}

/// `NAME_combine(ctx, launch, args, segments, chunks, partial)`: one thread per segment folds its
/// items' partial results in order (a reduction: into the outputs; a scan: into each item's
/// carry-in, in place).
fn combine_kernel(
    f: &ogham_ir::kir::Function,
    seg: &SegOp,
    name: &str,
    args: &Args,
    first_site: usize,
    unchecked: &[Span],
    counting: Counting,
) -> Result<(String, Vec<ErrorSite>), Unsupported> {
    let mut e = Emit::new((f, seg), unchecked, counting, 1);
    e.checks.first = first_site;
    e.line("i64 og_at = 0;");
    load_inputs(&mut e, &args.slots, &args.inputs);
    let scan = matches!(seg.kind, SegKind::Scan(_));
    if !scan {
        load_outputs(&mut e, &args.slots, args.pat);
    }
    let ops = seg.kind.operators();
    let width: usize = ops.iter().map(|(_, n)| n.len()).sum();
    e.line("const i64 og_s = blockIdx.x * (i64)blockDim.x + threadIdx.x;");
    e.line("if (og_s >= segments) return;");
    e.line("og_at = og_s;");
    e.line(format!("u64* og_part = partial + og_s * chunks * {width};"));
    let mut types = Vec::new();
    let mut accs = Vec::new();
    let mut k = 0;
    for (_, neutral) in &ops {
        let mut names = Vec::new();
        for n in neutral.iter() {
            let t = ctype(f.subexp_type(*n).elem());
            let init = if scan {
                e.operand(*n)
            } else {
                format!("og_unbits<{t}>(og_part[{k}])")
            };
            e.line(format!("{t} og_acc{k} = {init};"));
            names.push(format!("og_acc{k}"));
            types.push(t);
            k += 1;
        }
        accs.push(names);
    }
    let start = if scan { 0 } else { 1 };
    e.open_loop(format!("for (i64 og_c = {start}; og_c < chunks; og_c++)"));
    let mut k = 0;
    for (j, (op, neutral)) in ops.iter().enumerate() {
        let mut vals = Vec::new();
        for c in 0..neutral.len() {
            let x = format!("og_x{}", k + c);
            e.line(format!(
                "const {t} {x} = og_unbits<{t}>(og_part[og_c * {width} + {}]);",
                k + c,
                t = types[k + c]
            ));
            if scan {
                e.line(format!(
                    "og_part[og_c * {width} + {}] = og_bits({});",
                    k + c,
                    accs[j][c]
                ));
            }
            vals.push(x);
        }
        lower::accumulate(&mut e, op, &accs[j], &vals)?;
        k += neutral.len();
    }
    e.close();
    if !scan {
        for (c, a) in accs.concat().iter().enumerate() {
            e.line(format!("og_out{c}[og_s] = {a};"));
        }
    }
    let emitted = e.finish();
    Ok((
        global(
            &format!("{name}_combine"),
            "i64 segments, i64 chunks, u64* partial",
            &args.slots,
            &emitted.text,
        ),
        emitted.sites,
    ))
}

/// Whether `lambda` is one built-in operator of its two parameters that is associative and
/// commutative on integers and booleans (`+`, `*`, `&`, `|`, `^`, `min`, `max`), so that any
/// grouping of the operands gives the interpreter's value. A lambda of another shape (`a * 3 +
/// b`, which is not associative) keeps the sequential combine, the interpreter's fold.
fn exact_operator(lambda: &Lambda) -> bool {
    let ([a, b], [stmt]) = (&lambda.params[..], &lambda.body.stmts[..]) else {
        return false;
    };
    let of_params = |x: &SubExp, y: &SubExp| {
        let (a, b) = (SubExp::Var(*a), SubExp::Var(*b));
        (*x == a && *y == b) || (*x == b && *y == a)
    };
    let exact = match &stmt.exp {
        ogham_ir::Exp::BinOp(op, x, y) => {
            matches!(
                op,
                BinOp::Add | BinOp::Mul | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor
            ) && of_params(x, y)
        }
        ogham_ir::Exp::Math(MathFn::Min | MathFn::Max, _, args) => {
            matches!(&args[..], [x, y] if of_params(x, y))
        }
        _ => false,
    };
    exact && stmt.pat.len() == 1 && lambda.body.result == [SubExp::Var(stmt.pat[0])]
}

/// `NAME_combine(ctx, launch, args, segments, chunks, partial)` of a reduction whose operators are all
/// built-in exact ones ([`exact_operator`]) of integers and booleans: a warp per
/// segment, lane `l` folding the contiguous chunks `[l·chunks/32, (l+1)·chunks/32)` in order,
/// then the lanes' totals combined in order by shuffles (lane `l` takes lane `l + d` when `l`
/// is a multiple of `2d`); lane 0 writes the results. Launched in whole warps.
fn warp_combine_kernel(
    f: &ogham_ir::kir::Function,
    seg: &SegOp,
    name: &str,
    args: &Args,
    first_site: usize,
    unchecked: &[Span],
    counting: Counting,
) -> Result<(String, Vec<ErrorSite>), Unsupported> {
    let mut e = Emit::new((f, seg), unchecked, counting, 1);
    e.checks.first = first_site;
    e.line("i64 og_at = 0;");
    load_inputs(&mut e, &args.slots, &args.inputs);
    load_outputs(&mut e, &args.slots, args.pat);
    let ops = seg.kind.operators();
    let width: usize = ops.iter().map(|(_, n)| n.len()).sum();
    // A warp's lanes share `og_s`: they leave together.
    e.line("const i64 og_s = (blockIdx.x * (i64)blockDim.x + threadIdx.x) / 32;");
    e.line("const unsigned og_lane = threadIdx.x % 32;");
    e.line("if (og_s >= segments) return;");
    e.line("og_at = og_s;");
    e.line(format!("u64* og_part = partial + og_s * chunks * {width};"));
    let mut accs = Vec::new();
    let mut types = Vec::new();
    let mut k = 0;
    for (_, neutral) in &ops {
        let mut names = Vec::new();
        for n in neutral.iter() {
            let p = f.subexp_type(*n).elem();
            let init = e.operand(*n);
            e.line(format!("{} og_acc{k} = {init};", ctype(p)));
            names.push(format!("og_acc{k}"));
            types.push(p);
            k += 1;
        }
        accs.push(names);
    }
    e.open_loop(
        "for (i64 og_c = og_lane * chunks / 32; og_c < (og_lane + 1) * chunks / 32; og_c++)",
    );
    let mut k = 0;
    for (j, (op, neutral)) in ops.iter().enumerate() {
        let vals: Vec<String> = (0..neutral.len())
            .map(|c| {
                format!(
                    "og_unbits<{t}>(og_part[og_c * {width} + {}])",
                    k + c,
                    t = ctype(types[k + c])
                )
            })
            .collect();
        lower::accumulate(&mut e, op, &accs[j], &vals)?;
        k += neutral.len();
    }
    e.close();
    e.open_loop("for (unsigned og_d = 1; og_d < 32; og_d *= 2)");
    let mut k = 0;
    for (j, (op, neutral)) in ops.iter().enumerate() {
        let after: Vec<String> = (0..neutral.len())
            .map(|c| {
                let y = format!("og_y{}", k + c);
                e.line(format!(
                    "const {} {y} = og_shfl_down({}, og_d);",
                    ctype(types[k + c]),
                    accs[j][c]
                ));
                y
            })
            .collect();
        e.open("if (og_lane % (2 * og_d) == 0)");
        lower::accumulate(&mut e, op, &accs[j], &after)?;
        e.close();
        k += neutral.len();
    }
    e.close();
    e.open("if (og_lane == 0)");
    for (c, a) in accs.concat().iter().enumerate() {
        e.line(format!("og_out{c}[og_s] = {a};"));
    }
    e.close();
    let emitted = e.finish();
    Ok((
        global(
            &format!("{name}_combine"),
            "i64 segments, i64 chunks, u64* partial",
            &args.slots,
            &emitted.text,
        ),
        emitted.sites,
    ))
}

fn block_kernel(
    f: &ogham_ir::kir::Function,
    seg: &SegOp,
    name: &str,
    unchecked: &[Span],
    counting: Counting,
    args: Args,
) -> Result<Built, Unsupported> {
    if !matches!(seg.kind, SegKind::Map) {
        return Err(Unsupported("a block-level kernel that is not a map".into()));
    }
    let mut e = Emit::new((f, seg), unchecked, counting, 1);
    e.block = true;
    e.line("i64 og_at = 0;");
    load_inputs(&mut e, &args.slots, &args.inputs);
    load_outputs(&mut e, &args.slots, args.pat);
    // The block's arena: `BLOCK_ARENA_SHARES` shares, then one share per thread if its threads
    // make arrays of their own (known once the body is emitted: declared at `arenas_at`, reset
    // for each point at `reset_at`).
    let arenas_at = (e.mark(), e.depth());
    e.open_loop("for (i64 og_p = blockIdx.x; og_p < n_items; og_p += gridDim.x)");
    let reset_at = (e.mark(), e.depth());
    e.line("og_block_arena.used = 0; og_at = og_p;");
    decode(&mut e, seg, seg.space.len(), "og_p");
    let vals = lower::body(&mut e, &seg.body)?;
    for (j, val) in vals.iter().enumerate() {
        write_output(&mut e, j, "og_p", val, &seg.ret[j], true)?;
    }
    // The block's arena and shared memory are reused by its next point.
    e.line("__syncthreads();");
    e.close();
    // Later insertion first: an insertion moves the text after it.
    let threads_allocate = e.thread_arena();
    if threads_allocate {
        e.insert_line(reset_at.0, reset_at.1, "og_arena.used = 0;");
    }
    let shares = ogham_ir::abi::BLOCK_ARENA_SHARES;
    let region = if threads_allocate {
        format!("((i64)blockDim.x + {shares})")
    } else {
        shares.to_string()
    };
    let mut arenas = vec![
        format!("const i64 og_region = blockIdx.x * {region};"),
        format!(
            "OgArena og_block_arena = {{arena + og_region * arena_stride, 0, {shares} * arena_stride}};"
        ),
    ];
    if threads_allocate {
        arenas.push(format!(
            "OgArena og_arena = {{arena + (og_region + {shares} + threadIdx.x) * arena_stride, 0, arena_stride}};"
        ));
    }
    let arenas: Vec<&str> = arenas.iter().map(String::as_str).collect();
    e.insert_lines(arenas_at.0, arenas_at.1, &arenas);
    let emitted = e.finish();
    let block_widths = emitted
        .block_widths
        .as_deref()
        .and_then(|widths| launch_widths(f, &args, widths));
    let shared = if emitted.shared_slots > 0 {
        "  extern __shared__ __align__(16) char og_shared[];\n"
    } else {
        ""
    };
    Ok(Built {
        text: global(
            name,
            "char* arena, i64 arena_stride, i64 n_items",
            &args.slots,
            &format!("{shared}{}", emitted.text),
        ),
        kernel: CudaKernel {
            name: name.to_string(),
            level: seg.level,
            inputs: args.inputs,
            sites: emitted.sites,
            accumulators: 0,
            combine: None,
            combine_by_warps: false,
            shared_slots: emitted.shared_slots,
            block_widths,
            allocates: emitted.allocates,
            threads_allocate: emitted.thread_arena,
            lane_classes: 0,
        },
    })
}

/// The widths `widths` (C expressions) as the runtime finds them at launch: integer constants,
/// scalar inputs' argument slots and output rows' sizes; `None` when one is computed inside the
/// kernel.
fn launch_widths(
    f: &ogham_ir::kir::Function,
    args: &Args,
    widths: &[String],
) -> Option<Vec<Width>> {
    let scalars = args
        .inputs
        .iter()
        .zip(args.slots.inputs())
        .filter(|(v, _)| f.ty(**v).rank() == 0)
        .map(|(v, at)| (var(*v), at.first));
    let rows = args
        .slots
        .outputs()
        .iter()
        .enumerate()
        .map(|(j, at)| (format!("og_row{j}"), at.row));
    let known: HashMap<String, usize> = scalars.chain(rows).collect();
    widths
        .iter()
        .map(|w| match known.get(w) {
            Some(slot) => Some(Width::Slot(*slot)),
            None => w
                .strip_prefix("((i64)")
                .and_then(|w| w.strip_suffix("LL)"))
                .and_then(|x| x.parse().ok())
                .map(Width::Const),
        })
        .collect()
}

/// A `__global__` function: the failure record, the launch's number, then `params`, and
/// `body`. Every kernel first returns if an earlier launch failed (`og_failed_before`): the
/// runtime reads the record only where the host reads what the kernels made.
fn global(name: &str, params: &str, slots: &ArgSlots, body: &str) -> String {
    let slots: String = (0..slots.len())
        .map(|k| format!(", u64 {}", slot(k)))
        .collect();
    format!(
        "extern \"C\" __global__ void {name}(OgCtx* ctx, u64 og_launch, {params}{slots}) {{\n  if (og_failed_before(ctx, og_launch)) return;\n{body}}}\n"
    )
}

/// The parameter holding argument slot `k` ([`ArgSlots`]).
fn slot(k: usize) -> String {
    format!("og_a{k}")
}
