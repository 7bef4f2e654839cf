//! Simplification of core and kernel IR: constant folding, algebraic identities, copy
//! propagation, common-subexpression elimination, dead-code elimination, hoisting of
//! loop-invariant code, and simplification of `iota`/`replicate`/index/shape patterns, iterated
//! to a fixed point.
//!
//! # Algorithm
//!
//! Each round walks every function forwards once, then removes dead code backwards:
//!
//! 1. **Rewrite walk** (`Simplifier`). A substitution (variable -> operand) is applied to
//!    each statement's operands as it is reached; then its nested bodies are simplified (the
//!    same walk, recursively), then the local rules of `rules` fire (folding, identities,
//!    `if` on a constant, loops that run zero times or once, identity maps, index of
//!    `iota`/`replicate`, whole-dimension slices, identity reshapes and rearranges, composed
//!    rearranges). A
//!    statement that reduces to operands (`let x = y`, a folded constant) disappears and its
//!    variables join the substitution: this is copy and constant propagation. Remaining pure
//!    statements are looked up in a scoped table of available expressions (CSE): a repeat
//!    becomes a substitution by the earlier result. Loop parameters that the body returns
//!    unchanged become their initial values, and those needed neither after the loop nor for
//!    the needed ones disappear; unused results of `if`s, unused mapped results of
//!    `Screma`s and kernels, and SOAC inputs that the lambda ignores are dropped. Statements of a loop body (or a lambda or kernel
//!    body) that depend on nothing bound inside it are hoisted in front of it.
//! 2. The dimensions of every type in the arena are substituted the same way.
//! 3. **Dead-code elimination** ([`dce`]).
//!
//! Rounds repeat until a round changes nothing (at most [`MAX_ROUNDS`]).
//!
//! # Invariants and safety
//!
//! - Every variable is bound once, so a substitution and the known definitions can be global to
//!   the function; the CSE table is scoped (an expression from inside a branch or a lambda is
//!   not available after it).
//! - Results are those of the evaluator, run-time errors included, with two documented
//!   exceptions: dead code is removed even if it would have failed (an out-of-bounds index or
//!   a division by zero whose result is unused), as Futhark does — but never a size check
//!   (`dce::checks_size`: a dead `iota`/`replicate` of an unchecked size stays, since its type
//!   may pass the size on); and `x * 1.0`, `x / 1.0` keep a signalling NaN's payload (see
//!   `rules`).
//! - Only statements that cannot fail are hoisted (never an index, an integer division by a
//!   variable, an assertion, a reshape), so hoisting out of a loop that runs zero times
//!   reports no new error. Arrays are hoisted only out of loops, only when built from constant
//!   sizes, and never when consumed; lambdas and kernels only lose scalar code.
//! - Neither CSE nor hoisting touches an array that is consumed anywhere in the function, or
//!   that aliases one (see [`consumed_arrays`]), so in-place updates stay valid.
//! - Kernel IR stays kernel IR: SOACs and kernels are never hoisted or merged. The walk is
//!   generic over the IR's form (`kir-simplify` runs it on kernel IR): what it knows of host
//!   code (definitions, bounds, available expressions, kept in the host form) holds in the
//!   kernels' core code, and what it hoists out of a kernel is flat, so it is host code as is.

pub mod dce;
mod rules;

use ogham_ir::kir::{HostExp, HostOp, SegKind};
use ogham_ir::traverse::{
    NestedMut, Subst, consumed_arrays, for_each_operand, free_vars_stmt, map_operands,
    nested_bodies_mut, nested_scopes, substitute_arena_types, substitute_subexp, use_counts,
};
use ogham_ir::{
    Body, Const, Exp, Form, Function, LoopForm, Program, Soac, Stmt, SubExp, Type, VarId,
};
use rules::{Facts, Rewrite};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// An upper bound on simplification rounds per function (each round strictly shrinks or
/// simplifies the program, so this is only a guard).
pub const MAX_ROUNDS: usize = 32;

/// Simplifies every function of the program (core or kernel IR).
pub fn simplify<F: Form>(program: &mut Program<F>) {
    for function in &mut program.functions {
        simplify_function(function);
    }
}

