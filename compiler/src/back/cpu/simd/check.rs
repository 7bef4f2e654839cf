//! Which map kernels run in SIMD lanes: the check of a kernel's point code against the subset
//! of the module header, which also records what the code generator needs ([`Plan`]).

use super::{Comp, Plan, Source, Width};
use crate::back::steps;
use ogham_ir::kir::{PointLayout, SegOp};
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::types::PrimType;
use ogham_ir::{self as ir, Body, DimIndex, Exp, Lambda, LoopForm, RedOp, Soac, SubExp, VarId};
use std::collections::{HashMap, HashSet};

pub(super) struct Check<'a> {
    f: &'a ir::kir::Function,
    /// The innermost space variable (the lane index; `None` in an elementwise map, whose lanes
    /// are its parameters).
    inner: Option<VarId>,
    space: HashSet<VarId>,
    /// Variables defined by the point's code so far as lane values.
    defined: HashSet<VarId>,
    /// Uniform variables defined by the point's code (computed inside the vector loop).
    local: HashSet<VarId>,
    /// The point's `iota`s, by variable, with their sizes: never made, only the inputs of
    /// in-point reductions of that width.
    iotas: HashMap<VarId, SubExp>,
    pub(super) rows: HashMap<VarId, (VarId, Vec<Comp>)>,
    pub(super) reads: Vec<(VarId, Vec<Comp>)>,
    pub(super) uniform: HashSet<VarId>,
    pub(super) masked: HashSet<VarId>,
    pub(super) sources: HashMap<VarId, Source>,
    /// Loops and reads that check their indices seen so far (an `if` around one runs its
    /// branches under masks: they must not run for lanes that do not take the branch).
    checked: usize,
    /// Loops and in-point reductions seen (the work that lanes share: see [`Check::plan`]).
    loops: usize,
    width: Width,
    /// Whether the kernel's per-point arrays are interleaved by lane (the `layout` pass's
    /// decision): only then may its point code make arrays.
    interleaved: bool,
    /// The per-point arrays seen so far (one-dimensional, made by `replicate`, updated in
    /// place): by variable, the variable of the `replicate` whose memory it is.
    arrays: HashMap<VarId, VarId>,
    /// Why the check failed: the innermost statements outside the subset, printed (for
    /// `OGHAM_SIMD=why`, [`super::plan`]).
    whys: Vec<String>,
    /// Whether the check goes on after a statement outside the subset, taking its results as
    /// lane values (or per-point arrays), to list every such statement (a survey).
    pub(super) survey: bool,
}

