//! Row separability (kernel IR): whether an entry point can run on parts of its first array
//! input's rows, each part alone, so that the outputs of the parts, stacked, are exactly the
//! outputs of one whole run. An executor that knows this can run a large input in parts (to
//! bound device memory, and to overlap one part's copies with another's kernels).
//!
//! The entry point is *separable along `m`* ([`row_split`]), where `m` is the leading size of
//! its first array parameter, when:
//! - no other parameter's type mentions `m`, and `m` is nowhere an inner dimension;
//! - every value that depends on the rows is a *row array*: an array whose leading dimension is
//!   `m`, made by a kernel whose outermost space dimension is `m`, by `replicate m v` of a value
//!   that does not depend on the rows, by a copy or alias of a row array, or as the result of an
//!   `if` or a loop (whose conditions and bounds cannot depend on the rows: no scalar does);
//! - `m` itself is used only as such a leading dimension, a kernel's outermost space dimension,
//!   the count of such a `replicate`, or the size a threshold compares (those thresholds are
//!   [`RowSplit::thresholds`]: a part must take the whole run's decision, see below);
//! - a kernel over `m` reads a row array only at its own row (an index whose first component is
//!   the outermost space variable), uses that variable for nothing else, and does not mention
//!   `m` in its body; reductions, scans and histograms over `m` have at least one inner
//!   dimension (their segments are rows or parts of rows, never across rows);
//! - a kernel not over `m` touches no row array;
//! - every result of the entry point is a row array.
//!
//! Then each row's outputs are computed by the same statements from that row's inputs alone,
//! whichever other rows run with it, *provided* that the run takes the same versions and the
//! same reduction orders as the whole run: thresholds on `m` must be decided with the whole `m`
//! (the executor fixes them), and launch plans that depend on the number of segments (a
//! backend's chunking of segmented reductions) must be made with the whole run's segment count.
//!
//! Invariants relied on: kernel IR binds every variable once and passed the verifier; kernel
//! bodies hold no thresholds and no kernels (by their type).

use crate::kir::{Function, HostBody, HostOp, HostStmt, SegKind, SegLevel, SegOp, ThresholdId};
use crate::traverse::{for_each_operand, for_each_stmt, free_vars_body, nested_scopes, use_counts};
use crate::{DimIndex, Exp, Lambda, SubExp, Type, VarId};
use std::collections::HashSet;

/// How an entry point splits into parts of rows ([`row_split`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowSplit {
    /// The value parameter split (its index in [`Function::params`]).
    pub param: usize,
    /// Its leading size `m`, the number of rows.
    pub rows: VarId,
    /// The thresholds that compare `m`: a part must take the decision the whole `m` takes.
    pub thresholds: Vec<ThresholdId>,
}

impl RowSplit {
    /// The kernels that a run of `f` whose thresholds on the rows decide as `taken` says may
    /// launch and that run each row's sequential work on a thread of its own: thread-level
    /// kernels whose space is the rows alone and whose body nests loops or SOACs (BFAST's
    /// per-pixel kernel, STL's thread-per-series loess). Once the rows are fewer than a wave
    /// of the device's threads, such a kernel takes as long as one row's work, however few
    /// rows it has, so parts of rows under a wave each cost it as much as the whole run. A
    /// kernel that makes one pass over each row (STL's `seasonal_amplitude`, a reduction per
    /// series) does not count: its time is its rows' bytes, which parts divide. An `if` on
    /// anything but those thresholds may take either branch.
    pub fn threads_per_row<'f>(
        &self,
        f: &'f Function,
        taken: impl Fn(ThresholdId) -> bool,
    ) -> Vec<&'f SegOp> {
        let mut found = Vec::new();
        let mut decided = std::collections::HashMap::new();
        self.collect_threads_per_row(&f.body, &taken, &mut decided, &mut found);
        found
    }

    fn collect_threads_per_row<'f>(
        &self,
        body: &'f HostBody,
        taken: &impl Fn(ThresholdId) -> bool,
        decided: &mut std::collections::HashMap<VarId, bool>,
        found: &mut Vec<&'f SegOp>,
    ) {
        for stmt in &body.stmts {
            match &stmt.exp {
                Exp::Host(HostOp::Threshold { id, .. }) => {
                    if let (Some(&v), true) = (stmt.pat.first(), self.thresholds.contains(id)) {
                        decided.insert(v, taken(*id));
                    }
                }
                Exp::Host(HostOp::Seg(seg))
                    if seg.level == SegLevel::Thread
                        && matches!(seg.space[..], [(_, SubExp::Var(m))] if m == self.rows)
                        && nested_sequential_work(&seg.body, 0) =>
                {
                    found.push(seg);
                }
                Exp::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                } => match cond {
                    SubExp::Var(c) if decided.contains_key(c) => {
                        let branch = if decided[c] { then_body } else { else_body };
                        self.collect_threads_per_row(branch, taken, decided, found);
                    }
                    _ => {
                        self.collect_threads_per_row(then_body, taken, decided, found);
                        self.collect_threads_per_row(else_body, taken, decided, found);
                    }
                },
                Exp::Loop { body, .. } => self.collect_threads_per_row(body, taken, decided, found),
                _ => {}
            }
        }
    }
}

