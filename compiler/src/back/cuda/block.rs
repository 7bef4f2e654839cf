//! SOACs at block level in CUDA C (`Emit::block`): shared out across the threads of the block
//! that runs the point. Maps take rows one per thread in turn (coalesced); reductions and scans
//! run each thread over a contiguous chunk, then combine the chunks' totals across the block.
//! Reductions use the order-preserving tree (thread `t` takes `t + d` when `t` is a multiple of
//! `2d`) by warp shuffles within each warp, then over the warps' totals in the first warp, so
//! that the grouping is the shared-memory tree's that came before. Scans of integers and
//! booleans (exact operators) scan within warps by shuffles and combine the warps' totals in
//! order; float scans keep the Hillis–Steele scan of the totals in shared memory, whose grouping
//! they had. Either gives each thread its carry-in, after which the chunks are scanned again.
//! Scatters take their points one per thread in turn, in
//! two passes: the first claims each destination row for the last point that writes it (an
//! atomic maximum of the point's index in a claim array of the destination's length, from the
//! block's arena), the second makes the claimed writes, so that the last write of the points in
//! order wins, as the interpreter applies them, and no two threads write one row. Histograms run
//! on thread 0 in order, by the shared sequential lowering.
//!
//! Invariants: the block is whole warps (shuffles name all 32 lanes), and every thread of the
//! block reaches every shuffle (they are outside per-thread branches). The widths of the loops
//! the block shares out are recorded (`Emit::shares_out`) so that the runtime can fit the block
//! to them; a reduction or scan of floats, whose grouping follows the block's size, withdraws
//! that (`Emit::block_widths`).

use super::emit::{CView, Emit, Res, ctype, var};
use crate::back::lower::{self, Lower};
use ogham_ir::types::PrimType;
use ogham_ir::{Lambda, Soac, SubExp, VarId};

/// A SOAC at block level, shared out across the block's threads.
pub fn soac(e: &mut Emit, soac: &Soac, pat: &[VarId]) -> Res<()> {
    let (map, scans, reds) = match soac {
        Soac::Screma {
            map, scans, reds, ..
        } => (map, scans, reds),
        Soac::Scatter { map, dests, .. } => return scatter(e, soac, map, dests, pat),
        Soac::Hist { hists, .. } => return on_one_thread(e, soac, hists, pat),
    };
    let (width, inputs) = lower::soac_inputs(e, soac)?;
    e.shares_out(&width);
    let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
    let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
    let arrays = lower::screma_arrays(e, pat, n_scan, n_red)?;
    let i = e.temp("i");
    if scans.is_empty() && reds.is_empty() {
        // A map: rows shared out one per thread in turn (coalesced).
        e.open(format!(
            "for (i64 {i} = threadIdx.x; {i} < {width}; {i} += blockDim.x)"
        ));
        e.lambdas += 1;
        let args = e.current_rows(&inputs, &i);
        let vals = lower::apply(e, map, &args)?;
        for (c, val) in vals.iter().enumerate() {
            lower::write_row(e, &arrays[c], &i, val)?;
        }
        e.lambdas -= 1;
        e.close();
        e.line("__syncthreads();");
        bind(e, pat, &arrays, Vec::new(), 0);
        return Ok(());
    }
    e.shared_slots = e.shared_slots.max(n_scan + n_red);
    // Contiguous chunks, one per thread, so that operators combine in order.
    let (lo, hi) = (e.temp("lo"), e.temp("hi"));
    e.line(format!(
        "const i64 {lo} = threadIdx.x * {width} / blockDim.x, {hi} = (threadIdx.x + 1) * {width} / blockDim.x;"
    ));
    let ops = ogham_ir::screma_operators(scans, reds);
    let accs = lower::accumulators(e, &ops)?;
    let types: Vec<PrimType> = ops
        .iter()
        .flat_map(|(_, n)| n.iter().map(|x| e.f.subexp_type(*x).elem()))
        .collect();
    if types.iter().any(|t| t.is_float()) {
        // Its grouping of the floats follows the block's size, which must then stay fixed.
        e.block_widths = None;
    }
    // Pass 1: this thread's chunk: the mapped rows, its totals.
    e.open_loop(format!("for (i64 {i} = {lo}; {i} < {hi}; {i}++)"));
    e.lambdas += 1;
    let args = e.current_rows(&inputs, &i);
    let vals = lower::apply(e, map, &args)?;
    let mut k = 0;
    for (j, (op, neutral)) in ops.iter().enumerate() {
        lower::accumulate(e, op, &accs[j], &vals[k..k + neutral.len()])?;
        k += neutral.len();
    }
    for (c, val) in vals[k..].iter().enumerate() {
        lower::write_row(e, &arrays[n_scan + c], &i, val)?;
    }
    e.lambdas -= 1;
    e.close();
    // The chunks' totals combined across the block, one operator after another, through
    // shared memory: one slot array per component.
    let slots: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(c, t)| format!("(({}*)(og_shared + {c} * 8 * (i64)blockDim.x))", ctype(*t)))
        .collect();
    let flat: Vec<String> = accs.concat();
    let mut base = 0;
    let mut carries: Vec<Vec<String>> = Vec::new();
    for (j, (op, neutral)) in ops.iter().enumerate() {
        let m = neutral.len();
        let (sh, totals, tys) = (
            &slots[base..base + m],
            &flat[base..base + m],
            &types[base..base + m],
        );
        if j >= scans.len() {
            reduce_totals(e, op, sh, totals, tys)?;
        } else if tys.iter().all(|t| !t.is_float()) {
            carries.push(scan_totals_by_warps(e, op, sh, totals, neutral, tys)?);
        } else {
            for (s, total) in sh.iter().zip(totals) {
                e.line(format!("{s}[threadIdx.x] = {total};"));
            }
            e.line("__syncthreads();");
            carries.push(scan_totals(e, op, sh, neutral, tys)?);
        }
        e.line("__syncthreads();");
        base += m;
    }
    if !scans.is_empty() {
        // Pass 2: the chunk again from its carry-in, writing the scans.
        for (acc, carry) in accs.iter().zip(&carries) {
            for (a, c) in acc.iter().zip(carry) {
                e.line(format!("{a} = {c};"));
            }
        }
        e.open_loop(format!("for (i64 {i} = {lo}; {i} < {hi}; {i}++)"));
        e.lambdas += 1;
        let args = e.current_rows(&inputs, &i);
        let vals = lower::apply(e, map, &args)?;
        let mut k = 0;
        for (j, scan) in scans.iter().enumerate() {
            let m = scan.neutral.len();
            lower::accumulate(e, &scan.lambda, &accs[j], &vals[k..k + m])?;
            for (c, acc) in accs[j].iter().enumerate() {
                lower::write_row(e, &arrays[k + c], &i, acc)?;
            }
            k += m;
        }
        e.lambdas -= 1;
        e.close();
        e.line("__syncthreads();");
    }
    let red_accs: Vec<String> = accs[scans.len()..].concat();
    bind(e, pat, &arrays, red_accs, n_scan);
    Ok(())
}

