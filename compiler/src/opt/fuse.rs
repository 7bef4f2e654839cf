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
//! Not done yet: horizontal fusion, producers with scans or reductions whose map outputs are
//! consumed, producers used elsewhere (kept as extra outputs).
//!
//! # Invariants relied on
//!
//! Every variable is bound once (so moving `P`'s lambda into `C` keeps bindings unique) and the
//! program passed the verifier.

use crate::ir::traverse::{free_vars_stmt, nested_bodies_mut, use_counts};
use crate::ir::{Body, Exp, Function, Lambda, Program, Soac, Stmt, SubExp, VarId};

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
            if fuse_in_body(function, nested, counts) {
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
    false
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
