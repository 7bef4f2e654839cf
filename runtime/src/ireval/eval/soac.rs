//! Execution of SOACs and kernels: `Screma` (maps, scans, reductions), `Scatter` and `Hist`
//! row by row, and segmented kernels point by point over their space, sequentially.
//!
//! Invariants: results are checked against the memory limit before they are built
//! (`reserve_rows`, `reserve_results`, `reserve_points`); histogram and scatter destinations
//! are consumed, so they are updated in place; a compiled executor that cannot allocate a
//! kernel's results asks `first_point_error` first, to report what the interpreter would.
use super::{Array, Evaluator, Store, Val, kernel_points, shape_text};
use crate::error::{R_SIZE, Res, error};
use crate::index::{self, IdxArg};
use crate::memory;
use crate::value::{ArrayData, Scalar};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::{SegKind, SegOp};
use ogham_ir::sizes;
use ogham_ir::{HistOp, Lambda, RedOp, ScanOp, Soac, Type, VarId};

impl<'f> Evaluator<'f> {
    fn apply(&mut self, lambda: &Lambda, args: Vec<Val>) -> Res<Vec<Val>> {
        for (p, a) in lambda.params.iter().zip(args) {
            self.bind(*p, a);
        }
        self.body(&lambda.body)
    }

    /// Combines `acc` with `vals` by `op`.
    fn combine(&mut self, op: &Lambda, acc: Vec<Val>, vals: &[Val]) -> Res<Vec<Val>> {
        let mut args = acc;
        args.extend_from_slice(vals);
        self.apply(op, args)
    }

    fn rows_of(&self, inputs: &[VarId]) -> Res<Vec<Array>> {
        inputs.iter().map(|v| self.array(*v)).collect()
    }

    pub(super) fn soac(&mut self, soac: &Soac, pat: &[VarId]) -> Res<Vec<Val>> {
        let width = self.size(soac.width(), "SOAC width")?;
        let inputs = self.rows_of(soac.inputs())?;
        for a in &inputs {
            if a.len() != width {
                return Err(error(
                    R_SIZE,
                    self.loc,
                    format!(
                        "array of shape {} has not {width} rows",
                        shape_text(a.shape())
                    ),
                ));
            }
        }
        match soac {
            Soac::Screma {
                map, scans, reds, ..
            } => {
                self.reserve_rows(pat)?;
                let points = (0..width).map(|i| inputs.iter().map(|a| a.row(i)).collect());
                let per_point = self.map_points(map, points, width)?;
                self.reserve_results(pat)?;
                self.combine_points(per_point, scans, reds, &[width], pat)
            }
            Soac::Scatter { map, dests, .. } => {
                let mut dests: Vec<Array> =
                    dests.iter().map(|d| self.consume(*d)).collect::<Res<_>>()?;
                for i in 0..width {
                    let vals = self.apply(map, inputs.iter().map(|a| a.row(i)).collect())?;
                    for (d, pair) in dests.iter_mut().zip(vals.chunks(2)) {
                        let at = match pair[0] {
                            Val::Prim(Scalar::I64(at)) => at,
                            _ => return Err(self.internal("scatter index is not an i64")),
                        };
                        if at >= 0 && (at as usize) < d.len() {
                            self.write_row(d, at as usize, pair[1].clone())?;
                        }
                    }
                }
                Ok(dests.into_iter().map(Val::Array).collect())
            }
            Soac::Hist { map, hists, .. } => {
                let mut dests = self.consume_hists(hists)?;
                for i in 0..width {
                    let vals = self.apply(map, inputs.iter().map(|a| a.row(i)).collect())?;
                    self.add_to_hists(hists, &mut dests, &vals, 0)?;
                }
                Ok(dests.into_iter().flatten().map(Val::Array).collect())
            }
        }
    }

    fn consume_hists(&mut self, hists: &[HistOp]) -> Res<Vec<Vec<Array>>> {
        hists
            .iter()
            .map(|h| h.dests.iter().map(|d| self.consume(*d)).collect())
            .collect()
    }

