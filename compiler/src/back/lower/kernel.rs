//! The per-point part of a kernel that both backends share: a histogram kernel's destinations
//! as the views its points update ([`kernel_hist_dests`]), and what a point does with its body's
//! values by the kind of the kernel ([`point`]). The frame around it (argument slots, the
//! iteration space, accumulators' initial values, partial results) is each backend's, since
//! the runtime splits the space differently for each target (see `docs/compiler.md`, "Kernel
//! calling convention").

use super::soac::{accumulate, hist_updates};
use super::{Lower, Res};
use ogham_ir::kir::SegKind;

/// Writes output `j` of the current point: `write(l, j, value)`.
pub type WriteOutput<'w, L> = dyn FnMut(&mut L, usize, &<L as Lower>::Val) -> Res<()> + 'w;

/// The destinations of a kernel's histograms `hists` over a space of rank `rank`, for
/// [`hist_updates`]: each contiguous `[segments...][bins]row...` destination as a view of
/// `[segments × bins]` rows, indexed by `segment * bins + bin` (extents: the product of the
/// first `rank`, then the row's; strides: the bins', then the row's).
pub fn kernel_hist_dests<L: Lower>(
    l: &mut L,
    hists: &[ogham_ir::HistOp],
    rank: usize,
) -> Res<Vec<Vec<L::View>>> {
    let mut all = Vec::new();
    for (h, hist) in hists.iter().enumerate() {
        let mut views = Vec::new();
        for (k, d) in hist.dests.iter().enumerate() {
            let view = l.view(*d)?;
            let (dims, strides) = (l.dims(&view), l.strides(&view));
            let mut flat_dims = vec![l.product(&dims[..rank])];
            flat_dims.extend_from_slice(&dims[rank..]);
            let mut flat_strides = vec![strides[rank - 1].clone()];
            flat_strides.extend_from_slice(&strides[rank..]);
            views.push(l.view_of(&format!("h{h}_{k}"), &view, flat_dims, flat_strides));
        }
        all.push(views);
    }
    Ok(all)
}

/// One point of a kernel of kind `kind` with its body's values `vals`: a map writes them as
/// its outputs; a reduction or scan accumulates their operator components into `accs` (per
/// operator), then a scan writes its accumulators as its first outputs and both write the
/// remaining (mapped) values as the next ones, a scan's writes only where `scan_writes` holds
/// when given (the CUDA backend's first pass of a scan computes totals only); a histogram
/// updates its destinations `hist.0` ([`kernel_hist_dests`]) at row `segment * bins + bin`,
/// `segment` being `hist.1`. `write(l, j, value)` writes output `j` of the point.
pub fn point<L: Lower>(
    l: &mut L,
    kind: &SegKind,
    accs: &[Vec<L::Acc>],
    hist: (&[Vec<L::View>], &L::S),
    vals: &[L::Val],
    scan_writes: Option<L::S>,
    write: &mut WriteOutput<L>,
) -> Res<()> {
    match kind {
        SegKind::Map => {
            for (j, val) in vals.iter().enumerate() {
                write(l, j, val)?;
            }
        }
        SegKind::Red(_) | SegKind::Scan(_) => {
            let mut k = 0;
            for ((op, neutral), acc) in kind.operators().iter().zip(accs) {
                let m = neutral.len();
                accumulate(l, op, acc, &vals[k..k + m])?;
                k += m;
            }
            let scan = matches!(kind, SegKind::Scan(_));
            let mut results = |l: &mut L| {
                if scan {
                    for (c, acc) in accs.iter().flatten().enumerate() {
                        let v = L::val(l.acc_get(acc));
                        write(l, c, &v)?;
                    }
                }
                for (c, val) in vals[k..].iter().enumerate() {
                    write(l, k + c, val)?;
                }
                Ok(())
            };
            match scan_writes {
                Some(cond) if scan => l.when(cond, &mut results)?,
                _ => results(l)?,
            }
        }
        SegKind::Hist(hists) => hist_updates(l, hists, hist.0, vals, Some(hist.1))?,
    }
    Ok(())
}
