//! Fusion of SOACs: vertical fusion of a `map` producer into the SOAC that consumes its arrays,
//! so that `map f (map g xs)`, `reduce op ne (map g xs)`, `scan op ne (map g xs)`,
//! `scatter dest is (map g xs)` and `hist op ne k is (map g xs)` become one pass over the data
//! (map–map, map–reduce, map–scan, map–scatter and map–hist in one rule: every SOAC applies a
//! map lambda to its inputs first).
//!
//! # Algorithm
//!
//! Bottom-up over the bodies of each function (nested bodies first, so inner maps fuse before
//! their enclosing ones are considered). In a body, a statement `P = Screma` with only a map
//! (no scans or reductions) fuses into a later statement `C = Screma` of the same width when
//!
//! - every array `P` returns is used nowhere in the function but as an input of `C` (so nothing
//!   is computed twice and no intermediate array is needed), and
//! - no statement between `P` and `C` consumes an array `P` reads, and `C` itself (a scatter's
//!   or histogram's destinations) consumes none (moving `P`'s reads down into `C` must not move
//!   them past, or into, an in-place update).
//!
//! The fused lambda takes `P`'s inputs and `C`'s other inputs; its body is `P`'s body followed by
//! `C`'s, `C`'s parameters for `P`'s arrays bound to `P`'s results. The order of `C`'s scans and
//! reductions is untouched, so non-commutative operators keep their meaning.
//!
//! **Horizontal fusion**: two `Screma`s `A` (earlier) and `B` of the same width, where `B` does
//! not use `A`'s results, become one `Screma` at `B`'s place — one pass computing both (for
//! example `(reduce (+) 0 xs, reduce f32.max (-f32.inf) xs)`). `A` moves down to `B`, so no
//! statement in between may use `A`'s results or consume an array `A` reads. The fused lambda
//! takes `A`'s inputs then `B`'s; its results and the statement's pattern are `A`'s scans, `B`'s
//! scans, `A`'s reductions, `B`'s reductions, `A`'s maps, `B`'s maps, in the `Screma` order.
//! Only SOACs with flat lambdas (no SOAC inside) merge, so that maps with inner parallelism keep
//! their own multi-versioned kernels when flattened. Vertical fusion is tried first everywhere;
//! horizontal fusion then often lets a producer used by two consumers fuse into their union.
//!
//! Not done yet: producers with scans or reductions whose map outputs are consumed, producers
//! used elsewhere (kept as extra outputs), horizontal fusion of scatters and histograms.
//!
//! # Invariants relied on
//!
//! Every variable is bound once (so moving `P`'s lambda into `C` keeps bindings unique) and the
//! program passed the verifier.

use ogham_ir::traverse::{free_vars_stmt, nested_bodies_mut, use_counts};
use ogham_ir::{Body, Exp, Function, Lambda, Program, Soac, Stmt, SubExp, VarId};

/// Fuses SOACs in every function of the program.
pub fn fuse(program: &mut Program) {
    for function in &mut program.functions {
        while fuse_once(function) {}
    }
}

/// Performs one fusion somewhere in `function`; whether one was found.
fn fuse_once(function: &mut Function) -> bool {
    let counts = use_counts(function, &function.body);
    let mut body = std::mem::take(&mut function.body);
    let fused = fuse_in_body(function, &mut body, &counts);
    function.body = body;
    fused
}

/// `function` gives the variables' types (its own body is taken out while `body` is rewritten).
fn fuse_in_body(function: &Function, body: &mut Body, counts: &[u32]) -> bool {
    for stmt in &mut body.stmts {
        for nested in nested_bodies_mut(&mut stmt.exp) {
            if fuse_in_body(function, nested.body(), counts) {
                return true;
            }
        }
    }
    for producer in 0..body.stmts.len() {
        if let Some(consumer) = fusable_consumer(function, body, producer, counts) {
            fuse_pair(body, producer, consumer);
            return true;
        }
    }
    for first in 0..body.stmts.len() {
        if let Some(second) = horizontal_partner(function, body, first) {
            fuse_horizontally(body, first, second);
            return true;
        }
    }
    false
}

