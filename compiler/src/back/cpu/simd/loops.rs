//! Loops of lane values: the point's `for` and `while` loops, and its in-point reductions
//! (`redomap`s) run as loops with one accumulator per lane, in the scalar code's order.

use super::lanes::Lanes;
use super::{Comp, Source};
use crate::back::cpu::codegen::{Gen, Res, clif_type};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{InstBuilder, Value};
use ogham_ir::{Body, Lambda, LoopForm, RedOp, SubExp, VarId};

/// How the iterations of a lane loop end.
enum Trips {
    /// `for j < bound`: a uniform bound (every lane iterates together, `j` a scalar) or a
    /// per-lane one (`j` a lane value; each lane stops at its own bound).
    For { bound: SubExp, per_lane: bool },
    /// While the parameter at this position is true, lane by lane.
    While(usize),
}

/// The body of a lane loop: emits one iteration for the counter and the parameters' current
/// values, returning their next values.
type Step<'s, 'p> = dyn FnMut(&mut Lanes<'p>, &mut Gen, Value, &[Value]) -> Res<Vec<Value>> + 's;

impl<'p> Lanes<'p> {
    /// A loop whose parameters are lane values: a `for` over a uniform range (all lanes
    /// iterate together), or a `for` with a per-lane bound or a `while`, which run until no
    /// lane of the execution mask goes on (finished lanes keep their parameters).
    pub(super) fn run_loop(
        &mut self,
        g: &mut Gen,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
        pat: &[VarId],
    ) -> Res<Vec<Value>> {
        // Array parameters are their initial arrays' memory, updated in place (the plan's
        // rule): only the scalar parameters are carried.
        let scalar: Vec<bool> = params.iter().map(|(p, _)| g.f.ty(*p).rank() == 0).collect();
        let mut inits = Vec::new();
        for ((p, init), s) in params.iter().zip(&scalar) {
            match init {
                SubExp::Var(a) if !s => {
                    let array = self
                        .array(*a)
                        .expect("plan: an array parameter is a per-point array");
                    self.arrays.insert(*p, array);
                }
                _ => inits.push(self.operand(g, *init)?),
            }
        }
        let scalar_params: Vec<VarId> = params
            .iter()
            .zip(&scalar)
            .filter_map(|((p, _), s)| s.then_some(*p))
            .collect();
        let (trips, index) = match form {
            LoopForm::For { index, bound } => {
                let per_lane = self.is_lane(*bound);
                let trips = Trips::For {
                    bound: *bound,
                    per_lane,
                };
                (trips, Some(*index))
            }
            LoopForm::While { cond } => {
                let at = scalar_params
                    .iter()
                    .position(|p| p == cond)
                    .expect("plan: a `while` tests one of its parameters");
                (Trips::While(at), None)
            }
        };
        let finals = self.lane_loop(
            g,
            &inits,
            trips,
            index.as_slice(),
            &mut |lanes, g, _, current| {
                for (p, x) in scalar_params.iter().zip(current) {
                    lanes.vals.insert(*p, *x);
                }
                let next = lanes.body(g, body)?;
                Ok(next
                    .into_iter()
                    .zip(&scalar)
                    .filter_map(|(x, s)| s.then_some(x))
                    .collect())
            },
        )?;
        let mut finals_at = finals.iter();
        for ((v, (p, _)), s) in pat.iter().zip(params).zip(&scalar) {
            if *s {
                let x = finals_at
                    .next()
                    .expect("a final value per scalar parameter");
                self.vals.insert(*v, *x);
            } else if let Some(array) = self.array(*p) {
                self.arrays.insert(*v, array);
            }
        }
        Ok(finals)
    }

    /// An in-point `redomap` (reductions only): a loop over its width carrying one accumulator
    /// per lane and reduction component, which applies the map lambda to the inputs' elements
    /// then each reduction's operator, in the scalar code's order. A per-lane width (its
    /// inputs are `iota`s of it) runs each lane to its own width. Inputs of another size than
    /// the width send the group to the scalar code, which reports the error.
    pub(super) fn reduction(
        &mut self,
        g: &mut Gen,
        width: SubExp,
        inputs: &[VarId],
        map: &Lambda,
        reds: &[RedOp],
    ) -> Res<Vec<Value>> {
        let per_lane = self.is_lane(width);
        let plan = self.plan;
        if !per_lane {
            let n = g.scalar(width)?;
            for p in &map.params {
                if let Some(Source::Element(base, comps)) = plan.sources.get(p) {
                    let view = g.view(*base)?;
                    let same = g.b.ins().icmp(IntCC::Equal, view.dims[comps.len()], n);
                    self.bail_unless(g, same);
                }
            }
        }
        debug_assert_eq!(inputs.len(), map.params.len());
        let inits = reds
            .iter()
            .flat_map(|r| &r.neutral)
            .map(|n| self.operand(g, *n))
            .collect::<Res<Vec<_>>>()?;
        let counters: Vec<VarId> = map
            .params
            .iter()
            .copied()
            .filter(|p| matches!(plan.sources.get(p), Some(Source::Counter)))
            .collect();
        let trips = Trips::For {
            bound: width,
            per_lane,
        };
        self.lane_loop(g, &inits, trips, &counters, &mut |lanes, g, j, accs| {
            for p in &map.params {
                if let Some(Source::Element(base, comps)) = plan.sources.get(p) {
                    let x = lanes.element(g, *base, comps, j)?;
                    if comps.contains(&Comp::Lane) {
                        lanes.vals.insert(*p, x);
                    } else {
                        g.bind(*p, &[x]);
                    }
                }
            }
            let mapped = lanes.body(g, &map.body)?;
            let mut next = Vec::new();
            let mut k = 0;
            for red in reds {
                let m = red.neutral.len();
                let args = accs[k..k + m].iter().chain(&mapped[k..k + m]);
                for (p, x) in red.lambda.params.iter().zip(args) {
                    lanes.vals.insert(*p, *x);
                }
                next.extend(lanes.body(g, &red.lambda.body)?);
                k += m;
            }
            Ok(next)
        })
    }

    /// A loop over lane values starting at `inits`: `counters` are bound to its counter (a
    /// scalar, or a lane value for a per-lane bound) before the bound is evaluated; `step`
    /// emits an iteration. Lanes that are done (per-lane bounds, `while`) keep their values.
    fn lane_loop(
        &mut self,
        g: &mut Gen,
        inits: &[Value],
        trips: Trips,
        counters: &[VarId],
        step: &mut Step<'_, 'p>,
    ) -> Res<Vec<Value>> {
        let mut vars = Vec::new();
        for x in inits {
            let ty = g.b.func.dfg.value_type(*x);
            let var = g.b.declare_var(ty);
            g.b.def_var(var, *x);
            vars.push(var);
        }
        // The counter of a `for`: a scalar for a uniform bound, a vector for a per-lane one.
        let per_lane = matches!(trips, Trips::For { per_lane: true, .. });
        let counter = if per_lane {
            let ty = self.width.mask();
            let var = g.b.declare_var(ty);
            let zeros = self.zeros(g, ty);
            g.b.def_var(var, zeros);
            var
        } else {
            let var = g.b.declare_var(I64);
            let zero = g.iconst(0);
            g.b.def_var(var, zero);
            var
        };
        let (header, inner, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        g.b.ins().jump(header, &[]);
        g.b.switch_to_block(header);
        let current: Vec<Value> = vars.iter().map(|v| g.b.use_var(*v)).collect();
        let outer = self.mask;
        let j = g.b.use_var(counter);
        let live = match trips {
            Trips::For { bound, per_lane } => {
                for c in counters {
                    if per_lane {
                        self.vals.insert(*c, j);
                    } else {
                        g.bind(*c, &[j]);
                    }
                }
                if per_lane {
                    let bound = self.operand(g, bound)?;
                    let go = g.b.ins().icmp(IntCC::SignedLessThan, j, bound);
                    Some(self.and_mask(g, go))
                } else {
                    let bound = g.scalar(bound)?;
                    let go = g.b.ins().icmp(IntCC::SignedLessThan, j, bound);
                    g.loop_branch(go, inner, exit);
                    None
                }
            }
            Trips::While(at) => Some(self.and_mask(g, current[at])),
        };
        if let Some(live) = live {
            let any = g.b.ins().vany_true(live);
            g.loop_branch(any, inner, exit);
            self.mask = Some(live);
        }
        g.b.switch_to_block(inner);
        g.b.seal_block(inner);
        let results = step(self, g, j, &current)?;
        for ((var, new), old) in vars.iter().zip(results).zip(&current) {
            let new = match live {
                Some(live) => Self::select(g, live, new, *old),
                None => new,
            };
            g.b.def_var(*var, new);
        }
        let next = if per_lane {
            let one = g.b.ins().iconst(clif_type(self.width.int()), 1);
            let ones = g.b.ins().splat(self.width.mask(), one);
            g.b.ins().iadd(j, ones)
        } else {
            g.b.ins().iadd_imm_s(j, 1)
        };
        g.b.def_var(counter, next);
        g.b.ins().jump(header, &[]);
        g.b.seal_block(header);
        g.b.switch_to_block(exit);
        g.b.seal_block(exit);
        self.mask = outer;
        Ok(vars.iter().map(|v| g.b.use_var(*v)).collect())
    }
}
