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
//! When the body is itself a nest of maps (`map (\x -> map (\y -> g) ys) xs`, the inner map's
//! width `w` the same at every point, its result the body's) and `g` holds the parallel code,
//! the Block-level version has two forms behind `threshold(suff_block_par_K, w)`: one block per
//! element of `[n]` (its threads on the `w` elements, each running `g` alone) from that width
//! on, and one block per element of `[n][w]` (its threads on the parallel code of `g`) below
//! it: a few long TWDTW pairs then get a block each, whose threads share a wavefront's
//! diagonal, instead of one thread each.
//!
//! # Invariants
//!
//! The input is core IR that passes `verify`: every variable is bound once, the lambda
//! parameters' types mention no variable bound inside the lambda. The output is kernel IR
//! ([`kir::Program`]; this pass is the only one that converts core IR to it) that passes
//! `verify`: no SOAC at host level, every variable still bound once (a per-point variable
//! needed by several kernels is bound afresh in all but the first). Kernel bodies are core IR
//! by their type, so no kernel is inside a kernel.

mod distribute;
mod hoist;
mod interchange;
mod kernels;
mod nest;
mod rename;
mod version;

use nest::Nest;
use ogham_ir::kir::{self, HostBody, HostStmt, Threshold};
use ogham_ir::source::Span;
use ogham_ir::traverse::{for_each_stmt, free_vars_body};
use ogham_ir::{Body, Exp, Form, Function, Program, Soac, Stmt, SubExp, VarId};
use std::collections::{BTreeSet, HashSet};

/// The default of `suff_outer_par_K`: the outer width from which one thread per outer point
/// fills the machine.
pub const DEFAULT_OUTER_PAR: i64 = 1 << 15;
/// The default of `suff_intra_par_K`: one more than the largest block (1024 threads), so that
/// inner work that fits one block runs as one block per outer point.
pub const DEFAULT_INTRA_PAR: i64 = 1025;
/// The default of `suff_block_par_K`: an inner map of a warp's width or more gives a block
/// enough threads on its elements; a narrower one runs one block per element of the nest.
pub const DEFAULT_BLOCK_PAR: i64 = 32;

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