fn simplify_function<F: Form>(function: &mut Function<F>) {
    for _ in 0..MAX_ROUNDS {
        let before = function.body.clone();
        let mut simplifier = Simplifier::new(function);
        let body = simplifier.body(before.clone());
        let subst = simplifier.subst;
        function.body = body;
        substitute_arena_types(function, &subst);
        dce::eliminate_dead_code(function);
        if function.body == before {
            break;
        }
    }
}

/// The forward rewrite walk of one round over one function.
struct Simplifier<'a, F: Form> {
    function: &'a Function<F>,
    subst: Subst,
    /// Use counts at the start of the round (for dead results and unused loop parameters).
    counts: Vec<u32>,
    consumed: HashSet<VarId>,
    /// The definitions of `iota`s, `replicate`s and `rearrange`s (see [`rules::Facts`]).
    defs: HashMap<VarId, Exp>,
    bounds: HashMap<VarId, SubExp>,
    /// Available expressions, bucketed by a hash of their shape and operands (in the widest
    /// form: those of host code are available in its kernels).
    available: HashMap<u64, Vec<(HostExp, Vec<VarId>)>>,
    /// The buckets entries were added to, innermost last, for leaving scopes.
    available_log: Vec<u64>,
}

impl<'a, F: Form> Simplifier<'a, F> {
    fn new(function: &'a Function<F>) -> Self {
        Simplifier {
            function,
            subst: Subst::new(),
            counts: use_counts(function, &function.body),
            consumed: consumed_arrays(function),
            defs: HashMap::new(),
            bounds: HashMap::new(),
            available: HashMap::new(),
            available_log: Vec::new(),
        }
    }

    fn body<G: Form>(&mut self, body: Body<G>) -> Body<G> {
        let mark = self.available_log.len();
        let mut stmts = Vec::with_capacity(body.stmts.len());
        for stmt in body.stmts {
            self.stmt(stmt, &mut stmts);
        }
        for key in self.available_log.drain(mark..) {
            if let Some(bucket) = self.available.get_mut(&key) {
                bucket.pop();
            }
        }
        let result = body
            .result
            .iter()
            .map(|&r| substitute_subexp(r, &self.subst))
            .collect();
        Body { stmts, result }
    }

    /// Simplifies `stmt`, appending what replaces it (and anything hoisted out of it) to `out`.
    fn stmt<G: Form>(&mut self, mut stmt: Stmt<G>, out: &mut Vec<Stmt<G>>) {
        let subst = &self.subst;
        map_operands(&mut stmt.exp, &mut |se| substitute_subexp(se, subst));
        if let Exp::Loop { .. } = stmt.exp {
            self.loop_params(&mut stmt);
        }
        self.nested(&mut stmt.exp, out);
        let facts = Facts {
            function: self.function,
            defs: &self.defs,
            bounds: &self.bounds,
            consumed: &self.consumed,
        };
        match rules::rewrite(&facts, &stmt) {
            Rewrite::Replace(values) => {
                self.bind_all(&stmt.pat, &values);
                return;
            }
            Rewrite::Inline { body, renamed } => {
                out.extend(body.stmts);
                self.subst.extend(renamed);
                let values: Vec<SubExp> = body
                    .result
                    .iter()
                    .map(|&v| substitute_subexp(v, &self.subst))
                    .collect();
                self.bind_all(&stmt.pat, &values);
                return;
            }
            Rewrite::Exp(exp) => stmt.exp = exp,
            Rewrite::Keep => {}
        }
        self.drop_dead_results(&mut stmt);
        self.drop_unused_inputs(&mut stmt.exp);
        if let Some(earlier) = self.available_as(&stmt) {
            self.bind_all(&stmt.pat, &earlier);
            return;
        }
        if let ([v], Exp::Iota(_) | Exp::Replicate(..) | Exp::Rearrange(..)) =
            (&stmt.pat[..], &stmt.exp)
            && let Ok(def) = stmt.exp.clone().flat()
        {
            self.defs.insert(*v, def);
        }
        out.push(stmt);
    }

