//! Flattening: core IR -> kernel IR, by Futhark's *moderate flattening* (the BFAST paper,
//! seed 000 Section III-B: distribute the outer map around groups of inner-parallel operations
//! of the same size, one kernel per group).
//!
//! # Algorithm
//!
//! The host program keeps its scalar code, `if`s and sequential loops; every SOAC at host level
//! becomes kernels ([`ogham_ir::kir::SegOp`]):
//!
//! - a `map` whose body is sequential code is one `SegMap` (Thread level): one thread per
//!   element runs the body;
//! - a `Screma` with reductions is a `SegRed`, one with scans a `SegScan` (with both: a
//!   `SegScan` that also returns the values fed to the reductions, then a `SegRed` over them);
//! - a `hist` is a `SegHist`; a `scatter` is a `SegHist` whose operator keeps the new value
//!   (`\_ v -> v`) — a scatter is a histogram that overwrites;
//! - a `map` whose body holds inner parallelism is *distributed* ([`Flattener::distribute`]):
//!   its body is cut into groups — each parallel statement alone, the sequential statements
//!   between them together — and each group becomes kernels over the space of the enclosing
//!   maps (`[n]`, then `[n][m]` inside an inner map, ...). An inner `map` adds a level and is
//!   distributed in turn; an inner reduction, scan or histogram becomes a *segmented* `SegRed`,
//!   `SegScan` or `SegHist` over the extended space. A value one group computes and a later
//!   group uses is *expanded*: the first kernel returns it at every point (one more dimension
//!   per level) and the later kernel reads its element back ([`nest::Nest`]) — except a cheap
//!   scalar (arithmetic that cannot fail), which each kernel needing it computes again. Code
//!   that is the same at every point and cannot fail (sizes, `iota`, `replicate`, `transpose`
//!   of host arrays) is hoisted to the host before the kernels instead. An `iota` or
//!   `replicate` of an inner width cannot fail only when that width is a valid size, which the
//!   interpreter checks at the first point and never for an empty map: the distributed version
//!   that hoists one runs only when the map is not empty and the widths it relies on are valid
//!   sizes (otherwise the Block version runs, which checks them per point, in order).
//! - a `for` loop with inner parallelism inside a map is *interchanged* with the map: the loop
//!   runs on the host, its parameters expanded over the nest, and its body is distributed
//!   (`map (\x -> loop ...)` becomes `loop (map ...)`, as STL's iteration loops need).
//!
//! Code that cannot be distributed stays sequential in its thread: an `if`, a `while` loop, a
//! SOAC whose width differs between the points of the nest (an irregular size), and every SOAC
//! inside a kernel body (Thread-level kernels run them sequentially). When a distribution meets
//! an irregular size (a value to expand whose shape differs between points), it gives up: the
//! map keeps only its Thread-level and Block-level versions.
//!
//! At Block level, the SOACs of the body outside other SOACs (those in its loops included) are
//! the block-parallel ones.
//!
//! # Multi-versioning
//!
//! A host-level `map` with inner parallelism gets three versions (two when distributing it
//! fails), chosen at run time by thresholds (`Program::thresholds`, numbered in program order):
//!
//! ```text
//! if threshold(suff_outer_par_K, n) then  -- enough outer parallelism:
//!   SegMap Thread over [n]                --   the body sequential in each thread
//! else if threshold(suff_intra_par_K, m) then  -- too much inner parallelism for a block:
//!   the distributed kernels               --   one kernel per group of inner operations
//! else
//!   SegMap Block over [n]                 --   one block per element, inner SOACs in parallel
//! ```
//!
//! (the distributed kernels also need `n != 0 && 0 <= w <= MAX_ELEMS` for each inner width `w`
//! of which they hoist an `iota` or `replicate`).
//!
//! where `m` is the largest width of the inner SOACs (those directly in the body or in loops
//! interchanged out of it). Each version holds its own copy of the body, with fresh variables.
//!
//! # Invariants
//!
//! The input is core IR that passes `verify`: every variable is bound once, the lambda
//! parameters' types mention no variable bound inside the lambda. The output is kernel IR
//! ([`kir::Program`]; this pass is the only one that converts core IR to it) that passes
//! `verify`: no SOAC at host level, every variable still bound once (a per-point variable
//! needed by several kernels is bound afresh in all but the first). Kernel bodies are core IR
//! by their type, so no kernel is inside a kernel.

mod nest;
mod rename;

use nest::{Irregular, Nest};
use ogham_ir::kir::{
    self, HostBody, HostExp, HostOp, HostStmt, SegKind, SegLevel, SegOp, Threshold, ThresholdId,
    ThresholdKind,
};
use ogham_ir::math::MathFn;
use ogham_ir::op::BinOp;
use ogham_ir::source::Span;
use ogham_ir::traverse::{Subst, for_each_stmt, free_vars_body, free_vars_stmt, substitute_body};
use ogham_ir::types::PrimType;
use ogham_ir::{
    Body, Const, Exp, Form, Function, HistOp, Lambda, LoopForm, Program, RedOp, Soac, Stmt, SubExp,
    Type, VarId,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The default of `suff_outer_par_K`: the outer width from which one thread per outer point
/// fills the machine.
pub const DEFAULT_OUTER_PAR: i64 = 1 << 15;
/// The default of `suff_intra_par_K`: one more than the largest block (1024 threads), so that
/// inner work that fits one block runs as one block per outer point.
pub const DEFAULT_INTRA_PAR: i64 = 1025;

/// Turns every host-level SOAC of every function into kernels (see the module header).
pub fn flatten(program: Program) -> kir::Program {
    let unchecked = program.unchecked;
    let mut state = State {
        thresholds: program.thresholds,
        versioned: 0,
    };
    let functions = program
        .functions
        .into_iter()
        .map(|function| {
            let mut flattener = Flattener {
                f: function,
                state: &mut state,
                claimed: HashSet::new(),
                assumable: Vec::new(),
                assumed: Vec::new(),
            };
            let body = std::mem::take(&mut flattener.f.body);
            let body = flattener.host_body(body);
            flattener.f.with_body(body)
        })
        .collect();
    kir::Program {
        functions,
        thresholds: state.thresholds,
        unchecked,
    }
}

/// What flattening accumulates across functions.
struct State {
    thresholds: Vec<Threshold>,
    /// How many maps have been multi-versioned (numbers their thresholds).
    versioned: u32,
}

/// Flattens one function.
struct Flattener<'a> {
    f: Function,
    state: &'a mut State,
    /// The per-point variables some kernel already binds (see [`Nest::resolve`]).
    claimed: HashSet<VarId>,
    /// While distributing a multi-versioned map: its inner widths, which its distributed
    /// version may assume to be valid sizes (it runs only when they are, see
    /// [`Flattener::valid_sizes`]).
    assumable: Vec<SubExp>,
    /// Those of [`Flattener::assumable`] that hoisted code relies on.
    assumed: Vec<SubExp>,
}

