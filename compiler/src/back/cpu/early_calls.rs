//! The order in which the CPU backend emits a body's statements: each call of a math helper
//! (`exp`, `log`, `pow`, `sin`, ... of a float: the functions Cranelift has no instruction for),
//! together with the scalar statements that compute its operands, as early as those operands
//! allow; every other statement in its own order.
//!
//! Why: the System V calling convention keeps no float register across a call, so every float
//! value live across a helper call is stored to the stack before it and loaded after it. In
//! TWDTW's cell, `dist + w` with `dist` a loop over the bands and `w` the logistic weight,
//! `1 / (1 + exp(..))`, computed after it, kept the band loop's sum live across the `exp` call:
//! the allocator then stored the sum to the stack in every iteration of the band loop. With the
//! call first, only the weight (the call's result) is live across the loop, in a register.
//!
//! What moves: a *slice* per call, the call and, transitively, the statements of the same body
//! that define its operands and are scalar operations that cannot fail and have no effect
//! (arithmetic without integer division by a non-constant, comparisons, conversions, math
//! functions; [`Exp::cannot_fail`]). A slice's statements keep their relative order and each is
//! placed as soon as everything it reads from the body is placed, so nothing moves past a
//! statement that defines one of its operands, and every use still follows its definition. A
//! statement outside every slice keeps its place relative to the others. Nothing moves into or
//! out of a nested body (an `if`'s branch, a loop's body, a lambda): each body is ordered on its
//! own when it is emitted. The lane code of across-point SIMD (`simd/lanes.rs`) emits its bodies
//! in the same order: there a call is made lane by lane, and no vector register survives it.
//!
//! Invariant relied on: the moved statements are pure and cannot fail, so running them earlier
//! computes the same values (bit for bit: the same operations on the same operands) and reports
//! the same errors; [`crate::back::lower::Lower::order`] is the hook through which the shared
//! lowering asks for the order.

use super::helpers::is_inline_float_math;
use super::scalar::is_float;
use ogham_ir::kir::Function;
use ogham_ir::{Body, Exp, SubExp, Type, VarId};
use std::collections::HashMap;

/// The positions of `body`'s statements in the order to emit them, or `None` when that is their
/// own order (no call of a math helper moves).
pub fn order(f: &Function, body: &Body) -> Option<Vec<usize>> {
    let stmts = &body.stmts;
    if !stmts.iter().any(|s| is_helper_call(&s.exp)) {
        return None;
    }
    let defined_at: HashMap<VarId, usize> = stmts
        .iter()
        .enumerate()
        .flat_map(|(k, s)| s.pat.iter().map(move |v| (*v, k)))
        .collect();
    let movable: Vec<bool> = stmts
        .iter()
        .map(|s| {
            s.exp.cannot_fail()
                && !matches!(s.exp, Exp::If { .. })
                && s.pat.iter().all(|v| matches!(f.ty(*v), Type::Prim(_)))
        })
        .collect();
    // The statements of this body each movable statement reads.
    let reads = |k: usize| -> Vec<usize> {
        operands(&stmts[k].exp)
            .filter_map(|se| match se {
                SubExp::Var(v) => defined_at.get(&v).copied(),
                SubExp::Const(_) => None,
            })
            .collect()
    };
    let mut in_slice = vec![false; stmts.len()];
    for (k, s) in stmts.iter().enumerate() {
        if !(movable[k] && is_helper_call(&s.exp)) {
            continue;
        }
        let mut todo = vec![k];
        while let Some(j) = todo.pop() {
            if !in_slice[j] {
                in_slice[j] = true;
                todo.extend(reads(j).into_iter().filter(|&i| movable[i]));
            }
        }
    }
    let slice: Vec<usize> = (0..stmts.len()).filter(|&k| in_slice[k]).collect();
    let slice_reads: HashMap<usize, Vec<usize>> = slice.iter().map(|&k| (k, reads(k))).collect();
    let mut placed = vec![false; stmts.len()];
    let mut out = Vec::with_capacity(stmts.len());
    // Places every slice statement whose operands are all placed (in their order, again until
    // none is left that can be).
    let place_ready = |placed: &mut Vec<bool>, out: &mut Vec<usize>| loop {
        let ready: Vec<usize> = slice
            .iter()
            .copied()
            .filter(|&k| !placed[k] && slice_reads[&k].iter().all(|&i| placed[i]))
            .collect();
        if ready.is_empty() {
            break;
        }
        for k in ready {
            placed[k] = true;
            out.push(k);
        }
    };
    place_ready(&mut placed, &mut out);
    for k in 0..stmts.len() {
        if !placed[k] {
            placed[k] = true;
            out.push(k);
            place_ready(&mut placed, &mut out);
        }
    }
    let moved = out.iter().enumerate().any(|(i, &k)| i != k);
    moved.then_some(out)
}