    /// Adds one point's `(bin, values...)` per histogram into `dests`, in segment `segment`
    /// (rows `segment * bins ..` of destinations flattened over their segments).
    fn add_to_hists(
        &mut self,
        hists: &[HistOp],
        dests: &mut [Vec<Array>],
        vals: &[Val],
        segment: usize,
    ) -> Res<()> {
        let mut k = 0;
        for (h, dest) in hists.iter().zip(dests.iter_mut()) {
            let m = h.dests.len();
            let bin = match vals[k] {
                Val::Prim(Scalar::I64(b)) => b,
                _ => return Err(self.internal("histogram bin is not an i64")),
            };
            let bins = self.size(h.num_bins, "histogram")?;
            if bin >= 0 && (bin as usize) < bins {
                let row = segment * bins + bin as usize;
                let old: Vec<Val> = dest.iter().map(|d| d.row(row)).collect();
                let new = self.combine(&h.op, old, &vals[k + 1..k + 1 + m])?;
                for (d, v) in dest.iter_mut().zip(new) {
                    self.write_row(d, row, v)?;
                }
            }
            k += 1 + m;
        }
        Ok(())
    }

    fn write_row(&self, dest: &mut Array, row: usize, value: Val) -> Res<()> {
        let owned = std::mem::replace(
            dest,
            Array::new(
                vec![0],
                Store::Prim(ArrayData::with_capacity(ogham_ir::types::PrimType::Bool, 0)),
            ),
        );
        let updated = index::update(owned, &[IdxArg::At(row as i64)], value)
            .map_err(|e| error(e.code, self.loc, e.message))?;
        *dest = updated;
        Ok(())
    }

    /// Applies `map` to every point's arguments (`width` of them), in order.
    fn map_points(
        &mut self,
        map: &Lambda,
        points: impl Iterator<Item = Vec<Val>>,
        width: usize,
    ) -> Res<Vec<Vec<Val>>> {
        let mut per_point = Vec::new();
        for args in points {
            self.reserve_points(per_point.len(), width, map.ret.len())?;
            per_point.push(self.apply(map, args)?);
        }
        Ok(per_point)
    }

    /// Checks, as the values of a parallel operation's points pile up (this evaluator keeps
    /// every point's values until it combines them: about a hundred bytes per point), that
    /// they stay within the memory limit: at `kept` points of `total`, each power of two from
    /// 2^16 on, for twice as many (at most `total`), each point counted at an eighth of what
    /// its values take here. A space the interpreter rejects (a fused `replicate` of 2^31
    /// elements) then fails as `R0709` before it takes the machine's memory, while one whose
    /// arrays the interpreter holds within the limit fits here unless they come within a factor
    /// of about two of it (a known difference; combining points as they come would remove it).
    /// Points that fail early still report their own error first.
    fn reserve_points(&self, kept: usize, total: usize, results: usize) -> Res<()> {
        if kept >= 1 << 16 && kept.is_power_of_two() {
            let points = total.min(2 * kept);
            let counted = (size_of::<Vec<Val>>() + results * size_of::<Val>()).div_ceil(8);
            memory::reserve(
                points,
                counted,
                "the points of a parallel operation",
                self.loc,
            )?;
        }
        Ok(())
    }