    fn bind_all(&mut self, pat: &[VarId], values: &[SubExp]) {
        for (&p, &v) in pat.iter().zip(values) {
            self.subst.insert(p, v);
        }
    }

    /// Simplifies the bodies nested in `exp`, hoisting invariant statements to `out`.
    fn nested<G: Form>(&mut self, exp: &mut Exp<G>, out: &mut Vec<Stmt<G>>) {
        match exp {
            Exp::Loop {
                form: LoopForm::For { index, bound },
                ..
            } => {
                self.bounds.insert(*index, *bound);
            }
            Exp::Host(host) => {
                if let HostOp::Seg(seg) = host.host() {
                    for &(index, extent) in &seg.space {
                        self.bounds.insert(index, extent);
                    }
                }
            }
            _ => {}
        }
        if let Exp::Soac(soac) = exp {
            // The rows of `iota n` are in `[0, n)`.
            for (&param, input) in soac.map_lambda().params.iter().zip(soac.inputs()) {
                if let Some(Exp::Iota(n)) = self.defs.get(input) {
                    self.bounds.insert(param, *n);
                }
            }
        }
        let hoisting = match exp {
            Exp::Loop { .. } => Some(true),
            Exp::Soac(_) | Exp::Host(_) => Some(false),
            _ => None,
        };
        let binders: Vec<Vec<VarId>> = nested_scopes(exp).into_iter().map(|(b, _)| b).collect();
        for (body, bound) in nested_bodies_mut(exp).into_iter().zip(binders) {
            match body {
                NestedMut::Host(body) => {
                    *body = self.body(std::mem::take(body));
                    if let Some(arrays) = hoisting {
                        self.hoist(body, bound, arrays, out);
                    }
                }
                NestedMut::Core(body) => {
                    *body = self.body(std::mem::take(body));
                    if let Some(arrays) = hoisting {
                        self.hoist(body, bound, arrays, out);
                    }
                }
            }
        }
    }

    /// Moves the statements of `body` that use nothing bound inside it (`bound` are its
    /// parameters) to `out`, keeping their order.
    /// Hoisted statements are flat, so they move from a kernel's body to host code as they are.
    fn hoist<B: Form, G: Form>(
        &self,
        body: &mut Body<B>,
        bound: Vec<VarId>,
        arrays: bool,
        out: &mut Vec<Stmt<G>>,
    ) {
        let mut inside: HashSet<VarId> = bound.into_iter().collect();
        let mut kept = Vec::with_capacity(body.stmts.len());
        for stmt in std::mem::take(&mut body.stmts) {
            let invariant = self.hoistable(&stmt, arrays)
                && free_vars_stmt(self.function, &stmt).iter().all(|&v| {
                    // Sizes in the arena's types are substituted only at the end of the round.
                    match substitute_subexp(SubExp::Var(v), &self.subst) {
                        SubExp::Var(v) => !inside.contains(&v),
                        SubExp::Const(_) => true,
                    }
                });
            let stmt = if invariant {
                let Stmt { pat, exp, loc } = stmt;
                match exp.flat() {
                    Ok(exp) => {
                        out.push(Stmt { pat, exp, loc });
                        continue;
                    }
                    Err(exp) => Stmt { pat, exp, loc },
                }
            } else {
                stmt
            };
            inside.extend(stmt.pat.iter().copied());
            kept.push(stmt);
        }
        body.stmts = kept;
    }

    /// Whether `stmt` may move out of a body that may run zero or many times: it cannot fail,
    /// has no effect, and (if `arrays`) builds an array of constant size that nothing consumes.
    fn hoistable<G: Form>(&self, stmt: &Stmt<G>, arrays: bool) -> bool {
        if stmt.pat.is_empty() || stmt.pat.iter().any(|v| self.consumed.contains(v)) {
            return false;
        }
        let constant_size = |n: &SubExp| matches!(n, SubExp::Const(Const::I64(k)) if *k >= 0);
        match &stmt.exp {
            Exp::SubExp(_) | Exp::UnOp(..) | Exp::Math(..) | Exp::Convert(..) => true,
            Exp::BinOp(op, _, divisor) => {
                let divides = op.is_division();
                let ty = self.function.subexp_type(*divisor).elem();
                let nonzero = matches!(divisor, SubExp::Const(c) if c.bits() != 0);
                !divides || ty.is_float() || nonzero
            }
            Exp::Iota(n) | Exp::Replicate(n, _) => arrays && constant_size(n),
            Exp::Rearrange(..) => arrays,
            _ => false,
        }
    }