/// Whether a SOAC's lambda is flat: no SOAC inside (at any depth).
fn flat(soac: &Soac) -> bool {
    let mut nested = false;
    ogham_ir::traverse::for_each_stmt(&soac.map_lambda().body, &mut |s: &Stmt| {
        nested |= matches!(s.exp, Exp::Soac(_));
    });
    !nested
}

/// A later `Screma` that the `Screma` at `first` can fuse with horizontally (see the header).
/// Only flat lambdas merge: a map with inner parallelism keeps its own versions (thresholds)
/// when flattened, so each group of inner-parallel work keeps its own kernels.
fn horizontal_partner(function: &Function, body: &Body, first: usize) -> Option<usize> {
    let Exp::Soac(a @ Soac::Screma { .. }) = &body.stmts[first].exp else {
        return None;
    };
    if !flat(a) {
        return None;
    }
    let outputs = &body.stmts[first].pat;
    let reads = free_vars_stmt(function, &body.stmts[first]);
    for second in first + 1..body.stmts.len() {
        let stmt = &body.stmts[second];
        let uses_outputs = free_vars_stmt(function, stmt)
            .iter()
            .any(|v| outputs.contains(v));
        if let Exp::Soac(b @ Soac::Screma { .. }) = &stmt.exp
            && b.width() == a.width()
            && flat(b)
            && !uses_outputs
        {
            return Some(second);
        }
        // `first` moves down past this statement: it must not need `first`'s results nor
        // update what `first` reads.
        if uses_outputs || consumed_by(&stmt.exp).iter().any(|c| reads.contains(c)) {
            return None;
        }
    }
    None
}

