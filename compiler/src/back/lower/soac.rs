//! SOACs run sequentially in one thread, for any backend ([`Lower`]): a Screma's maps, scans
//! and reductions in one loop over its inputs' rows (scans and maps writing a row per
//! iteration, reductions into accumulators), a scatter's writes (out-of-bounds indices
//! skipped), a histogram's updates (out-of-range bins skipped), all in the interpreter's order.
//! Also the pieces kernels use around their bodies: accumulators and rows.

use super::stmt::{apply, check_same_shape, dims_of};
use super::{Lower, Res};
use crate::back::Unsupported;
use ogham_ir::{Lambda, Soac, SubExp, VarId};

/// The width of a SOAC and its inputs' views, each checked to have `width` rows.
pub fn soac_inputs<L: Lower>(l: &mut L, soac: &Soac) -> Res<(L::S, Vec<L::View>)> {
    let width = l.scalar(soac.width())?;
    let inputs: Vec<L::View> = soac
        .inputs()
        .iter()
        .map(|v| l.view(*v))
        .collect::<Res<_>>()?;
    for input in &inputs {
        let rows = l.dims(input);
        check_same_shape(l, &rows[..1], std::slice::from_ref(&width), "SOAC input")?;
    }
    Ok((width, inputs))
}

/// One accumulator per component of each operator's neutral element, holding it. Accumulators
/// of arrays are not supported.
pub fn accumulators<L: Lower>(l: &mut L, ops: &[(&Lambda, &[SubExp])]) -> Res<Vec<Vec<L::Acc>>> {
    let mut accs = Vec::new();
    for (_, neutral) in ops {
        let mut vars = Vec::new();
        for n in neutral.iter() {
            let ty = l.f().subexp_type(*n);
            if ty.rank() > 0 {
                return Err(Unsupported(
                    "a reduction or scan of arrays in a kernel".to_string(),
                ));
            }
            let init = l.scalar(*n)?;
            vars.push(l.new_acc(ty.elem(), init));
        }
        accs.push(vars);
    }
    Ok(accs)
}

/// `acc = op(acc, vals)`.
pub fn accumulate<L: Lower>(l: &mut L, op: &Lambda, acc: &[L::Acc], vals: &[L::Val]) -> Res<()> {
    let mut args: Vec<L::Val> = acc.iter().map(|a| L::val(l.acc_get(a))).collect();
    args.extend(vals.iter().cloned());
    let new = apply(l, op, &args)?;
    for (a, v) in acc.iter().zip(new) {
        let s = l.scalar_of(&v);
        l.acc_set(a, s);
    }
    Ok(())
}

/// Row `i` of `view` (unchecked): a scalar for rank 1, else a view.
pub fn read_row<L: Lower>(l: &mut L, view: &L::View, i: &L::S) -> L::Val {
    let place = l.row_place(view, i);
    if L::rank(view) == 1 {
        l.load(&place)
    } else {
        l.row_view(&place, view)
    }
}

/// Writes `val` (a scalar, or an array of the row's extents, checked) as row `i` of `dst`.
pub fn write_row<L: Lower>(l: &mut L, dst: &L::View, i: &L::S, val: &L::Val) -> Res<()> {
    let place = l.row_place(dst, i);
    let rank = L::rank(dst);
    if rank == 1 {
        l.store(&place, val);
        return Ok(());
    }
    let src = l.as_view(val, L::elem(dst), rank - 1);
    let (actual, expected) = (l.dims(&src), l.dims(dst));
    check_same_shape(l, &actual, &expected[1..], "row")?;
    l.copy_row(&src, dst, &place)
}

/// `dest[row] = op(dest[row], vals)` for every destination (rows are scalars or arrays).
pub fn combine_into<L: Lower>(
    l: &mut L,
    op: &Lambda,
    dests: &[L::View],
    row: &L::S,
    vals: &[L::Val],
) -> Res<()> {
    let mut args: Vec<L::Val> = dests.iter().map(|d| read_row(l, d, row)).collect();
    args.extend(vals.iter().cloned());
    let new = apply(l, op, &args)?;
    for (d, v) in dests.iter().zip(new) {
        write_row(l, d, row, &v)?;
    }
    Ok(())
}