    /// Loop parameters the body returns unchanged become their initial values; parameters
    /// needed neither after the loop nor to compute the parameters that are disappear.
    fn loop_params<G: Form>(&mut self, stmt: &mut Stmt<G>) {
        let Exp::Loop { params, form, body } = &mut stmt.exp else {
            return;
        };
        if body.result.len() != params.len() || stmt.pat.len() != params.len() {
            return;
        }
        let cond = match form {
            LoopForm::While { cond } => Some(*cond),
            LoopForm::For { .. } => None,
        };
        let needed = self.needed_loop_params(params, body, &stmt.pat, cond);
        for k in (0..params.len()).rev() {
            let (p, init) = params[k];
            let invariant = body.result[k] == SubExp::Var(p) && Some(p) != cond;
            if invariant {
                self.subst.insert(p, init);
                self.subst.insert(stmt.pat[k], init);
            }
            if invariant || !needed[k] {
                params.remove(k);
                body.result.remove(k);
                stmt.pat.remove(k);
            }
        }
    }

    /// Which loop parameters are needed: those used after the loop or as its condition, and,
    /// iterating to a fixed point, those the body needs to compute the needed ones (or their
    /// sizes, or an effect: an assertion or a trace, or a size check that dead-code elimination
    /// keeps).
    fn needed_loop_params<G: Form>(
        &self,
        params: &[(VarId, SubExp)],
        body: &Body<G>,
        pat: &[VarId],
        cond: Option<VarId>,
    ) -> Vec<bool> {
        let mut needed: Vec<bool> = params
            .iter()
            .zip(pat)
            .map(|(&(p, _), &out)| Some(p) == cond || self.counts[out.index()] > 0)
            .collect();
        loop {
            let mut live: HashSet<VarId> = HashSet::new();
            for (k, &(p, _)) in params.iter().enumerate() {
                if needed[k] {
                    live.extend(body.result[k].as_var());
                    live.extend(
                        self.function
                            .ty(p)
                            .shape()
                            .iter()
                            .filter_map(|d| d.as_var()),
                    );
                }
            }
            for stmt in body.stmts.iter().rev() {
                let live_stmt = stmt.exp.is_effect()
                    || dce::may_check_size(&stmt.exp)
                    || stmt.pat.iter().any(|v| live.contains(v));
                if live_stmt {
                    live.extend(free_vars_stmt(self.function, stmt));
                }
            }
            let mut changed = false;
            for (k, &(p, _)) in params.iter().enumerate() {
                if !needed[k] && live.contains(&p) {
                    needed[k] = true;
                    changed = true;
                }
            }
            if !changed {
                return needed;
            }
        }
    }

    /// Drops the unused results of an `if`, and the unused mapped results of a `Screma` or a
    /// kernel (its results after those fed to scans, reductions or histograms; at least one
    /// stays).
    fn drop_dead_results<G: Form>(&self, stmt: &mut Stmt<G>) {
        if let Exp::If {
            then_body,
            else_body,
            ret,
            ..
        } = &mut stmt.exp
        {
            let n = stmt.pat.len();
            if ret.len() != n || then_body.result.len() != n || else_body.result.len() != n {
                return;
            }
            for k in (0..stmt.pat.len()).rev() {
                if self.counts[stmt.pat[k].index()] == 0 {
                    stmt.pat.remove(k);
                    ret.remove(k);
                    then_body.result.remove(k);
                    else_body.result.remove(k);
                }
            }
            return;
        }
        let (fed, ret, result) = match &mut stmt.exp {
            Exp::Soac(Soac::Screma {
                map, scans, reds, ..
            }) => {
                let fed = scans.iter().map(|s| s.neutral.len()).sum::<usize>()
                    + reds.iter().map(|r| r.neutral.len()).sum::<usize>();
                (fed, &mut map.ret, &mut map.body.result)
            }
            Exp::Host(host) => {
                let HostOp::Seg(seg) = host.host_mut() else {
                    return;
                };
                let fed = match &seg.kind {
                    SegKind::Map => 0,
                    SegKind::Red(reds) => reds.iter().map(|r| r.neutral.len()).sum(),
                    SegKind::Scan(scans) => scans.iter().map(|s| s.neutral.len()).sum(),
                    SegKind::Hist(_) => return,
                };
                (fed, &mut seg.ret, &mut seg.body.result)
            }
            _ => return,
        };
        if ret.len() != stmt.pat.len() || result.len() != ret.len() {
            return;
        }
        for k in (fed..stmt.pat.len()).rev() {
            if stmt.pat.len() > 1 && self.counts[stmt.pat[k].index()] == 0 {
                stmt.pat.remove(k);
                ret.remove(k);
                result.remove(k);
            }
        }
    }