/// Replaces the statement at `second` by the union of it and `first`, and removes `first`.
fn fuse_horizontally(body: &mut Body, first: usize, second: usize) {
    let a = body.stmts.remove(first);
    let b = &mut body.stmts[second - 1];
    let (
        Exp::Soac(Soac::Screma {
            inputs: a_inputs,
            map: a_map,
            scans: a_scans,
            reds: a_reds,
            ..
        }),
        Exp::Soac(Soac::Screma {
            inputs,
            map,
            scans,
            reds,
            ..
        }),
    ) = (a.exp, &mut b.exp)
    else {
        unreachable!("both statements are Scremas")
    };
    let parts = |scans: &[ogham_ir::ScanOp], reds: &[ogham_ir::RedOp], len: usize| {
        let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
        let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
        [0..n_scan, n_scan..n_scan + n_red, n_scan + n_red..len]
    };
    let a_parts = parts(&a_scans, &a_reds, a.pat.len());
    let b_parts = parts(scans, reds, b.pat.len());
    let interleave = |xs: &[SubExp], ys: &[SubExp]| -> Vec<SubExp> {
        (0..3)
            .flat_map(|k| {
                xs[a_parts[k].clone()]
                    .iter()
                    .chain(&ys[b_parts[k].clone()])
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let result = interleave(&a_map.body.result, &map.body.result);
    let a_pat: Vec<SubExp> = a.pat.iter().map(|v| SubExp::Var(*v)).collect();
    let b_pat: Vec<SubExp> = b.pat.iter().map(|v| SubExp::Var(*v)).collect();
    let pat = interleave(&a_pat, &b_pat)
        .into_iter()
        .filter_map(SubExp::as_var)
        .collect();
    let ret: Vec<ogham_ir::Type> = (0..3)
        .flat_map(|k| {
            a_map.ret[a_parts[k].clone()]
                .iter()
                .chain(&map.ret[b_parts[k].clone()])
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    let mut new_inputs = a_inputs;
    new_inputs.append(inputs);
    *inputs = new_inputs;
    let mut params = a_map.params;
    params.append(&mut map.params);
    map.params = params;
    let mut stmts = a_map.body.stmts;
    stmts.append(&mut map.body.stmts);
    map.body = Body { stmts, result };
    map.ret = ret;
    let mut new_scans = a_scans;
    new_scans.append(scans);
    *scans = new_scans;
    let mut new_reds = a_reds;
    new_reds.append(reds);
    *reds = new_reds;
    b.pat = pat;
}

/// A map-only Screma's statement parts.
fn map_only(stmt: &Stmt) -> Option<(SubExp, &[VarId], &Lambda)> {
    match &stmt.exp {
        Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        }) if scans.is_empty() && reds.is_empty() => Some((*width, inputs, map)),
        _ => None,
    }
}

/// The statement `P` at `producer` can fuse into, if any (see the module header).
fn fusable_consumer(
    function: &Function,
    body: &Body,
    producer: usize,
    counts: &[u32],
) -> Option<usize> {
    map_only(&body.stmts[producer])?;
    let outputs = &body.stmts[producer].pat;
    let consumer = (producer + 1..body.stmts.len()).find(|&j| {
        matches!(&body.stmts[j].exp, Exp::Soac(soac)
            if soac.inputs().iter().any(|v| outputs.contains(v)))
    })?;
    let Exp::Soac(consumer_soac) = &body.stmts[consumer].exp else {
        return None;
    };
    let (width, _, _) = map_only(&body.stmts[producer])?;
    if consumer_soac.width() != width {
        return None;
    }
    let consumer_inputs = consumer_soac.inputs();
    // Everything the producer reads: its inputs and the free variables of its lambda.
    let reads = free_vars_stmt(function, &body.stmts[producer]);
    let only_there = outputs.iter().all(|out| {
        let uses = consumer_inputs.iter().filter(|v| *v == out).count() as u32;
        uses > 0 && counts[out.index()] == uses
    });
    let undisturbed = body.stmts[producer + 1..=consumer]
        .iter()
        .all(|s| consumed_by(&s.exp).iter().all(|c| !reads.contains(c)));
    (only_there && undisturbed).then_some(consumer)
}

/// The arrays a statement consumes at its own level.
fn consumed_by(exp: &Exp) -> Vec<VarId> {
    match exp {
        Exp::Update(v, ..) => vec![*v],
        Exp::Soac(Soac::Scatter { dests, .. }) => dests.clone(),
        Exp::Soac(Soac::Hist { hists, .. }) => {
            hists.iter().flat_map(|h| h.dests.iter().copied()).collect()
        }
        // Loops and nested bodies may consume what their parameters are bound to.
        Exp::Loop { params, .. } => params
            .iter()
            .filter_map(|(_, init)| init.as_var())
            .collect(),
        _ => Vec::new(),
    }
}

/// Replaces the consumer by the fused Screma and removes the producer.
fn fuse_pair(body: &mut Body, producer: usize, consumer: usize) {
    let p = body.stmts.remove(producer);
    let consumer = consumer - 1;
    let Exp::Soac(Soac::Screma {
        inputs: p_inputs,
        map: p_map,
        ..
    }) = p.exp
    else {
        unreachable!("the producer is a map-only Screma")
    };
    let Exp::Soac(consumer_soac) = &mut body.stmts[consumer].exp else {
        unreachable!("the consumer is a SOAC")
    };
    let (inputs, map) = consumer_soac.inputs_and_map_mut();
    let mut new_inputs = p_inputs;
    let mut params = p_map.params.clone();
    let mut stmts = p_map.body.stmts;
    for (input, param) in inputs.iter().zip(&map.params) {
        match p.pat.iter().position(|out| out == input) {
            Some(k) => stmts.push(Stmt {
                pat: vec![*param],
                exp: Exp::SubExp(p_map.body.result[k]),
                loc: p.loc,
            }),
            None => {
                new_inputs.push(*input);
                params.push(*param);
            }
        }
    }
    stmts.append(&mut map.body.stmts);
    map.body.stmts = stmts;
    map.params = params;
    *inputs = new_inputs;
}