impl<'a> Check<'a> {
    /// A check of kernel `seg`'s point code at `width` (`None` for a kernel without space).
    pub(super) fn new(f: &'a ir::kir::Function, seg: &SegOp, width: Width) -> Option<Check<'a>> {
        let mut check = Check::blank(f, Some(seg.space.last()?.0), width);
        check.interleaved = seg.layout == PointLayout::Interleaved;
        check.space = seg.space.iter().map(|(v, _)| *v).collect();
        Some(check)
    }

    /// A check of the lambda of a sequential elementwise map at `width`: its parameters are
    /// lane values, and nothing is indexed by the lane.
    pub(super) fn elementwise(f: &'a ir::kir::Function, map: &Lambda, width: Width) -> Check<'a> {
        let mut check = Check::blank(f, None, width);
        check.defined = map.params.iter().copied().collect();
        check
    }

    /// A check with nothing seen yet, whose lane index is `inner`.
    fn blank(f: &'a ir::kir::Function, inner: Option<VarId>, width: Width) -> Check<'a> {
        Check {
            f,
            inner,
            space: HashSet::new(),
            defined: HashSet::new(),
            local: HashSet::new(),
            iotas: HashMap::new(),
            rows: HashMap::new(),
            reads: Vec::new(),
            uniform: HashSet::new(),
            masked: HashSet::new(),
            sources: HashMap::new(),
            checked: 0,
            loops: 0,
            width,
            interleaved: false,
            arrays: HashMap::new(),
            whys: Vec::new(),
            survey: false,
        }
    }

    /// The plan of the code checked so far, when `ok` (the check passed) and it pays.
    ///
    /// The cost rule for per-point arrays: a kernel that makes them runs in lanes only when it
    /// has four lanes (`f32`/`i32`) and a loop or an in-point reduction. Without a loop, making
    /// its arrays is most of what it does (a fill such as `replicate n (-1)` returned as the
    /// kernel's result), which the scalar code does as contiguous vector fills of each point's
    /// row and lanes only as a fill of interleaved vectors and then a transposition into the
    /// rows. In two lanes (`f64`/`i64`), the same loops took as many instructions as the scalar
    /// code (`benches/micro/arrays.og`: sums and maxima by phase, −38 % and −37 % in four `f32`
    /// lanes, −1 % and +1 % in two `f64` lanes; `BENCHMARKS.md`, branch `lanes`). Otherwise,
    /// why not.
    pub(super) fn plan(self, ok: bool) -> Result<Plan, String> {
        if !ok {
            return Err(self.whys.join("\n    "));
        }
        if !self.arrays.is_empty() && self.loops == 0 {
            return Err("per-point arrays without a loop (the cost rule)".into());
        }
        if !self.arrays.is_empty() && self.width != Width::Four {
            return Err("per-point arrays in two lanes (the cost rule)".into());
        }
        Ok(Plan {
            rows: self.rows,
            reads: self.reads,
            uniform: self.uniform,
            masked: self.masked,
            sources: self.sources,
            width: self.width,
            arrays: !self.arrays.is_empty(),
        })
    }

    fn laned(&self, t: PrimType) -> bool {
        self.width.laned(t)
    }

    fn prim(&self, se: SubExp) -> Option<PrimType> {
        match self.f.subexp_type(se) {
            ir::Type::Prim(p) => Some(p),
            ir::Type::Array { .. } => None,
        }
    }

    /// An operand of a lane operation: a lane value or a uniform scalar (splatted).
    fn operand(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => self.prim(se).is_some_and(|t| self.laned(t)),
            SubExp::Var(v) => {
                Some(v) != self.inner
                    && (self.defined.contains(&v) || self.prim(se).is_some_and(|t| self.laned(t)))
            }
        }
    }

    /// A uniform scalar: the same for the four lanes.
    fn uniform(&self, se: SubExp) -> bool {
        match se {
            SubExp::Const(_) => true,
            SubExp::Var(v) => {
                Some(v) != self.inner && !self.defined.contains(&v) && self.prim(se).is_some()
            }
        }
    }

    /// A uniform scalar bound before the point's code runs.
    fn kernel_uniform(&self, se: SubExp) -> bool {
        self.uniform(se) && !matches!(se, SubExp::Var(v) if self.local.contains(&v))
    }

    /// `arr[idx]` as components of an input: the input, its components (at most one the lane
    /// index) and the input's rank.
    fn components(&self, arr: VarId, idx: &[DimIndex]) -> Option<(VarId, Vec<Comp>, usize)> {
        let (base, mut comps) = match self.rows.get(&arr) {
            Some(row) => row.clone(),
            None => {
                let free = !self.defined.contains(&arr)
                    && !self.space.contains(&arr)
                    && !self.local.contains(&arr)
                    && !self.iotas.contains_key(&arr)
                    && !self.arrays.contains_key(&arr);
                free.then(|| (arr, Vec::new()))?
            }
        };
        for d in idx {
            match d {
                DimIndex::Fix(SubExp::Var(v)) if Some(*v) == self.inner => comps.push(Comp::Lane),
                DimIndex::Fix(se) if self.uniform(*se) => comps.push(Comp::Uniform(*se)),
                _ => return None,
            }
        }
        let lanes = comps.iter().filter(|c| **c == Comp::Lane).count();
        let rank = self.f.ty(base).rank();
        (lanes <= 1 && comps.len() <= rank).then_some((base, comps, rank))
    }

    /// Records the lane component of a read (or row) for the check before a segment runs; the
    /// uniform components before it must be the kernel's.
    fn lane_read(&mut self, base: VarId, comps: &[Comp]) -> bool {
        let Some(at) = comps.iter().position(|c| *c == Comp::Lane) else {
            return true;
        };
        let prefix = comps[..=at].to_vec();
        let ok = prefix.iter().all(|c| {
            matches!(c, Comp::Lane) || matches!(c, Comp::Uniform(se) if self.kernel_uniform(*se))
        });
        if ok {
            self.reads.push((base, prefix));
        }
        ok
    }

    pub(super) fn body(&mut self, body: &Body) -> bool {
        let mut ok = true;
        for stmt in &body.stmts {
            let before = self.whys.len();
            if self.stmt(stmt) {
                continue;
            }
            ok = false;
            if self.whys.len() == before {
                // The innermost statement outside the subset says why.
                let text = ir::print::print_stmt(self.f, stmt, 0);
                let line = text.lines().next().unwrap_or_default();
                self.whys.push(line.chars().take(120).collect());
            }
            if !self.survey {
                return false;
            }
            for v in &stmt.pat {
                if self.f.ty(*v).rank() > 0 {
                    self.arrays.insert(*v, *v);
                } else {
                    self.defined.insert(*v);
                }
            }
        }
        let results = body.result.iter().all(|r| {
            self.operand(*r) || matches!(r, SubExp::Var(v) if self.arrays.contains_key(v))
        });
        if ok && !results {
            self.whys.push("a result that is not a lane value".into());
        }
        ok && results
    }

    /// Whether a statement is in the subset (recording what the plan needs of it).
    fn stmt(&mut self, stmt: &ir::Stmt) -> bool {
        if let ([v], Exp::Iota(n)) = (&stmt.pat[..], &stmt.exp) {
            // Its size is checked where it is.
            self.checked += 1;
            self.iotas.insert(*v, *n);
            return self.size(*n);
        }
        if let ([row], Exp::Index(arr, idx)) = (&stmt.pat[..], &stmt.exp)
            && let Some((base, comps, rank)) = self.components(*arr, idx)
            && comps.len() < rank
        {
            self.rows.insert(*row, (base, comps.clone()));
            return self.lane_read(base, &comps);
        }
        if let Some(ok) = self.array_stmt(&stmt.exp, &stmt.pat) {
            return ok;
        }
        let prims: Option<Vec<PrimType>> = stmt
            .pat
            .iter()
            .map(|v| match self.f.ty(*v) {
                ir::Type::Prim(p) => Some(*p),
                ir::Type::Array { .. } => None,
            })
            .collect();
        let Some(prims) = prims else {
            return false;
        };
        let read = self.uniform_read(&stmt.exp);
        if !stmt.pat.is_empty() && (self.uniform_exp(&stmt.exp) || read) {
            self.checked += read as usize;
            self.uniform.insert(stmt.pat[0]);
            self.local.extend(stmt.pat.iter().copied());
            return true;
        }
        let ok = prims.iter().all(|p| self.laned(*p)) && self.exp(&stmt.exp, &stmt.pat);
        if ok {
            self.defined.extend(stmt.pat.iter().copied());
        }
        ok
    }

    /// Whether a statement on per-point arrays is in the subset (`None`: it is not one): a
    /// `replicate` of a lane value or uniform scalar to a uniform length (only in a kernel whose
    /// arrays are interleaved), a copy of such an array's name, an element of one or an
    /// in-place update of one at a uniform index, and `if`s and loops whose
    /// array results are such arrays (see [`Check::if_arrays`], [`Check::lane_loop`]).
    fn array_stmt(&mut self, exp: &Exp, pat: &[VarId]) -> Option<bool> {
        let is_array = |v: &VarId| self.f.ty(*v).rank() > 0;
        match (pat, exp) {
            ([a], Exp::Replicate(n, x)) if self.interleaved && self.f.ty(*a).rank() == 1 => {
                let elem = self.f.ty(*a).elem();
                self.checked += 1;
                let ok = self.laned_elem(elem)
                    && self.uniform(*n)
                    && self.prim(*x) == Some(elem)
                    && self.operand(*x);
                self.arrays.insert(*a, *a);
                Some(ok)
            }
            ([b], Exp::SubExp(SubExp::Var(a))) if self.arrays.contains_key(a) => {
                self.arrays.insert(*b, self.arrays[a]);
                Some(true)
            }
            ([b], Exp::Update(a, idx, v)) if self.arrays.contains_key(a) => {
                self.checked += 1;
                let elem = self.f.ty(*a).elem();
                let ok = matches!(&idx[..], [DimIndex::Fix(i)] if self.uniform(*i))
                    && self.prim(*v) == Some(elem)
                    && self.operand(*v);
                self.arrays.insert(*b, self.arrays[a]);
                Some(ok)
            }
            ([x], Exp::Index(a, idx)) if self.arrays.contains_key(a) => {
                self.checked += 1;
                let ok = matches!(&idx[..], [DimIndex::Fix(i)] if self.uniform(*i)) && !is_array(x);
                self.defined.insert(*x);
                Some(ok)
            }
            (_, Exp::If { .. } | Exp::Loop { .. }) if pat.iter().any(is_array) => {
                let ok = self.exp(exp, pat);
                let scalars: Vec<VarId> = pat.iter().copied().filter(|v| !is_array(v)).collect();
                self.defined.extend(scalars);
                Some(ok)
            }
            _ => None,
        }
    }

    /// An element type of a per-point array: the width's float or integer type.
    fn laned_elem(&self, t: PrimType) -> bool {
        t == self.width.float() || t == self.width.int()
    }

    /// Registers the array results `pat` of an `if` (result types `ret`) whose branches return
    /// `then_res` and `else_res`: each must be the same per-point array in both branches, made
    /// before the `if` (one of `before`), so that a branch run under a mask updates only its
    /// lanes of it and no lane needs the other branch's memory.
    fn if_arrays(
        &mut self,
        pat: &[VarId],
        ret: &[ir::Type],
        (then_res, else_res): (&[SubExp], &[SubExp]),
        before: &HashSet<VarId>,
    ) -> bool {
        for (((v, t), a), b) in pat.iter().zip(ret).zip(then_res).zip(else_res) {
            if t.rank() == 0 {
                continue;
            }
            let (SubExp::Var(a), SubExp::Var(b)) = (a, b) else {
                return false;
            };
            match (self.arrays.get(a), self.arrays.get(b)) {
                (Some(x), Some(y)) if x == y && before.contains(x) => {
                    self.arrays.insert(*v, *x);
                }
                _ => return false,
            }
        }
        true
    }

    /// Whether `exp` reads an element of an input (or of a row of one) at uniform indices.
    fn uniform_read(&self, exp: &Exp) -> bool {
        let Exp::Index(arr, idx) = exp else {
            return false;
        };
        self.components(*arr, idx)
            .is_some_and(|(_, comps, rank)| comps.len() == rank && !comps.contains(&Comp::Lane))
    }

    /// Whether `exp` is scalar code on uniform operands that cannot fail.
    fn uniform_exp(&self, exp: &Exp) -> bool {
        match exp {
            Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Convert(_, a) => self.uniform(*a),
            Exp::BinOp(op, a, b) => {
                // Integer division by a constant other than 0 and -1 cannot fail.
                let fails = matches!(
                    op,
                    BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
                ) && !matches!(self.prim(*a), Some(PrimType::F32 | PrimType::F64))
                    && (*op == BinOp::Pow || b.int_value().is_none_or(|n| n == 0 || n == -1));
                !fails && self.uniform(*a) && self.uniform(*b)
            }
            Exp::Math(_, _, args) => args.iter().all(|a| self.uniform(*a)),
            _ => false,
        }
    }

    fn exp(&mut self, exp: &Exp, pat: &[VarId]) -> bool {
        let (float, int) = (self.width.float(), self.width.int());
        match exp {
            Exp::SubExp(se) => self.operand(*se),
            Exp::BinOp(op, a, b) => self.lane_binop(*op, *a, *b),
            Exp::UnOp(op, a) => {
                let t = self.prim(*a);
                let ok = match op {
                    UnOp::Neg => t == Some(float) || t == Some(int),
                    UnOp::Not => t == Some(int) || t == Some(PrimType::Bool),
                };
                ok && self.operand(*a)
            }
            Exp::Math(f, t, args) => {
                // Float functions without an instruction call the scalar code's helper per lane.
                let ok = if *t == float {
                    true
                } else {
                    *t == int && matches!(f, MathFn::Min | MathFn::Max | MathFn::Abs)
                };
                ok && args.iter().all(|a| self.operand(*a))
            }
            Exp::Convert(to, a) => {
                let from = self.prim(*a);
                (from == Some(float) || from == Some(int))
                    && (*to == float || *to == int)
                    && self.operand(*a)
            }
            Exp::Index(arr, idx) => {
                let Some((base, comps, rank)) = self.components(*arr, idx) else {
                    return false;
                };
                let elem = self.f.ty(base).elem();
                let Some(lane) = comps.iter().position(|c| *c == Comp::Lane) else {
                    return false;
                };
                // Components after the lane's are checked where the read is.
                if lane + 1 < comps.len() {
                    self.checked += 1;
                }
                (elem == float || elem == int)
                    && comps.len() == rank
                    && self.lane_read(base, &comps)
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                let ok = ret.iter().all(|t| match t {
                    ir::Type::Prim(p) => self.laned(*p),
                    ir::Type::Array { .. } => true,
                }) && self.operand(*cond);
                let before = self.checked;
                let roots: HashSet<VarId> = self.arrays.values().copied().collect();
                let ok = ok
                    && self.body(then_body)
                    && self.body(else_body)
                    && self.if_arrays(pat, ret, (&then_body.result, &else_body.result), &roots);
                if self.checked > before
                    && let Some(first) = pat.first()
                {
                    self.masked.insert(*first);
                }
                ok
            }
            Exp::Loop { params, form, body } => self.lane_loop(params, form, body, pat),
            Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                scans,
                reds,
            }) => {
                self.checked += 1;
                self.loops += 1;
                scans.is_empty() && self.reduction(*width, inputs, map, reds)
            }
            _ => false,
        }
    }

