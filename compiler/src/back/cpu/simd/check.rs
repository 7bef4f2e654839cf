//! Which map kernels run in SIMD lanes: the check of a kernel's point code against the subset
//! of the module header, which also records what the code generator needs ([`Plan`]).

use super::{Comp, Plan, Source, Width};
use crate::back::steps;
use ogham_ir::kir::SegOp;
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
    width: Width,
}

impl<'a> Check<'a> {
    /// A check of kernel `seg`'s point code at `width` (`None` for a kernel without space).
    pub(super) fn new(f: &'a ir::kir::Function, seg: &SegOp, width: Width) -> Option<Check<'a>> {
        let mut check = Check::blank(f, Some(seg.space.last()?.0), width);
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
            width,
        }
    }

    /// The plan of the code checked so far, when `ok` (the check passed).
    pub(super) fn plan(self, ok: bool) -> Option<Plan> {
        ok.then(|| Plan {
            rows: self.rows,
            reads: self.reads,
            uniform: self.uniform,
            masked: self.masked,
            sources: self.sources,
            width: self.width,
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
                    && !self.iotas.contains_key(&arr);
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
        for stmt in &body.stmts {
            if let ([v], Exp::Iota(n)) = (&stmt.pat[..], &stmt.exp) {
                // Its size is checked where it is.
                self.checked += 1;
                if !self.size(*n) {
                    return false;
                }
                self.iotas.insert(*v, *n);
                continue;
            }
            if let ([row], Exp::Index(arr, idx)) = (&stmt.pat[..], &stmt.exp)
                && let Some((base, comps, rank)) = self.components(*arr, idx)
                && comps.len() < rank
            {
                if !self.lane_read(base, &comps) {
                    return false;
                }
                self.rows.insert(*row, (base, comps));
                continue;
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
                continue;
            }
            if !prims.iter().all(|p| self.laned(*p)) || !self.exp(&stmt.exp, &stmt.pat) {
                return false;
            }
            self.defined.extend(stmt.pat.iter().copied());
        }
        body.result.iter().all(|r| self.operand(*r))
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
                let fails = matches!(
                    op,
                    BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
                ) && !matches!(self.prim(*a), Some(PrimType::F32 | PrimType::F64));
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
                let ok = ret
                    .iter()
                    .all(|t| matches!(t, ir::Type::Prim(p) if self.laned(*p)))
                    && self.operand(*cond);
                let before = self.checked;
                let ok = ok && self.body(then_body) && self.body(else_body);
                if self.checked > before
                    && let Some(first) = pat.first()
                {
                    self.masked.insert(*first);
                }
                ok
            }
            Exp::Loop { params, form, body } => self.lane_loop(params, form, body),
            Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                scans,
                reds,
            }) => {
                self.checked += 1;
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

    /// A loop whose parameters are lane values, with a uniform or per-lane trip count (or a
    /// `while` on one of its parameters).
    fn lane_loop(&mut self, params: &[(VarId, SubExp)], form: &LoopForm, body: &Body) -> bool {
        let int = self.width.int();
        self.checked += 1;
        let lane_params = params.iter().all(|(p, init)| {
            matches!(self.f.ty(*p), ir::Type::Prim(t) if self.laned(*t)) && self.operand(*init)
        });
        if !lane_params {
            return false;
        }
        self.defined.extend(params.iter().map(|(p, _)| *p));
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
        form_ok && self.body(body)
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