    /// The results of a map/scan/reduce over points laid out in `space` (row-major; scans and
    /// reductions run along the innermost dimension, per segment of the outer ones): scanned
    /// arrays, reduced values, mapped arrays — the order of `pat`'s types.
    fn combine_points(
        &mut self,
        per_point: Vec<Vec<Val>>,
        scans: &[ScanOp],
        reds: &[RedOp],
        space: &[usize],
        pat: &[VarId],
    ) -> Res<Vec<Val>> {
        let inner = *space.last().unwrap_or(&1);
        let segments: usize = space[..space.len().saturating_sub(1)].iter().product();
        let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
        let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
        let mut scanned: Vec<Vec<Val>> = vec![Vec::with_capacity(per_point.len()); n_scan];
        let mut reduced: Vec<Vec<Val>> = vec![Vec::with_capacity(segments); n_red];
        for s in 0..segments {
            let mut scan_accs: Vec<Vec<Val>> = scans
                .iter()
                .map(|op| op.neutral.iter().map(|n| self.operand(*n)).collect())
                .collect::<Res<_>>()?;
            let mut red_accs: Vec<Vec<Val>> = reds
                .iter()
                .map(|op| op.neutral.iter().map(|n| self.operand(*n)).collect())
                .collect::<Res<_>>()?;
            for i in 0..inner {
                let vals = &per_point[s * inner + i];
                let mut k = 0;
                for (op, acc) in scans.iter().zip(scan_accs.iter_mut()) {
                    let m = op.neutral.len();
                    *acc = self.combine(&op.lambda, std::mem::take(acc), &vals[k..k + m])?;
                    for (j, v) in acc.iter().enumerate() {
                        scanned[k + j].push(v.clone());
                    }
                    k += m;
                }
                for (op, acc) in reds.iter().zip(red_accs.iter_mut()) {
                    let m = op.neutral.len();
                    *acc = self.combine(&op.lambda, std::mem::take(acc), &vals[k..k + m])?;
                    k += m;
                }
            }
            for (j, v) in red_accs.into_iter().flatten().enumerate() {
                reduced[j].push(v);
            }
        }
        let types: Vec<&Type> = pat.iter().map(|v| self.ty(*v)).collect();
        let mut out = Vec::with_capacity(pat.len());
        for (j, column) in scanned.into_iter().enumerate() {
            out.push(Val::Array(self.collect(types[j], column)?));
        }
        let outer = &space[..space.len().saturating_sub(1)];
        for (j, column) in reduced.into_iter().enumerate() {
            out.push(if outer.is_empty() {
                column
                    .into_iter()
                    .next()
                    .ok_or_else(|| self.internal("no segment"))?
            } else {
                Val::Array(self.collect(types[n_scan + j], column)?)
            });
        }
        let n_map = pat.len() - n_scan - n_red;
        let mut mapped: Vec<Vec<Val>> = vec![Vec::with_capacity(per_point.len()); n_map];
        for vals in per_point {
            for (j, v) in vals.into_iter().skip(n_scan + n_red).enumerate() {
                mapped[j].push(v);
            }
        }
        for (j, column) in mapped.into_iter().enumerate() {
            out.push(Val::Array(self.collect(types[n_scan + n_red + j], column)?));
        }
        Ok(out)
    }

    /// An array of type `ty` from its elements or innermost rows, in row-major order.
    fn collect(&self, ty: &Type, items: Vec<Val>) -> Res<Array> {
        let shape = if items.is_empty() {
            // No element was computed, so no size inside the function was checked either (the
            // interpreter never calls it): sizes that would be invalid count as empty.
            ty.shape()
                .iter()
                .map(|d| Ok(usize::try_from(self.int(*d)?).unwrap_or(0)))
                .collect::<Res<Vec<usize>>>()?
        } else {
            self.shape(ty)?
        };
        let row_rank = match items.first() {
            Some(Val::Array(a)) => a.rank(),
            _ => 0,
        };
        let outer = shape.len() - row_rank.min(shape.len());
        let mut flat_shape = vec![items.len()];
        flat_shape.extend_from_slice(&shape[outer..]);
        let flat = self.build(flat_shape, ty.elem(), items)?;
        if flat.elem_count() != shape.iter().product::<usize>() {
            return Err(self.internal(format!(
                "{} elements for an array of shape {}",
                flat.elem_count(),
                shape_text(&shape)
            )));
        }
        Ok(flat.reshape(shape))
    }

    /// Checks, before any point runs, that the results bound to `pat` have room for a byte per
    /// row, as the interpreter checks a map's result before running it: a map over 10^18 rows
    /// fails at once instead of running them.
    pub(crate) fn reserve_rows(&self, pat: &[VarId]) -> Res<()> {
        for v in pat {
            if let Some(rows) = self.ty(*v).shape().first() {
                let rows = usize::try_from(self.int(*rows)?).unwrap_or(0);
                memory::reserve(rows, 1, "the result of a map", self.loc)?;
            }
        }
        Ok(())
    }