/// A SOAC as a loop in the current thread; binds its pattern `pat`.
pub fn sequential<L: Lower>(l: &mut L, soac: &Soac, pat: &[VarId]) -> Res<()> {
    let (width, inputs) = soac_inputs(l, soac)?;
    let rows = l.rows(&inputs);
    let i = l.new_loop();
    let values: Vec<L::Val> = match soac {
        Soac::Screma {
            map, scans, reds, ..
        } => {
            let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
            let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
            let arrays = screma_arrays(l, pat, n_scan, n_red)?;
            let ops = ogham_ir::screma_operators(scans, reds);
            let accs = accumulators(l, &ops)?;
            l.unswitched(pat, map, &mut |l| {
                let stmt = (pat, soac);
                let start = l.screma_start(stmt, &width, &rows, &arrays, &accs)?;
                l.for_range(&i, start, width.clone(), &mut |l, i| {
                    let args = l.current_rows(&rows, &i);
                    let mapped = &map.body.result[n_scan + n_red..];
                    let placed = l.rows_in_place(map, mapped, &arrays[n_scan..], &i);
                    let vals = apply(l, map, &args)?;
                    l.rows_placed(placed);
                    let mut k = 0;
                    for (j, (op, neutral)) in ops.iter().enumerate() {
                        let m = neutral.len();
                        accumulate(l, op, &accs[j], &vals[k..k + m])?;
                        if k < n_scan {
                            for (c, acc) in accs[j].iter().enumerate() {
                                let v = L::val(l.acc_get(acc));
                                write_row(l, &arrays[k + c], &i, &v)?;
                            }
                        }
                        k += m;
                    }
                    for (c, val) in vals[k..].iter().enumerate() {
                        write_row(l, &arrays[n_scan + c], &i, val)?;
                    }
                    l.next_rows(&rows);
                    Ok(())
                })
            })?;
            let reduced: Vec<L::Val> = accs[scans.len()..]
                .iter()
                .flatten()
                .map(|a| L::val(l.acc_get(a)))
                .collect();
            screma_values(l, &arrays, reduced, n_scan)
        }
        Soac::Scatter { map, dests, .. } => {
            let dests: Vec<L::View> = dests.iter().map(|d| l.view(*d)).collect::<Res<_>>()?;
            let zero = l.int(0);
            l.for_range(&i, zero, width, &mut |l, i| {
                let args = l.current_rows(&rows, &i);
                let vals = apply(l, map, &args)?;
                for (dest, pair) in dests.iter().zip(vals.chunks(2)) {
                    let at = l.scalar_of(&pair[0]);
                    let n = l.dims(dest)[0].clone();
                    let inside = l.in_bounds(&at, &n);
                    l.when(inside, &mut |l| write_row(l, dest, &at, &pair[1]))?;
                }
                l.next_rows(&rows);
                Ok(())
            })?;
            dests.iter().map(|d| l.values(d)).collect()
        }
        Soac::Hist { map, hists, .. } => {
            let dests: Vec<Vec<L::View>> = hists
                .iter()
                .map(|h| h.dests.iter().map(|d| l.view(*d)).collect())
                .collect::<Res<_>>()?;
            let zero = l.int(0);
            l.for_range(&i, zero, width, &mut |l, i| {
                let args = l.current_rows(&rows, &i);
                let vals = apply(l, map, &args)?;
                hist_updates(l, hists, &dests, &vals, None)?;
                l.next_rows(&rows);
                Ok(())
            })?;
            dests.iter().flatten().map(|d| l.values(d)).collect()
        }
    };
    for (v, x) in pat.iter().zip(values) {
        l.bind(*v, x);
    }
    Ok(())
}

/// Applies one point of histograms `hists` to their destinations `dests`: `vals` holds per
/// histogram its bin then its values. A bin outside `0..bins` is skipped (as the interpreter
/// does); bin `b` updates row `b` of the destinations, or row `segment * bins + b` of a
/// segmented histogram's destinations, flattened to `[segments * bins]` rows.
pub fn hist_updates<L: Lower>(
    l: &mut L,
    hists: &[ogham_ir::HistOp],
    dests: &[Vec<L::View>],
    vals: &[L::Val],
    segment: Option<&L::S>,
) -> Res<()> {
    let mut k = 0;
    for (h, dest) in hists.iter().zip(dests) {
        let bins = l.scalar(h.num_bins)?;
        let bin = l.scalar_of(&vals[k]);
        let inside = l.in_bounds(&bin, &bins);
        let new = &vals[k + 1..k + 1 + dest.len()];
        l.when(inside, &mut |l| {
            let row = match segment {
                Some(s) => l.mul_add(s, &bins, &bin),
                None => bin.clone(),
            };
            combine_into(l, &h.op, dest, &row, new)
        })?;
        k += 1 + dest.len();
    }
    Ok(())
}

/// The arrays a Screma makes (its scans' then its maps' results; not its reductions') for
/// pattern `pat`.
pub fn screma_arrays<L: Lower>(
    l: &mut L,
    pat: &[VarId],
    n_scan: usize,
    n_red: usize,
) -> Res<Vec<L::View>> {
    let mut arrays = Vec::new();
    for (j, v) in pat.iter().enumerate() {
        if j >= n_scan && j < n_scan + n_red {
            continue;
        }
        let ty = l.f().ty(*v).clone();
        let dims = dims_of(l, &ty)?;
        arrays.push(l.result_array(*v, ty.elem(), dims)?);
    }
    Ok(arrays)
}

/// A Screma's results in pattern order: scanned arrays, reduced values, mapped arrays.
pub fn screma_values<L: Lower>(
    l: &L,
    arrays: &[L::View],
    reduced: Vec<L::Val>,
    n_scan: usize,
) -> Vec<L::Val> {
    let mut out: Vec<L::Val> = arrays[..n_scan].iter().map(|a| l.values(a)).collect();
    out.extend(reduced);
    out.extend(arrays[n_scan..].iter().map(|a| l.values(a)));
    out
}