    /// A binary operator on lanes: the float and integer operations with an instruction
    /// (integer division only by a power of two), comparisons, and `bool` logic.
    fn lane_binop(&mut self, op: BinOp, a: SubExp, b: SubExp) -> bool {
        let (float, int) = (self.width.float(), self.width.int());
        use BinOp as B;
        let compare = matches!(op, B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge);
        let ok = match self.prim(a) {
            Some(t) if t == float => compare || matches!(op, B::Add | B::Sub | B::Mul | B::Div),
            Some(t) if t == int => {
                compare
                    || matches!(
                        op,
                        B::Add | B::Sub | B::Mul | B::BitAnd | B::BitOr | B::BitXor
                    )
                    || b.int_value()
                        .is_some_and(|n| steps::power_of_two(op, n).is_some())
            }
            Some(PrimType::Bool) => {
                matches!(op, B::BitAnd | B::BitOr | B::BitXor | B::Eq | B::Ne)
            }
            _ => false,
        };
        ok && self.operand(a) && self.operand(b)
    }

    /// A loop whose parameters are lane values or per-point arrays (updated in place: the
    /// body's result is the parameter's memory), with a uniform or per-lane trip count (or a
    /// `while` on one of its parameters); its results are bound to `pat`.
    fn lane_loop(
        &mut self,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
        pat: &[VarId],
    ) -> bool {
        let int = self.width.int();
        self.checked += 1;
        self.loops += 1;
        let mut lane_params = true;
        for (p, init) in params {
            match (self.f.ty(*p), init) {
                (ir::Type::Prim(t), _) => {
                    lane_params &= self.laned(*t) && self.operand(*init);
                    self.defined.insert(*p);
                }
                (ir::Type::Array { .. }, SubExp::Var(a)) if self.arrays.contains_key(a) => {
                    self.arrays.insert(*p, self.arrays[a]);
                }
                _ => lane_params = false,
            }
        }
        if !lane_params {
            return false;
        }
        let form_ok = match form {
            LoopForm::For { index, bound } if self.uniform(*bound) => {
                self.local.insert(*index);
                true
            }
            // A per-lane trip count: the counter is a lane value.
            LoopForm::For { index, bound } => {
                self.defined.insert(*index);
                self.prim(*bound) == Some(int) && self.operand(*bound)
            }
            LoopForm::While { cond } => params.iter().any(|(p, _)| p == cond),
        };
        if !form_ok || !self.body(body) {
            return false;
        }
        for (((p, _), r), v) in params.iter().zip(&body.result).zip(pat) {
            let Some(memory) = self.arrays.get(p).copied() else {
                continue;
            };
            let same = matches!(r, SubExp::Var(r) if self.arrays.get(r) == Some(&memory));
            if !same {
                return false;
            }
            self.arrays.insert(*v, memory);
        }
        true
    }