    /// Checks that the results bound to `pat` fit in memory before they are made from the
    /// points' values (their shapes are known from their types; a reduction over empty segments
    /// still has a value per segment).
    fn reserve_results(&self, pat: &[VarId]) -> Res<()> {
        for v in pat {
            let ty = self.ty(*v);
            if ty.rank() == 0 {
                continue;
            }
            // A size that would be invalid is checked where it is computed, if ever: here it
            // counts as empty, as in `collect`.
            let shape: Vec<usize> = ty
                .shape()
                .iter()
                .map(|d| Ok(usize::try_from(self.int(*d)?).unwrap_or(0)))
                .collect::<Res<_>>()?;
            let count = sizes::product(&shape).unwrap_or(usize::MAX);
            memory::reserve(count, ty.elem().byte_size(), "a result", self.loc)?;
        }
        Ok(())
    }

    pub(super) fn seg(&mut self, seg: &SegOp, pat: &[VarId]) -> Res<Vec<Val>> {
        let space: Vec<usize> = seg
            .space
            .iter()
            .map(|(_, d)| self.size(*d, "kernel space"))
            .collect::<Res<_>>()?;
        let total = kernel_points(&space, self.loc)?;
        if let SegKind::Hist(hists) = &seg.kind {
            // Destinations are `[segments...][bins]...`: index them as `[segments * bins]...`.
            let outer = space.len().saturating_sub(1);
            let mut dests = self.consume_hists(hists)?;
            let shapes: Vec<Vec<Vec<usize>>> = dests
                .iter()
                .map(|ds| ds.iter().map(|d| d.shape().to_vec()).collect())
                .collect();
            for d in dests.iter_mut().flatten() {
                let shape = d.shape();
                let mut flat = vec![shape[..=outer].iter().product()];
                flat.extend_from_slice(&shape[outer + 1..]);
                *d = d.reshape(flat);
            }
            let inner = *space.last().unwrap_or(&1);
            for p in 0..total {
                self.bind_point(seg, &space, p);
                let vals = self.body(&seg.body)?;
                self.add_to_hists(hists, &mut dests, &vals, p / inner.max(1))?;
            }
            return Ok(dests
                .into_iter()
                .flatten()
                .zip(shapes.into_iter().flatten())
                .map(|(d, shape)| Val::Array(d.reshape(shape)))
                .collect());
        }
        // Reserved up to a bound: a huge space whose points fail early must not abort on the
        // reservation (the points' values are checked as they pile up).
        self.reserve_rows(pat)?;
        let mut per_point = Vec::with_capacity(total.min(1 << 16));
        for p in 0..total {
            self.reserve_points(p, total, seg.body.result.len())?;
            self.bind_point(seg, &space, p);
            per_point.push(self.body(&seg.body)?);
        }
        // After the points, as the interpreter makes a map's result after running it: a point
        // that fails (an invalid size inside it) reports its error before the result's size.
        self.reserve_results(pat)?;
        match &seg.kind {
            SegKind::Map => self.combine_points(per_point, &[], &[], &space, pat),
            SegKind::Red(reds) => self.combine_points(per_point, &[], reds, &space, pat),
            SegKind::Scan(scans) => self.combine_points(per_point, scans, &[], &space, pat),
            SegKind::Hist(_) => unreachable!("handled above"),
        }
    }

    /// The error that the first point of `seg` (over `space`, not empty) raises, if any. A
    /// compiled executor asks before reporting that the results of `seg` cannot be allocated:
    /// the interpreter runs the points before it makes the result, so an invalid size made in
    /// every point (`replicate k x` with `k` beyond [`sizes::MAX_ELEMS`]) is its error.
    pub(crate) fn first_point_error(
        &mut self,
        seg: &SegOp,
        space: &[usize],
    ) -> Option<Box<Diagnostic>> {
        self.bind_point(seg, space, 0);
        self.body(&seg.body).err()
    }

    /// Binds the space's index variables to the coordinates of point `p` (row-major).
    fn bind_point(&mut self, seg: &SegOp, space: &[usize], mut p: usize) {
        for ((index, _), &extent) in seg.space.iter().zip(space).rev() {
            self.bind(*index, Val::Prim(Scalar::I64((p % extent.max(1)) as i64)));
            p /= extent.max(1);
        }
    }
}