/// Whether `body`, inside `depth` loops or SOACs, holds a loop or SOAC inside another.
fn nested_sequential_work(body: &crate::Body, depth: usize) -> bool {
    body.stmts.iter().any(|stmt| {
        let sequential = matches!(stmt.exp, Exp::Loop { .. } | Exp::Soac(_));
        (sequential && depth >= 1)
            || nested_scopes(&stmt.exp)
                .into_iter()
                .any(|(_, n)| nested_sequential_work(n.body(), depth + usize::from(sequential)))
    })
}

/// Whether entry point `f` is separable along its first array parameter's rows (the module
/// header's rules); `Err` says why not, naming the first construct that is not.
pub fn row_split(f: &Function) -> Result<RowSplit, String> {
    let (param, rows) = f
        .params
        .iter()
        .enumerate()
        .find_map(|(k, p)| match f.vars[p.var.index()].ty.shape().first() {
            Some(&SubExp::Var(m)) => Some((k, m)),
            _ => None,
        })
        .ok_or("no array parameter has a size variable as its leading dimension")?;
    let mut check = Check {
        f,
        m: rows,
        rows: HashSet::from([f.params[param].var]),
        thresholds: Vec::new(),
    };
    for (k, p) in f.params.iter().enumerate() {
        if k != param && check.mentions_m(&f.vars[p.var.index()].ty) {
            return Err(format!(
                "parameter {} is sized by the rows too",
                f.vars[p.var.index()].name
            ));
        }
    }
    check.body(&f.body)?;
    for (k, r) in f.body.result.iter().enumerate() {
        if !matches!(r, SubExp::Var(v) if check.rows.contains(v)) {
            return Err(format!("result {k} is not an array of rows"));
        }
    }
    Ok(RowSplit {
        param,
        rows,
        thresholds: check.thresholds,
    })
}

struct Check<'f> {
    f: &'f Function,
    m: VarId,
    /// The row arrays found so far.
    rows: HashSet<VarId>,
    thresholds: Vec<ThresholdId>,
}