/// A scatter across the block (see the module's header): the map `map` gives each point its
/// (index, value) pair per destination of `dests`; binds `pat` to the updated destinations.
fn scatter(e: &mut Emit, soac: &Soac, map: &Lambda, dests: &[VarId], pat: &[VarId]) -> Res<()> {
    let (width, inputs) = lower::soac_inputs(e, soac)?;
    e.shares_out(&width);
    let views: Vec<CView> = dests.iter().map(|d| e.view(*d)).collect::<Res<_>>()?;
    let mut claims = Vec::new();
    for view in &views {
        let rows = e.dims(view)[0].clone();
        e.shares_out(&rows);
        let claim = e.alloc(PrimType::I64, &[rows])?;
        e.line(format!(
            "og_fill({claim}, ((i64)-1LL), threadIdx.x, blockDim.x);"
        ));
        claims.push(claim);
    }
    e.line("__syncthreads();");
    for pass in [Pass::Claim, Pass::Write] {
        let i = e.temp("i");
        e.open(format!(
            "for (i64 {i} = threadIdx.x; {i} < {width}; {i} += blockDim.x)"
        ));
        e.lambdas += 1;
        let args = e.current_rows(&inputs, &i);
        let vals = lower::apply(e, map, &args)?;
        for ((view, claim), pair) in views.iter().zip(&claims).zip(vals.chunks(2)) {
            let at = e.scalar_of(&pair[0]);
            let rows = e.dims(view)[0].clone();
            let inside = e.in_bounds(&at, &rows);
            let slot = format!("{claim}.p[({at}) * {claim}.s[0]]");
            match pass {
                Pass::Claim => e.line(format!("if ({inside}) atomicMax(&{slot}, {i});")),
                Pass::Write => e.when(format!("{inside} && {slot} == {i}"), &mut |e| {
                    lower::write_row(e, view, &at, &pair[1])
                })?,
            }
        }
        e.lambdas -= 1;
        e.close();
        e.line("__syncthreads();");
    }
    for (v, d) in pat.iter().zip(dests) {
        e.declare(*v, &var(*d));
    }
    Ok(())
}