/// Whether `exp` is a float math function the CPU backend calls a helper for.
fn is_helper_call(exp: &Exp) -> bool {
    matches!(exp, Exp::Math(f, t, _) if is_float(*t) && !is_inline_float_math(*f))
}

/// The operands of a scalar expression (the movable ones: no nested bodies).
fn operands(exp: &Exp) -> impl Iterator<Item = SubExp> + '_ {
    let ops: Vec<SubExp> = match exp {
        Exp::SubExp(a) | Exp::UnOp(_, a) | Exp::Convert(_, a) => vec![*a],
        Exp::BinOp(_, a, b) => vec![*a, *b],
        Exp::Math(_, _, args) => args.clone(),
        _ => Vec::new(),
    };
    ops.into_iter()
}

#[cfg(test)]
mod tests {
    use ogham_ir::kir::Program;
    use ogham_ir::parse::parse_program;
    use ogham_ir::traverse::for_each_kernel_mut;

    /// The order `super::order` gives the body of the program's one kernel.
    fn order_of(text: &str) -> Option<Vec<usize>> {
        let mut program: Program = parse_program(text).expect("kernel IR");
        let mut order = None;
        for_each_kernel_mut(&mut program, &mut |f, seg| {
            order = super::order(f, &seg.body)
        });
        order
    }

    /// TWDTW's cell: the weight's `exp` and the arithmetic of its operand move before the loop
    /// over the bands; the loop, the read and the sum keep their order.
    #[test]
    fn a_call_and_its_operands_move_before_a_loop() {
        let text = "\
entry main [m_0, b_1] (xs_2: [m_0][b_1]f64, ts_3: [m_0]f64, a_4: f64) : [m_0]f64 =
  let r_20: [m_0]f64 = segmap thread (gtid_5 < m_0) : f64
    do {
      let p_6: [b_1]f64 = xs_2[gtid_5]
      let t_7: f64 = ts_3[gtid_5]
      let acc_8: f64 = loop (acc_9: f64 = 0.0f64) for i_10 < b_1 do {
        let x_11: f64 = p_6[i_10]
        let x_12: f64 = x_11 * x_11
        let x_13: f64 = acc_9 + x_12
        in x_13
      }
      let x_14: f64 = t_7 - 50.0f64
      let x_15: f64 = a_4 * x_14
      let x_16: f64 = f64.exp(x_15)
      let x_17: f64 = acc_8 + x_16
      in x_17
    }
  in r_20
";
        assert_eq!(order_of(text), Some(vec![0, 1, 3, 4, 5, 2, 6]));
    }

    /// A call whose operand comes from a statement that can fail (a read) waits for it; one
    /// already as early as it can be leaves the order as it is.
    #[test]
    fn nothing_moves_before_what_it_reads() {
        let text = "\
entry main [m_0] (ts_3: [m_0]f64) : [m_0]f64 =
  let r_20: [m_0]f64 = segmap thread (gtid_5 < m_0) : f64
    do {
      let t_7: f64 = ts_3[gtid_5]
      let x_16: f64 = f64.log(t_7)
      let x_17: f64 = t_7 + x_16
      in x_17
    }
  in r_20
";
        assert_eq!(order_of(text), None);
    }

    /// Integer division by a variable can fail: it stays in place, and so does the call that
    /// reads it.
    #[test]
    fn operands_that_can_fail_stay_in_place() {
        let text = "\
entry main [m_0] (ns_3: [m_0]i64, k_4: i64) : [m_0]f64 =
  let r_20: [m_0]f64 = segmap thread (gtid_5 < m_0) : f64
    do {
      let n_7: i64 = ns_3[gtid_5]
      let acc_8: i64 = loop (acc_9: i64 = 0i64) for i_10 < n_7 do {
        let x_13: i64 = acc_9 + i_10
        in x_13
      }
      let x_14: i64 = n_7 / k_4
      let x_15: f64 = f64.i64(x_14)
      let x_16: f64 = f64.exp(x_15)
      let x_17: f64 = f64.i64(acc_8)
      let x_18: f64 = x_17 + x_16
      in x_18
    }
  in r_20
";
        assert_eq!(order_of(text), None);
    }
}