    /// A size of a reduction or an `iota`: uniform, or a lane value of the width's integer type.
    fn size(&self, n: SubExp) -> bool {
        self.uniform(n) || (self.prim(n) == Some(self.width.int()) && self.operand(n))
    }

    /// An in-point `redomap` with reductions only: over a uniform width, its inputs `iota`s of
    /// the width or inputs (or rows of them) with a scalar element per iteration; over a
    /// per-lane width, `iota`s of it only. The lambdas are lane code.
    fn reduction(&mut self, width: SubExp, inputs: &[VarId], map: &Lambda, reds: &[RedOp]) -> bool {
        let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
        if !self.size(width) || map.ret.len() != n_red || map.params.len() != inputs.len() {
            return false;
        }
        let per_lane = !self.uniform(width);
        for (p, input) in map.params.iter().zip(inputs) {
            let lane = match self.iotas.get(input) {
                Some(n) if *n == width => {
                    self.sources.insert(*p, Source::Counter);
                    per_lane
                }
                Some(_) => return false,
                None if per_lane => return false,
                None => {
                    let Some((base, comps, rank)) = self.components(*input, &[]) else {
                        return false;
                    };
                    let elem = self.f.ty(base).elem();
                    let lane = comps.contains(&Comp::Lane);
                    if comps.len() + 1 != rank
                        || (lane && elem != self.width.float() && elem != self.width.int())
                    {
                        return false;
                    }
                    self.sources.insert(*p, Source::Element(base, comps));
                    lane
                }
            };
            if lane {
                self.defined.insert(*p);
            } else {
                self.local.insert(*p);
            }
        }
        if !self.body(&map.body) {
            return false;
        }
        reds.iter().all(|red| {
            let params_ok = red
                .lambda
                .params
                .iter()
                .all(|p| matches!(self.f.ty(*p), ir::Type::Prim(t) if self.laned(*t)));
            let ok = params_ok && red.neutral.iter().all(|n| self.operand(*n));
            self.defined.extend(red.lambda.params.iter().copied());
            ok && self.body(&red.lambda.body)
        })
    }
}