/// The distributed version of a multi-versioned map.
struct Distributed {
    /// The arrays of the map's results.
    result: Vec<SubExp>,
    /// The widths of its inner parallelism.
    widths: Vec<SubExp>,
    /// Those of `widths` that hoisted code assumes to be valid sizes.
    assumed: Vec<SubExp>,
}

/// A run of statements of a distributed body that go into the same kernels.
enum Group<'b> {
    /// Sequential code: one `SegMap` over the nest.
    Sequential(Vec<&'b Stmt>),
    /// A SOAC or an interchangeable loop.
    Parallel(&'b Stmt),
}

fn stmt<H: Form>(pat: Vec<VarId>, exp: Exp<H>, loc: Span) -> Stmt<H> {
    Stmt { pat, exp, loc }
}

impl Flattener<'_> {
    fn host_body(&mut self, body: Body) -> HostBody {
        let mut out = Vec::new();
        for stmt in body.stmts {
            self.host_stmt(stmt, &mut out);
        }
        Body {
            stmts: out,
            result: body.result,
        }
    }

    fn host_stmt(&mut self, s: Stmt, out: &mut Vec<HostStmt>) {
        let Stmt { pat, exp, loc } = s;
        let exp = match exp {
            Exp::Soac(soac) => return self.host_soac(&stmt(pat, Exp::Soac(soac), loc), out),
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => Exp::If {
                cond,
                then_body: self.host_body(then_body),
                else_body: self.host_body(else_body),
                ret,
            },
            Exp::Loop { params, form, body } => Exp::Loop {
                params,
                form,
                body: self.host_body(body),
            },
            Exp::Host(core) => match core {},
            exp => exp
                .flat()
                .unwrap_or_else(|_| unreachable!("only If, Loop, Soac and Host hold bodies")),
        };
        out.push(stmt(pat, exp, loc));
    }

    /// Kernels for a host-level SOAC: multi-versioned when it is a map with inner parallelism.
    fn host_soac(&mut self, s: &Stmt, out: &mut Vec<HostStmt>) {
        let Exp::Soac(soac) = &s.exp else {
            unreachable!("host_soac on a non-SOAC")
        };
        let mut nest = self.host_nest(s);
        if let Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        } = soac
        {
            let inner = nest.with_level(*width, &map.params, inputs);
            if scans.is_empty() && reds.is_empty() && self.has_parallelism(&inner, &map.body) {
                return self.versioned_map(s, out);
            }
        }
        // At host level every size is the same for all points: distribution cannot fail.
        self.soac(&mut nest, &s.pat, soac, s.loc, out)
            .expect("a host-level SOAC has no irregular size");
    }

    /// The empty nest around a host-level statement.
    fn host_nest(&self, s: &Stmt) -> Nest {
        let pattern: HashSet<VarId> = s.pat.iter().copied().collect();
        Nest::new(
            rename::binders(std::slice::from_ref(s))
                .into_iter()
                .filter(|v| !pattern.contains(v)),
        )
    }

    /// `let pat = map f xs` with inner parallelism in `f`: the three versions of the module
    /// header behind thresholds.
    fn versioned_map(&mut self, s: &Stmt, out: &mut Vec<HostStmt>) {
        let k = self.state.versioned;
        self.state.versioned += 1;
        let Exp::Soac(Soac::Screma { width, .. }) = &s.exp else {
            unreachable!("versioned_map on a non-map")
        };
        let width = *width;
        let name = self.f.name.clone();
        let outer = self.threshold(
            ThresholdId {
                kind: ThresholdKind::SuffOuterPar,
                map: k,
            },
            DEFAULT_OUTER_PAR,
            format!(
                "{name}: map {k}: the outer width from which one thread per outer element runs \
                 the whole body sequentially"
            ),
            width,
            s.loc,
            out,
        );
        let ret: Vec<Type> = s.pat.iter().map(|&p| self.f.ty(p).clone()).collect();
        let thread = self.map_version(s.clone(), SegLevel::Thread);
        let copy = rename::freshen_stmt(&mut self.f, s);
        let block = self.map_version(copy, SegLevel::Block);

        let mut flat_stmts = Vec::new();
        let vars_before = self.f.vars.len();
        let flat = self.distributed_version(s, &mut flat_stmts);
        let otherwise = match flat {
            Ok(Distributed {
                result: flat_result,
                widths: inner_widths,
                assumed,
            }) => {
                let mut stmts = Vec::new();
                let inner_size = self.maximum(&inner_widths, s.loc, &mut stmts);
                let intra = self.threshold(
                    ThresholdId {
                        kind: ThresholdKind::SuffIntraPar,
                        map: k,
                    },
                    DEFAULT_INTRA_PAR,
                    format!(
                        "{name}: map {k}: the inner parallelism per outer element from which the \
                         distributed kernels run rather than one block per outer element"
                    ),
                    inner_size,
                    s.loc,
                    &mut stmts,
                );
                let intra = self.valid_sizes(intra, width, &assumed, s.loc, &mut stmts);
                stmts.push(stmt(
                    self.fresh_pattern(&s.pat),
                    Exp::If {
                        cond: intra,
                        then_body: Body {
                            stmts: flat_stmts,
                            result: flat_result,
                        },
                        else_body: block,
                        ret: ret.clone(),
                    },
                    s.loc,
                ));
                let result = stmts.last().map(|st| vars(&st.pat)).unwrap_or_default();
                Body { stmts, result }
            }
            Err(Irregular) => {
                self.forget_vars_from(vars_before);
                block
            }
        };
        out.push(stmt(
            s.pat.clone(),
            Exp::If {
                cond: outer,
                then_body: thread,
                else_body: otherwise,
                ret,
            },
            s.loc,
        ));
    }

    /// One `SegMap` at `level` running the map's body (a copy no other version shares) per
    /// element.
    fn map_version(&mut self, copy: Stmt, level: SegLevel) -> HostBody {
        let Exp::Soac(Soac::Screma {
            width, inputs, map, ..
        }) = &copy.exp
        else {
            unreachable!("map_version on a non-map")
        };
        let inner = self
            .host_nest(&copy)
            .with_level(*width, &map.params, inputs);
        let mut stmts = Vec::new();
        let result = self
            .map_kernel(&inner, level, map.body.clone(), copy.loc, &mut stmts)
            .expect("a host-level map has no irregular size");
        Body {
            stmts,
            result: vars(&result),
        }
    }

    /// The distributed kernels of a fresh copy of the map.
    fn distributed_version(
        &mut self,
        s: &Stmt,
        out: &mut Vec<HostStmt>,
    ) -> Result<Distributed, Irregular> {
        let copy = rename::freshen_stmt(&mut self.f, s);
        let Exp::Soac(Soac::Screma {
            width, inputs, map, ..
        }) = &copy.exp
        else {
            unreachable!("distributed_version on a non-map")
        };
        let inner = self
            .host_nest(&copy)
            .with_level(*width, &map.params, inputs);
        let widths = self.inner_widths(&inner, &map.body);
        self.assumable = widths.clone();
        let result = self.distribute(&inner, &map.body, copy.loc, out);
        self.assumable.clear();
        let assumed = std::mem::take(&mut self.assumed);
        Ok(Distributed {
            result: vars(&result?),
            widths,
            assumed,
        })
    }

    /// `cond`, and when hoisted code assumes the inner widths `assumed` to be valid sizes, also
    /// that they are (`0 <= w <= MAX_ELEMS`) and that the map (of width `width`) is not empty:
    /// the interpreter checks them at the map's first point only.
    fn valid_sizes(
        &mut self,
        cond: SubExp,
        width: SubExp,
        assumed: &[SubExp],
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> SubExp {
        if assumed.is_empty() {
            return cond;
        }
        let max = SubExp::i64(ogham_ir::sizes::MAX_ELEMS as i64);
        let mut tests = vec![(BinOp::Ne, width, SubExp::i64(0))];
        for &w in assumed {
            tests.push((BinOp::Ge, w, SubExp::i64(0)));
            tests.push((BinOp::Le, w, max));
        }
        tests.into_iter().fold(cond, |acc, (op, a, b)| {
            let test = self.bool_stmt(Exp::BinOp(op, a, b), loc, out);
            self.bool_stmt(Exp::BinOp(BinOp::BitAnd, acc, test), loc, out)
        })
    }

    /// Binds the `bool` `exp` to a fresh variable.
    fn bool_stmt(&mut self, exp: HostExp, loc: Span, out: &mut Vec<HostStmt>) -> SubExp {
        let v = self.f.new_var("valid", Type::Prim(PrimType::Bool));
        out.push(stmt(vec![v], exp, loc));
        SubExp::Var(v)
    }

    /// Undoes a failed attempt: drops the variables it added to the arena.
    fn forget_vars_from(&mut self, len: usize) {
        self.f.vars.truncate(len);
        self.claimed.retain(|v| v.index() < len);
    }

    /// Binds `size >= threshold` to a fresh `bool`, registering the threshold.
    fn threshold(
        &mut self,
        id: ThresholdId,
        default: i64,
        doc: String,
        size: SubExp,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> SubExp {
        let cond = self.f.new_var(id.to_string(), Type::Prim(PrimType::Bool));
        self.state.thresholds.push(Threshold { id, default, doc });
        out.push(stmt(
            vec![cond],
            Exp::Host(HostOp::Threshold { id, size }),
            loc,
        ));
        SubExp::Var(cond)
    }

    /// The largest of `sizes` (at least one), computed on the host.
    fn maximum(&mut self, sizes: &[SubExp], loc: Span, out: &mut Vec<HostStmt>) -> SubExp {
        let mut acc = sizes[0];
        for &size in &sizes[1..] {
            let max = self.f.new_var("inner_par", Type::Prim(PrimType::I64));
            out.push(stmt(
                vec![max],
                Exp::Math(MathFn::Max, PrimType::I64, vec![acc, size]),
                loc,
            ));
            acc = SubExp::Var(max);
        }
        acc
    }

    fn fresh_pattern(&mut self, pat: &[VarId]) -> Vec<VarId> {
        pat.iter()
            .map(|&p| {
                let info = self.f.var(p).clone();
                self.f.new_var(info.name, info.ty)
            })
            .collect()
    }

    /// Whether the statement can run in parallel across the nest's points: a SOAC of the same
    /// width at every point, or a `for` loop with a uniform bound and regular parameters whose
    /// body has such parallelism (it can be interchanged with the nest).
    fn is_parallel(&self, nest: &Nest, s: &Stmt) -> bool {
        match &s.exp {
            Exp::Soac(soac) => !nest.is_variant(soac.width()),
            Exp::Loop {
                params,
                form: LoopForm::For { bound, .. },
                body,
            } => {
                !nest.is_variant(*bound)
                    && params.iter().all(|&(p, _)| nest.is_regular(self.f.ty(p)))
                    && self.has_parallelism(nest, body)
            }
            _ => false,
        }
    }

    fn has_parallelism(&self, nest: &Nest, body: &Body) -> bool {
        body.stmts.iter().any(|s| self.is_parallel(nest, s))
    }

    /// The distinct widths of the parallel SOACs of `body` and of the loops it interchanges.
    fn inner_widths(&self, nest: &Nest, body: &Body) -> Vec<SubExp> {
        let mut widths = Vec::new();
        for s in body.stmts.iter().filter(|s| self.is_parallel(nest, s)) {
            let found = match &s.exp {
                Exp::Soac(soac) => vec![soac.width()],
                Exp::Loop { body, .. } => self.inner_widths(nest, body),
                _ => vec![],
            };
            for w in found {
                if !widths.contains(&w) {
                    widths.push(w);
                }
            }
        }
        widths
    }

    /// Distributes the nest's innermost map around its body: kernels for each group of
    /// statements, in order. Returns the arrays holding the body's results at every point.
    fn distribute(
        &mut self,
        nest: &Nest,
        body: &Body,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        if !self.has_parallelism(nest, body) {
            return self.map_kernel(nest, SegLevel::Thread, body.clone(), loc, out);
        }
        let mut nest = nest.clone();
        let body = &self.hoist_invariant(&mut nest, body, out);
        let groups = self.groups(&nest, body);
        // What each group must leave for the groups after it and the body's results.
        let mut live = free_vars(&self.f, &[], &body.result);
        let mut live_after = vec![BTreeSet::new(); groups.len()];
        for (g, group) in groups.iter().enumerate().rev() {
            live_after[g] = live.clone();
            let stmts: Vec<Stmt> = match group {
                Group::Sequential(stmts) => stmts.iter().map(|&s| s.clone()).collect(),
                Group::Parallel(s) => vec![(*s).clone()],
            };
            live.extend(free_vars(&self.f, &stmts, &[]));
        }
        for (group, live) in groups.into_iter().zip(live_after) {
            match group {
                Group::Sequential(stmts) => {
                    // Cheap scalars of per-point values from before the group are computed
                    // again where needed; the rest is a kernel that stores what later code
                    // (recomputed scalars included) uses.
                    let (mut cheap, mut rest) = (Vec::new(), Vec::new());
                    let mut bound_here = HashSet::new();
                    for s in stmts {
                        let independent = free_vars_stmt(&self.f, s)
                            .iter()
                            .all(|v| !bound_here.contains(v));
                        if independent && self.is_cheap_scalar(&nest, s) {
                            cheap.push(s);
                        } else {
                            bound_here.extend(s.pat.iter().copied());
                            rest.push(s);
                        }
                    }
                    let stmts = rest;
                    let cheap_stmts: Vec<Stmt> = cheap.iter().map(|&s| s.clone()).collect();
                    let needed = free_vars(&self.f, &cheap_stmts, &[]);
                    for s in cheap {
                        nest.recompute(s.pat[0], s.exp.clone());
                    }
                    let outs: Vec<VarId> = stmts
                        .iter()
                        .flat_map(|s| s.pat.iter().copied())
                        .filter(|v| live.contains(v) || needed.contains(v))
                        .collect();
                    let checks = stmts.iter().any(|s| s.exp.is_effect());
                    if outs.is_empty() && !checks {
                        continue;
                    }
                    let code = Body {
                        stmts: stmts.into_iter().cloned().collect(),
                        result: vars(&outs),
                    };
                    let arrays = self.map_kernel(&nest, SegLevel::Thread, code, loc, out)?;
                    for (v, array) in outs.into_iter().zip(arrays) {
                        nest.expand(v, array);
                    }
                }
                Group::Parallel(s) => match &s.exp {
                    Exp::Soac(soac) => self.soac(&mut nest, &s.pat, soac, s.loc, out)?,
                    _ => self.interchange(&mut nest, s, out)?,
                },
            }
        }
        self.materialise(&nest, &body.result, loc, out)
    }

    /// Moves the statements of `body` that compute the same value at every point of the nest
    /// (and cannot fail, so that running them once even for an empty nest is safe) to the
    /// host, before the kernels; returns the rest. Expanding them instead would compute and
    /// store one copy per point. Arrays stay per point when the body updates arrays in place
    /// (each point may need its own copy).
    fn hoist_invariant(&mut self, nest: &mut Nest, body: &Body, out: &mut Vec<HostStmt>) -> Body {
        let updates = updates_in_place(body);
        let widths = self.assumable.clone();
        let mut rest = Vec::new();
        for s in &body.stmts {
            let invariant = free_vars_stmt(&self.f, s)
                .into_iter()
                .all(|v| !nest.is_variant(SubExp::Var(v)));
            let shared = !updates || s.pat.iter().all(|&v| self.f.ty(v).rank() == 0);
            // What cannot fail is flat, so it is host code as it is.
            let hoisted = (invariant && shared && self.cannot_fail(nest, &widths, &s.exp))
                .then(|| s.exp.clone().flat().ok())
                .flatten();
            if let Some(exp) = hoisted {
                if let Exp::Iota(size) | Exp::Replicate(size, _) = s.exp
                    && !self.is_size(nest, size)
                    && !self.assumed.contains(&size)
                {
                    self.assumed.push(size);
                }
                out.push(stmt(s.pat.clone(), exp, s.loc));
                s.pat.iter().for_each(|&v| nest.hoist(v));
            } else {
                rest.push(s.clone());
            }
        }
        Body {
            stmts: rest,
            result: body.result.clone(),
        }
    }

    /// Whether `s` binds one scalar by an expression that cannot fail (cheaper to compute again
    /// in every kernel that needs it than to store per point).
    fn is_cheap_scalar(&self, nest: &Nest, s: &Stmt) -> bool {
        matches!(s.pat[..], [v] if self.f.ty(v).rank() == 0)
            && !matches!(s.exp, Exp::Iota(_) | Exp::Replicate(..) | Exp::ArrayLit(..))
            && self.cannot_fail(nest, &[], &s.exp)
    }

    /// Whether evaluating `exp` in the nest can neither fail nor run long (no checks, no
    /// division, no nested code, no array of a size that might be invalid; `sizes` may be
    /// assumed to be valid sizes).
    fn cannot_fail(&self, nest: &Nest, sizes: &[SubExp], exp: &Exp) -> bool {
        match exp {
            Exp::SubExp(_)
            | Exp::UnOp(..)
            | Exp::Convert(..)
            | Exp::Math(..)
            | Exp::Rearrange(..)
            | Exp::ArrayLit(..) => true,
            Exp::Iota(size) | Exp::Replicate(size, _) => {
                sizes.contains(size) || self.is_size(nest, *size)
            }
            Exp::BinOp(op, a, _) => {
                matches!(self.f.subexp_type(*a).elem(), PrimType::F32 | PrimType::F64)
                    || !matches!(
                        op,
                        BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
                    )
            }
            _ => false,
        }
    }

    /// Whether `se` is known to be a valid size even when the nest is empty: a constant size,
    /// the outer width, or a dimension of a function parameter or of a row of the nest's
    /// inputs. (The width of an inner level is the size of an array the outer level computes,
    /// checked only when the outer level has points.)
    fn is_size(&self, nest: &Nest, se: SubExp) -> bool {
        let Some(v) = se.as_var() else {
            return matches!(se, SubExp::Const(Const::I64(n)) if ogham_ir::sizes::count(n).is_ok());
        };
        let params = self.f.params.iter().map(|p| p.var);
        nest.widths().first() == Some(&se)
            || params
                .chain(nest.row_params())
                .any(|p| self.f.ty(p).shape().contains(&SubExp::Var(v)))
    }

    /// Cuts a body into groups: each parallel statement alone, the runs between them.
    fn groups<'b>(&self, nest: &Nest, body: &'b Body) -> Vec<Group<'b>> {
        let mut groups = Vec::new();
        let mut run = Vec::new();
        for s in &body.stmts {
            if self.is_parallel(nest, s) {
                if !run.is_empty() {
                    groups.push(Group::Sequential(std::mem::take(&mut run)));
                }
                groups.push(Group::Parallel(s));
            } else {
                run.push(s);
            }
        }
        if !run.is_empty() {
            groups.push(Group::Sequential(run));
        }
        groups
    }

    /// The arrays holding `values` at every point of the nest: the expanded arrays where an
    /// earlier kernel computed them, otherwise from one more `SegMap`.
    fn materialise(
        &mut self,
        nest: &Nest,
        values: &[SubExp],
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        let known: Vec<Option<VarId>> = values
            .iter()
            .map(|se| se.as_var().and_then(|v| nest.expanded(v)))
            .collect();
        let missing: Vec<SubExp> = values
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(&se, _)| se)
            .collect();
        let mut computed = if missing.is_empty() {
            Vec::new()
        } else {
            let code = Body {
                stmts: vec![],
                result: missing,
            };
            self.map_kernel(nest, SegLevel::Thread, code, loc, out)?
        }
        .into_iter();
        Ok(known
            .into_iter()
            .map(|k| k.unwrap_or_else(|| computed.next().expect("one array per missing value")))
            .collect())
    }

    /// `map (\x -> loop (p = init) for i < b do body) xs` as
    /// `loop (ps = inits) for i < b do (map (\x p -> body) xs ps)`, the loop on the host and its
    /// body distributed over the nest.
    fn interchange(
        &mut self,
        nest: &mut Nest,
        s: &Stmt,
        out: &mut Vec<HostStmt>,
    ) -> Result<(), Irregular> {
        let Exp::Loop {
            params,
            form: LoopForm::For { index, bound },
            body,
        } = &s.exp
        else {
            unreachable!("only `for` loops are interchanged")
        };
        let inits = self.loop_inits(nest, params, body, s.loc, out)?;
        let loop_params =
            self.expanded_vars(nest, &params.iter().map(|&(p, _)| p).collect::<Vec<_>>())?;
        let mut inner = nest.clone();
        inner.hoist(*index);
        for (&(p, _), &expanded) in params.iter().zip(&loop_params) {
            inner.expand(p, expanded);
        }
        let mut loop_out = Vec::new();
        let result = self.distribute(&inner, body, s.loc, &mut loop_out)?;
        let pat = self.expanded_pattern(nest, &s.pat)?;
        out.push(stmt(
            pat,
            Exp::Loop {
                params: loop_params
                    .into_iter()
                    .zip(inits)
                    .map(|(p, init)| (p, SubExp::Var(init)))
                    .collect(),
                form: LoopForm::For {
                    index: *index,
                    bound: *bound,
                },
                body: Body {
                    stmts: loop_out,
                    result: vars(&result),
                },
            },
            s.loc,
        ));
        Ok(())
    }

    /// The initial values of an interchanged loop's parameters at every point: the map's
    /// inputs where the values are their rows (copied if the loop updates arrays in place),
    /// otherwise arrays computed by a kernel.
    fn loop_inits(
        &mut self,
        nest: &Nest,
        params: &[(VarId, SubExp)],
        body: &Body,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        let updates = updates_in_place(body);
        let inits: Vec<SubExp> = params.iter().map(|&(_, init)| init).collect();
        let rows: Vec<Option<VarId>> = inits
            .iter()
            .map(|se| {
                let v = se.as_var()?;
                nest.expanded(v).is_none().then(|| nest.input_rows(v))?
            })
            .collect();
        let computed: Vec<SubExp> = inits
            .iter()
            .zip(&rows)
            .filter(|(_, row)| row.is_none())
            .map(|(&init, _)| init)
            .collect();
        let mut computed = self.materialise(nest, &computed, loc, out)?.into_iter();
        let mut arrays = Vec::new();
        for row in rows {
            arrays.push(match row {
                Some(input) if updates => {
                    let info = self.f.var(input).clone();
                    let copy = self.f.new_var(info.name, info.ty);
                    out.push(stmt(vec![copy], Exp::Copy(input), loc));
                    copy
                }
                Some(input) => input,
                None => computed.next().expect("one array per computed value"),
            });
        }
        Ok(arrays)
    }

    /// Kernels for `let pat = soac` at the nest's depth, binding `pat` (at depth 0) or arrays
    /// holding `pat` at every point (deeper).
    fn soac(
        &mut self,
        nest: &mut Nest,
        pat: &[VarId],
        soac: &Soac,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<(), Irregular> {
        let map = soac.map_lambda();
        let inner = nest.with_level(soac.width(), &map.params, soac.inputs());
        let code = map.body.clone();
        match soac {
            Soac::Screma { scans, reds, .. }
                if scans.is_empty() && reds.is_empty() && nest.depth() == 0 =>
            {
                let seg = self.kernel(
                    &inner,
                    SegLevel::Thread,
                    SegKind::Map,
                    code,
                    map.ret.clone(),
                )?;
                out.push(stmt(
                    pat.to_vec(),
                    Exp::Host(HostOp::Seg(Box::new(seg))),
                    loc,
                ));
            }
            Soac::Screma { scans, reds, .. } if scans.is_empty() && reds.is_empty() => {
                let arrays = self.distribute(&inner, &map.body, loc, out)?;
                for (&p, array) in pat.iter().zip(arrays) {
                    nest.expand(p, array);
                }
            }
            Soac::Screma { scans, reds, .. } if reds.is_empty() => {
                self.check_operators(nest, scans.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
                let kind = SegKind::Scan(scans.clone());
                let seg = self.kernel(&inner, SegLevel::Thread, kind, code, map.ret.clone())?;
                let pat = self.expanded_pattern(nest, pat)?;
                out.push(stmt(pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
            }
            Soac::Screma { scans, reds, .. } if scans.is_empty() => {
                self.check_operators(nest, reds.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
                let kind = SegKind::Red(reds.clone());
                let seg = self.kernel(&inner, SegLevel::Thread, kind, code, map.ret.clone())?;
                let pat = self.expanded_pattern(nest, pat)?;
                out.push(stmt(pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
            }
            Soac::Screma { scans, reds, .. } => {
                self.scan_then_reduce(nest, &inner, pat, map, scans, reds, loc, out)?
            }
            Soac::Hist { hists, .. } => {
                let mut ops = Vec::new();
                for op in hists {
                    self.check_operators(nest, [(&op.op, &op.neutral[..])])?;
                    if nest.is_variant(op.num_bins) {
                        return Err(Irregular);
                    }
                    let dests = op
                        .dests
                        .iter()
                        .map(|&d| nest.expanded(d).ok_or(Irregular))
                        .collect::<Result<_, _>>()?;
                    ops.push(HistOp {
                        dests,
                        ..op.clone()
                    });
                }
                let seg = self.kernel(
                    &inner,
                    SegLevel::Thread,
                    SegKind::Hist(ops),
                    code,
                    map.ret.clone(),
                )?;
                let pat = self.expanded_pattern(nest, pat)?;
                out.push(stmt(pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
            }
            Soac::Scatter { dests, .. } => {
                let mut ops = Vec::new();
                for &d in dests {
                    let dest = nest.expanded(d).ok_or(Irregular)?;
                    let row = self.f.ty(d).row();
                    if !nest.is_regular(&row) {
                        return Err(Irregular);
                    }
                    let num_bins = self.f.ty(d).shape()[0];
                    let neutral = self.zero(&row, loc, out);
                    ops.push(HistOp {
                        num_bins,
                        dests: vec![dest],
                        op: self.overwrite(&row),
                        neutral: vec![neutral],
                    });
                }
                let seg = self.kernel(
                    &inner,
                    SegLevel::Thread,
                    SegKind::Hist(ops),
                    code,
                    map.ret.clone(),
                )?;
                let pat = self.expanded_pattern(nest, pat)?;
                out.push(stmt(pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
            }
        }
        Ok(())
    }

    /// A `Screma` with scans and reductions: a `SegScan` that also returns the values fed to
    /// the reductions (as mapped arrays), then a `SegRed` over those.
    #[allow(clippy::too_many_arguments)]
    fn scan_then_reduce(
        &mut self,
        nest: &mut Nest,
        inner: &Nest,
        pat: &[VarId],
        map: &Lambda,
        scans: &[ogham_ir::ScanOp],
        reds: &[RedOp],
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<(), Irregular> {
        self.check_operators(nest, scans.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
        self.check_operators(nest, reds.iter().map(|op| (&op.lambda, &op.neutral[..])))?;
        let scanned: usize = scans.iter().map(|op| op.neutral.len()).sum();
        let reduced: usize = reds.iter().map(|op| op.neutral.len()).sum();
        let kind = SegKind::Scan(scans.to_vec());
        let seg = self.kernel(
            inner,
            SegLevel::Thread,
            kind,
            map.body.clone(),
            map.ret.clone(),
        )?;
        let scan_pat = self.expanded_pattern(nest, &pat[..scanned])?;
        let mapped_pat = self.expanded_pattern(nest, &pat[scanned + reduced..])?;
        let widths = inner.widths();
        let fed: Vec<VarId> = map.ret[scanned..scanned + reduced]
            .iter()
            .map(|t| {
                let mut shape = widths.clone();
                shape.extend_from_slice(t.shape());
                self.f.new_var("fed", Type::with_shape(t.elem(), shape))
            })
            .collect();
        let mut seg_pat = scan_pat;
        seg_pat.extend(&fed);
        seg_pat.extend(mapped_pat);
        out.push(stmt(seg_pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));

        // The reduction reads the fed values back: they are per point of the inner nest.
        let mut over_fed = inner.clone();
        let elems: Vec<VarId> = map.ret[scanned..scanned + reduced]
            .iter()
            .map(|t| self.f.new_var("fed", t.clone()))
            .collect();
        for (&e, &array) in elems.iter().zip(&fed) {
            over_fed.expand(e, array);
        }
        let code = Body {
            stmts: vec![],
            result: vars(&elems),
        };
        let ret = map.ret[scanned..scanned + reduced].to_vec();
        let seg = self.kernel(
            &over_fed,
            SegLevel::Thread,
            SegKind::Red(reds.to_vec()),
            code,
            ret,
        )?;
        let red_pat = self.expanded_pattern(nest, &pat[scanned..scanned + reduced])?;
        out.push(stmt(red_pat, Exp::Host(HostOp::Seg(Box::new(seg))), loc));
        Ok(())
    }

    /// Operators and neutral elements must be the same at every point of the nest.
    fn check_operators<'l>(
        &self,
        nest: &Nest,
        ops: impl IntoIterator<Item = (&'l Lambda, &'l [SubExp])>,
    ) -> Result<(), Irregular> {
        for (lambda, neutral) in ops {
            let free = free_vars_body(&self.f, &lambda.body);
            if free
                .iter()
                .any(|&v| nest.is_variant(SubExp::Var(v)) && !lambda.params.contains(&v))
                || neutral.iter().any(|&ne| nest.is_variant(ne))
            {
                return Err(Irregular);
            }
        }
        Ok(())
    }

    /// The operator `\_ v -> v` on values of type `ty`: a scatter as a histogram.
    fn overwrite(&mut self, ty: &Type) -> Lambda {
        let old = self.f.new_var("old", ty.clone());
        let new = self.f.new_var("new", ty.clone());
        Lambda {
            params: vec![old, new],
            body: Body {
                stmts: vec![],
                result: vec![SubExp::Var(new)],
            },
            ret: vec![ty.clone()],
        }
    }

    /// A zero of type `ty` (for arrays, built on the host by `replicate`).
    fn zero(&mut self, ty: &Type, loc: Span, out: &mut Vec<HostStmt>) -> SubExp {
        let mut value = SubExp::Const(zero_const(ty.elem()));
        let shape = ty.shape();
        for d in (0..shape.len()).rev() {
            let t = Type::with_shape(ty.elem(), shape[d..].to_vec());
            let array = self.f.new_var("zeros", t);
            out.push(stmt(vec![array], Exp::Replicate(shape[d], value), loc));
            value = SubExp::Var(array);
        }
        value
    }

    /// A `SegMap` at `level` over the nest's space running `code`; returns the arrays of its
    /// results over the space.
    fn map_kernel(
        &mut self,
        nest: &Nest,
        level: SegLevel,
        code: Body,
        loc: Span,
        out: &mut Vec<HostStmt>,
    ) -> Result<Vec<VarId>, Irregular> {
        let ret: Vec<Type> = code
            .result
            .iter()
            .map(|&se| self.f.subexp_type(se))
            .collect();
        let names: Vec<String> = code
            .result
            .iter()
            .map(|se| match se {
                SubExp::Var(v) => self.f.var(*v).name.clone(),
                SubExp::Const(_) => "const".to_string(),
            })
            .collect();
        let seg = self.kernel(nest, level, SegKind::Map, code, ret.clone())?;
        let widths = nest.widths();
        let arrays: Vec<VarId> = ret
            .iter()
            .zip(names)
            .map(|(t, name)| {
                let mut shape = widths.clone();
                shape.extend_from_slice(t.shape());
                self.f.new_var(name, Type::with_shape(t.elem(), shape))
            })
            .collect();
        out.push(stmt(
            arrays.clone(),
            Exp::Host(HostOp::Seg(Box::new(seg))),
            loc,
        ));
        Ok(arrays)
    }

    /// A kernel over the nest's space whose body binds the per-point variables `code` uses
    /// (by indexing, see [`Nest::resolve`]) and runs `code`.
    fn kernel(
        &mut self,
        nest: &Nest,
        level: SegLevel,
        kind: SegKind,
        mut code: Body,
        ret: Vec<Type>,
    ) -> Result<SegOp, Irregular> {
        if !ret.iter().all(|t| nest.is_regular(t)) {
            return Err(Irregular);
        }
        let widths = nest.widths();
        let indices: Vec<VarId> = widths
            .iter()
            .map(|_| self.f.new_var("gtid", Type::Prim(PrimType::I64)))
            .collect();
        // The code binds its own variables here: later kernels must bind fresh copies.
        let bound_here = rename::binders(&code.stmts);
        self.claimed.extend(bound_here.iter().copied());
        let mut memo = HashMap::new();
        let mut binds = Vec::new();
        for v in free_vars_body(&self.f, &code) {
            if nest.is_outer(v) {
                nest.resolve(
                    &mut self.f,
                    &mut self.claimed,
                    v,
                    &indices,
                    &mut memo,
                    &mut binds,
                )?;
            }
        }
        let subst: Subst = memo
            .into_iter()
            .filter(|&(v, se)| se != SubExp::Var(v))
            .collect();
        // A renamed variable must not occur in the types of the code's own variables.
        let renamed = |d: &SubExp| d.as_var().is_some_and(|v| subst.contains_key(&v));
        if bound_here
            .into_iter()
            .any(|b| self.f.ty(b).shape().iter().any(renamed))
        {
            return Err(Irregular);
        }
        substitute_body(&mut code, &subst);
        // A value read from a host array that the kernel updates in place is a copy: the
        // kernel must not consume (write into) memory bound outside it.
        let consumed = consumed_in(&self.f, &code);
        let mut stmts = Vec::with_capacity(binds.len() + code.stmts.len());
        for mut bind in binds {
            let v = bind.pat[0];
            if consumed.contains(&v) {
                let info = self.f.var(v).clone();
                let view = self.f.new_var(info.name, info.ty);
                bind.pat = vec![view];
                let loc = bind.loc;
                stmts.push(bind);
                stmts.push(stmt(vec![v], Exp::Copy(view), loc));
            } else {
                stmts.push(bind);
            }
        }
        stmts.append(&mut code.stmts);
        code.stmts = stmts;
        Ok(SegOp {
            level,
            space: indices.into_iter().zip(widths).collect(),
            kind,
            body: code,
            ret,
        })
    }

    /// Fresh arrays holding the variables `pat` at every point of the nest (recorded as their
    /// expansions); at depth 0, `pat` itself.
    fn expanded_pattern(
        &mut self,
        nest: &mut Nest,
        pat: &[VarId],
    ) -> Result<Vec<VarId>, Irregular> {
        let arrays = self.expanded_vars(nest, pat)?;
        for (&p, &array) in pat.iter().zip(&arrays) {
            nest.expand(p, array);
        }
        Ok(arrays)
    }

    /// Fresh variables for `vs` with the nest's widths added to their types (at depth 0,
    /// `vs` themselves).
    fn expanded_vars(&mut self, nest: &Nest, vs: &[VarId]) -> Result<Vec<VarId>, Irregular> {
        if nest.depth() == 0 {
            return Ok(vs.to_vec());
        }
        let widths = nest.widths();
        vs.iter()
            .map(|&v| {
                let info = self.f.var(v).clone();
                if !nest.is_regular(&info.ty) {
                    return Err(Irregular);
                }
                let mut shape = widths.clone();
                shape.extend_from_slice(info.ty.shape());
                Ok(self
                    .f
                    .new_var(info.name, Type::with_shape(info.ty.elem(), shape)))
            })
            .collect()
    }
}

/// The variables that statements of `body` (at any depth) consume: updated arrays, scatter and
/// histogram destinations, and the initial values of the array parameters of loops that update
/// arrays in place (a scalar parameter is never consumed, even when the loop's body updates
/// other arrays: it needs no copy).
fn consumed_in(function: &Function, body: &Body) -> HashSet<VarId> {
    let mut consumed = HashSet::new();
    for_each_stmt(body, &mut |s| match &s.exp {
        Exp::Update(v, ..) => {
            consumed.insert(*v);
        }
        Exp::Soac(Soac::Scatter { dests, .. }) => consumed.extend(dests.iter().copied()),
        Exp::Soac(Soac::Hist { hists, .. }) => {
            consumed.extend(hists.iter().flat_map(|h| h.dests.iter().copied()))
        }
        Exp::Loop { params, body, .. } if updates_in_place(body) => consumed.extend(
            params
                .iter()
                .filter(|&&(p, _)| function.ty(p).rank() > 0)
                .filter_map(|(_, init)| init.as_var()),
        ),
        _ => {}
    });
    consumed
}

/// Whether `body` updates an array in place anywhere (an update, a scatter, a histogram).
fn updates_in_place(body: &Body) -> bool {
    let mut updates = false;
    for_each_stmt(body, &mut |s| {
        updates |= matches!(
            s.exp,
            Exp::Update(..) | Exp::Soac(Soac::Scatter { .. } | Soac::Hist { .. })
        )
    });
    updates
}

fn vars(vs: &[VarId]) -> Vec<SubExp> {
    vs.iter().map(|&v| SubExp::Var(v)).collect()
}

/// The variables that `stmts` and `result` use but do not bind.
fn free_vars(function: &Function, stmts: &[Stmt], result: &[SubExp]) -> BTreeSet<VarId> {
    free_vars_body(
        function,
        &Body {
            stmts: stmts.to_vec(),
            result: result.to_vec(),
        },
    )
}

fn zero_const(t: PrimType) -> Const {
    match t {
        PrimType::Bool => Const::Bool(false),
        PrimType::I8 => Const::I8(0),
        PrimType::I16 => Const::I16(0),
        PrimType::I32 => Const::I32(0),
        PrimType::I64 => Const::I64(0),
        PrimType::U8 => Const::U8(0),
        PrimType::F32 => Const::F32(0.0),
        PrimType::F64 => Const::F64(0.0),
    }
}