    /// Drops the inputs of a SOAC whose map lambda ignores them (at least one input stays),
    /// if they have the SOAC's width (otherwise the evaluator's length check must stay).
    fn drop_unused_inputs<G: Form>(&self, exp: &mut Exp<G>) {
        let (width, inputs, map) = match exp {
            Exp::Soac(
                Soac::Screma {
                    width, inputs, map, ..
                }
                | Soac::Scatter {
                    width, inputs, map, ..
                }
                | Soac::Hist {
                    width, inputs, map, ..
                },
            ) => (*width, inputs, map),
            _ => return,
        };
        if inputs.len() != map.params.len() {
            return;
        }
        for k in (0..inputs.len()).rev() {
            let has_width = self.function.ty(inputs[k]).shape().first() == Some(&width);
            if inputs.len() > 1 && has_width && self.counts[map.params[k].index()] == 0 {
                inputs.remove(k);
                map.params.remove(k);
            }
        }
    }

    /// The results of an earlier, identical pure statement, if there is one; otherwise makes
    /// this one available.
    fn available_as<G: Form>(&mut self, stmt: &Stmt<G>) -> Option<Vec<SubExp>> {
        if !self.pure(stmt) {
            return None;
        }
        let exp: HostExp = match stmt.exp.clone().flat() {
            Ok(exp) => exp,
            Err(Exp::Host(host)) => Exp::Host(host.host().clone()),
            Err(_) => return None,
        };
        let key = shape_hash(&exp);
        let bucket = self.available.entry(key).or_default();
        if let Some((_, earlier)) = bucket.iter().rev().find(|(e, _)| *e == exp) {
            return Some(earlier.iter().map(|&v| SubExp::Var(v)).collect());
        }
        bucket.push((exp, stmt.pat.clone()));
        self.available_log.push(key);
        None
    }

    /// Whether `stmt` may be merged with an identical one: it computes a value from its
    /// operands alone, and its result is not consumed.
    fn pure<G: Form>(&self, stmt: &Stmt<G>) -> bool {
        let threshold = |host: &G| matches!(host.host(), HostOp::Threshold { .. });
        let candidate = matches!(
            &stmt.exp,
            Exp::BinOp(..)
                | Exp::UnOp(..)
                | Exp::Math(..)
                | Exp::Convert(..)
                | Exp::Index(..)
                | Exp::Iota(_)
                | Exp::Replicate(..)
                | Exp::ArrayLit(..)
                | Exp::Rearrange(..)
                | Exp::Reshape(..)
        ) || matches!(&stmt.exp, Exp::Host(host) if threshold(host));
        candidate
            && !stmt.pat.is_empty()
            && stmt.pat.iter().all(|v| {
                !self.consumed.contains(v) || matches!(self.function.ty(*v), Type::Prim(_))
            })
    }
}

/// A hash of an expression's variant and operands (equal expressions hash equally).
fn shape_hash(exp: &HostExp) -> u64 {
    let mut hasher = DefaultHasher::new();
    std::mem::discriminant(exp).hash(&mut hasher);
    for_each_operand(exp, &mut |se| se.hash(&mut hasher));
    hasher.finish()
}