/// The two passes of a block-level [`scatter`].
#[derive(Clone, Copy)]
enum Pass {
    Claim,
    Write,
}

/// A histogram (`hists` its operators): its points applied in order, on one thread; binds
/// `pat` to its (updated) destinations.
fn on_one_thread(e: &mut Emit, soac: &Soac, hists: &[ogham_ir::HistOp], pat: &[VarId]) -> Res<()> {
    e.single(&mut |e| lower::sequential(e, soac, &[]))?;
    let dests = hists.iter().flat_map(|h| h.dests.iter());
    for (v, d) in pat.iter().zip(dests) {
        e.declare(*v, &var(*d));
    }
    Ok(())
}

/// The inclusive Hillis–Steele scan of the chunks' totals in the slots `sh` (of `types`), then
/// each thread's carry-in (the neutral element for thread 0), returned. Its grouping of the
/// totals is the one float scans keep (`scan_totals_by_warps` regroups them).
fn scan_totals(
    e: &mut Emit,
    op: &Lambda,
    sh: &[String],
    neutral: &[SubExp],
    types: &[PrimType],
) -> Res<Vec<String>> {
    let m = sh.len();
    let d = e.temp("d");
    e.open_loop(format!("for (i64 {d} = 1; {d} < blockDim.x; {d} *= 2)"));
    let news: Vec<String> = (0..m)
        .map(|c| {
            let t = e.temp("x");
            e.line(format!("{} {t} = {}[threadIdx.x];", ctype(types[c]), sh[c]));
            t
        })
        .collect();
    e.open(format!("if (threadIdx.x >= {d})"));
    e.lambdas += 1;
    let mut args: Vec<String> = sh
        .iter()
        .map(|s| format!("{s}[threadIdx.x - {d}]"))
        .collect();
    args.extend(news.iter().cloned());
    let r = lower::apply(e, op, &args)?;
    for (x, y) in news.iter().zip(r) {
        e.line(format!("{x} = {y};"));
    }
    e.lambdas -= 1;
    e.close();
    e.line("__syncthreads();");
    for (s, x) in sh.iter().zip(&news) {
        e.line(format!("{s}[threadIdx.x] = {x};"));
    }
    e.line("__syncthreads();");
    e.close();
    let carry: Vec<String> = (0..m)
        .map(|c| {
            let t = e.temp("carry");
            let n = Emit::operand(e, neutral[c]);
            e.line(format!(
                "const {} {t} = threadIdx.x == 0 ? {n} : {}[threadIdx.x - 1];",
                ctype(types[c]),
                sh[c]
            ));
            t
        })
        .collect();
    Ok(carry)
}

/// The scan of the chunks' totals `totals` (of `types`, none a float: integer and boolean
/// operators are exact, and associative by the language's contract, so any grouping gives the
/// same values) by warp shuffles: an inclusive scan within each warp, the warps' totals in the
/// slots `sh` (slot `w`: warp `w`), then each thread's carry-in, returned: the totals of the
/// warps before its own, then those of the lanes before it, combined in order.
fn scan_totals_by_warps(
    e: &mut Emit,
    op: &Lambda,
    sh: &[String],
    totals: &[String],
    neutral: &[SubExp],
    types: &[PrimType],
) -> Res<Vec<String>> {
    let d = e.temp("d");
    e.open_loop(format!("for (unsigned {d} = 1; {d} < 32; {d} *= 2)"));
    let before = shuffles(e, "og_shfl_up", totals, types, &d);
    e.open(format!("if (threadIdx.x % 32 >= {d})"));
    e.lambdas += 1;
    let mut args = before;
    args.extend(totals.iter().cloned());
    // The results are fresh variables (`leave_lambda`), not the totals they replace.
    let r = lower::apply(e, op, &args)?;
    for (total, x) in totals.iter().zip(r) {
        e.line(format!("{total} = {x};"));
    }
    e.lambdas -= 1;
    e.close();
    e.close();
    // The lanes before this one, combined (this lane's inclusive total less its own chunk).
    let lanes = shuffles(e, "og_shfl_up", totals, types, "1");
    e.open("if (threadIdx.x % 32 == 31)");
    for (s, total) in sh.iter().zip(totals) {
        e.line(format!("{s}[threadIdx.x / 32] = {total};"));
    }
    e.close();
    e.line("__syncthreads();");
    let carry: Vec<String> = neutral
        .iter()
        .zip(types)
        .map(|(n, t)| {
            let c = e.temp("carry");
            let n = Emit::operand(e, *n);
            e.line(format!("{} {c} = {n};", ctype(*t)));
            c
        })
        .collect();
    let w = e.temp("w");
    e.open(format!(
        "for (unsigned {w} = 0; {w} < threadIdx.x / 32; {w}++)"
    ));
    e.lambdas += 1;
    let warp_totals: Vec<String> = sh.iter().map(|s| format!("{s}[{w}]")).collect();
    lower::accumulate(e, op, &carry, &warp_totals)?;
    e.lambdas -= 1;
    e.close();
    e.open("if (threadIdx.x % 32 != 0)");
    e.lambdas += 1;
    lower::accumulate(e, op, &carry, &lanes)?;
    e.lambdas -= 1;
    e.close();
    Ok(carry)
}