impl Check<'_> {
    fn ty(&self, v: VarId) -> &Type {
        &self.f.vars[v.index()].ty
    }

    fn name(&self, v: VarId) -> &str {
        &self.f.vars[v.index()].name
    }

    fn mentions_m(&self, ty: &Type) -> bool {
        ty.shape().contains(&SubExp::Var(self.m))
    }

    /// Whether `ty` has `m` as its leading dimension (and nowhere else: an error otherwise).
    fn leads_with_m(&self, v: VarId) -> Result<bool, String> {
        let shape = self.ty(v).shape();
        if shape.iter().skip(1).any(|&d| d == SubExp::Var(self.m)) {
            return Err(format!(
                "`{}` has the rows as an inner dimension",
                self.name(v)
            ));
        }
        Ok(shape.first() == Some(&SubExp::Var(self.m)))
    }

    fn depends(&self, se: SubExp) -> bool {
        matches!(se, SubExp::Var(v) if v == self.m || self.rows.contains(&v))
    }

    fn body(&mut self, body: &HostBody) -> Result<(), String> {
        body.stmts.iter().try_for_each(|stmt| self.stmt(stmt))
    }

    fn stmt(&mut self, stmt: &HostStmt) -> Result<(), String> {
        let first = stmt.pat.first().map_or("()", |&v| self.name(v)).to_string();
        let made_of_rows = match &stmt.exp {
            Exp::Host(HostOp::Seg(seg)) => self.kernel(seg, &first)?,
            Exp::Host(HostOp::Threshold { id, size }) => {
                if *size == SubExp::Var(self.m) {
                    self.thresholds.push(*id);
                }
                false
            }
            Exp::Replicate(SubExp::Var(n), value) if *n == self.m && !self.depends(*value) => true,
            Exp::SubExp(SubExp::Var(v)) | Exp::Copy(v) if self.rows.contains(v) => true,
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } if !self.depends(*cond) => {
                self.body(then_body)?;
                self.body(else_body)?;
                true
            }
            Exp::Loop { params, form, body } => {
                for (p, init) in params {
                    match self.leads_with_m(*p)? {
                        true if self.depends(*init) => {
                            self.rows.insert(*p);
                        }
                        false if !self.depends(*init) => {}
                        _ => return Err(format!("loop `{first}` carries a value of the rows")),
                    }
                }
                if let crate::LoopForm::For { bound, .. } = form
                    && self.depends(*bound)
                {
                    return Err(format!(
                        "loop `{first}` runs as many times as there are rows"
                    ));
                }
                self.body(body)?;
                true
            }
            exp => {
                let mut uses = false;
                for_each_operand(exp, &mut |se| uses |= self.depends(se));
                if uses {
                    return Err(format!("`{first}` computes with the rows or their number"));
                }
                false
            }
        };
        for &v in &stmt.pat {
            match (self.leads_with_m(v)?, made_of_rows) {
                (true, true) => {
                    self.rows.insert(v);
                }
                (true, false) => return Err(format!("`{first}` makes rows in another way")),
                (false, _) => {}
            }
        }
        Ok(())
    }

    /// Checks a kernel; whether it runs over the rows.
    fn kernel(&self, seg: &SegOp, first: &str) -> Result<bool, String> {
        let Some(&(row, outer)) = seg.space.first() else {
            return Err(format!("kernel `{first}` has no space"));
        };
        if seg.space[1..].iter().any(|&(_, d)| self.depends(d)) {
            return Err(format!(
                "kernel `{first}` has the rows as an inner dimension"
            ));
        }
        let counts = use_counts(self.f, &seg.body);
        let used = |v: VarId| counts.get(v.index()).copied().unwrap_or(0);
        // The operators' lambdas and neutral elements, and histograms' bin counts, are the
        // same for every row; histograms' destinations are rows, checked below.
        let mut lambdas: Vec<&Lambda> = Vec::new();
        let mut scalars: Vec<SubExp> = Vec::new();
        for (op, neutral) in seg.kind.operators() {
            lambdas.push(op);
            scalars.extend_from_slice(neutral);
        }
        if let SegKind::Hist(ops) = &seg.kind {
            for h in ops {
                lambdas.push(&h.op);
                scalars.extend(h.neutral.iter().copied().chain([h.num_bins]));
            }
        }
        if scalars.iter().any(|&se| self.depends(se))
            || lambdas.iter().any(|l| {
                free_vars_body(self.f, &l.body)
                    .iter()
                    .any(|&v| self.depends(SubExp::Var(v)))
            })
        {
            return Err(format!("kernel `{first}` combines with the rows"));
        }
        if outer != SubExp::Var(self.m) {
            let touches = self.rows.iter().chain([&self.m]).any(|&v| used(v) > 0);
            let updates = matches!(&seg.kind, SegKind::Hist(ops)
                if ops.iter().flat_map(|h| &h.dests).any(|d| self.rows.contains(d)));
            if touches || updates {
                return Err(format!(
                    "kernel `{first}` is not over the rows but reads them"
                ));
            }
            return Ok(false);
        }
        if !matches!(seg.kind, SegKind::Map) && seg.space.len() < 2 {
            return Err(format!("kernel `{first}` combines values across rows"));
        }
        if used(self.m) > 0 {
            return Err(format!("kernel `{first}` uses the number of rows"));
        }
        if let SegKind::Hist(ops) = &seg.kind
            && ops
                .iter()
                .flat_map(|h| &h.dests)
                .any(|d| !self.rows.contains(d))
        {
            return Err(format!(
                "kernel `{first}` updates an array that is not of rows"
            ));
        }
        // Every use of a row array, and of the row's index, is a read at the kernel's own row.
        let mut at_own_row: std::collections::HashMap<VarId, u32> = Default::default();
        let mut own_row_indices = 0;
        for_each_stmt(&seg.body, &mut |stmt| {
            if let Exp::Index(a, idx) = &stmt.exp
                && self.rows.contains(a)
                && matches!(idx.first(), Some(DimIndex::Fix(SubExp::Var(i))) if *i == row)
            {
                *at_own_row.entry(*a).or_default() += 1;
                own_row_indices += 1;
            }
        });
        for &r in &self.rows {
            if used(r) != at_own_row.get(&r).copied().unwrap_or(0) {
                return Err(format!(
                    "kernel `{first}` reads `{}` other than at its own row",
                    self.name(r)
                ));
            }
        }
        if used(row) != own_row_indices {
            return Err(format!("kernel `{first}` computes with its row's index"));
        }
        Ok(true)
    }
}