/// The order-preserving tree reduction of the chunks' totals `totals` (of `types`), the
/// result left in every thread's `totals`: at step `d` (1, 2, 4, ...) thread `t` takes thread
/// `t + d`'s value when `t` is a multiple of `2d` and `t + d` is in the block, the grouping the
/// shared-memory tree had before. The steps below 32 are warp shuffles; the warps' totals then
/// meet in the slots `sh` (slot `w`: warp `w`, which is thread `32w`'s value) and the first
/// warp's lanes continue the same tree over them by shuffles (lane `w` taking lane `w + d`).
fn reduce_totals(
    e: &mut Emit,
    op: &Lambda,
    sh: &[String],
    totals: &[String],
    types: &[PrimType],
) -> Res<()> {
    let d = e.temp("d");
    e.open_loop(format!("for (unsigned {d} = 1; {d} < 32; {d} *= 2)"));
    combine_down(e, op, totals, types, &d, None)?;
    e.close();
    e.open("if (threadIdx.x % 32 == 0)");
    for (s, total) in sh.iter().zip(totals) {
        e.line(format!("{s}[threadIdx.x / 32] = {total};"));
    }
    e.close();
    e.line("__syncthreads();");
    let warps = e.temp("warps");
    e.line(format!("const unsigned {warps} = (blockDim.x + 31) / 32;"));
    for (s, total) in sh.iter().zip(totals) {
        e.line(format!(
            "if (threadIdx.x < {warps}) {total} = {s}[threadIdx.x];"
        ));
    }
    let d = e.temp("d");
    e.open_loop(format!("for (unsigned {d} = 1; {d} < {warps}; {d} *= 2)"));
    combine_down(e, op, totals, types, &d, Some(&warps))?;
    e.close();
    // Thread 0 alone read slot 0: it may write it before the others have read theirs.
    e.open("if (threadIdx.x == 0)");
    for (s, total) in sh.iter().zip(totals) {
        e.line(format!("{s}[0] = {total};"));
    }
    e.close();
    e.line("__syncthreads();");
    for (s, total) in sh.iter().zip(totals) {
        e.line(format!("{total} = {s}[0];"));
    }
    Ok(())
}

/// One step of [`reduce_totals`]'s tree by shuffles: `totals` of thread `t` takes those of
/// thread `t + d` when `t` is a multiple of `2d` and `t + d < limit` (no limit: within a warp,
/// where `t + d` is in the same whole warp).
fn combine_down(
    e: &mut Emit,
    op: &Lambda,
    totals: &[String],
    types: &[PrimType],
    d: &str,
    limit: Option<&str>,
) -> Res<()> {
    let after = shuffles(e, "og_shfl_down", totals, types, d);
    e.open(match limit {
        Some(limit) => format!("if (threadIdx.x % (2 * {d}) == 0 && threadIdx.x + {d} < {limit})"),
        None => format!("if (threadIdx.x % (2 * {d}) == 0)"),
    });
    e.lambdas += 1;
    lower::accumulate(e, op, totals, &after)?;
    e.lambdas -= 1;
    e.close();
    Ok(())
}

/// The values `xs` (of `types`) of the lanes `d` away, by `shuffle` (`og_shfl_down` or
/// `og_shfl_up`), made by every thread of the block.
fn shuffles(
    e: &mut Emit,
    shuffle: &str,
    xs: &[String],
    types: &[PrimType],
    d: &str,
) -> Vec<String> {
    xs.iter()
        .zip(types)
        .map(|(x, t)| {
            let y = e.temp("y");
            e.line(format!("const {} {y} = {shuffle}({x}, {d});", ctype(*t)));
            y
        })
        .collect()
}

/// Binds the pattern of a Screma: scanned arrays, reduced values, mapped arrays.
fn bind(e: &mut Emit, pat: &[VarId], arrays: &[CView], reduced: Vec<String>, n_scan: usize) {
    let values = lower::screma_values(e, arrays, reduced, n_scan);
    for (v, x) in pat.iter().zip(values) {
        e.declare(*v, &x);
    }
}
