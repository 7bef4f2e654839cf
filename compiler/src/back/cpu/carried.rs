//! The variables of a kernel whose values depend on a value carried from one iteration to the
//! next: the parameters of a `loop`, the operands of a reduction's, scan's or histogram's
//! operator, and every variable computed from them in the loop's body or the operator's. A
//! loop's results are not (after the loop nothing is carried from one of its iterations to the
//! next), unless the loop reads a carried variable from outside (an outer loop's).
//!
//! The CPU backend selects between the branches of a cheap `if` without a branch, by bit masks
//! (`Gen::select_without_branch`), unless its condition is one of these. A mask costs a few
//! operations that a predicted branch does not, and when the condition itself is carried (the
//! running maximum's `if x > best`), they lengthen the chain of dependent operations from one
//! iteration to the next that bounds the loop's speed; a branch on it is usually predictable
//! (the maximum changes rarely). A condition that is not carried (a mask read from memory,
//! `kept[i]`) follows the data, where a branch is mispredicted, and the masks only add work
//! beside the chain.
//!
//! Invariants relied on: every variable is bound once, so one forward pass over the statements
//! (nested bodies before the statement that holds them) sees every dependency.

use ogham_ir::kir::{Function, SegKind, SegOp};
use ogham_ir::traverse::{free_vars_stmt, nested_scopes, soac_lambdas};
use ogham_ir::{Body, Exp, Lambda, VarId};
use std::collections::HashSet;

/// The carried variables of kernel `seg` of `f`.
pub fn of(f: &Function, seg: &SegOp) -> HashSet<VarId> {
    let mut carried = HashSet::new();
    let operators: Vec<&Lambda> = match &seg.kind {
        SegKind::Map => vec![],
        SegKind::Red(reds) => reds.iter().map(|op| &op.lambda).collect(),
        SegKind::Scan(scans) => scans.iter().map(|op| &op.lambda).collect(),
        SegKind::Hist(hists) => hists.iter().map(|op| &op.op).collect(),
    };
    for op in operators {
        carried.extend(op.params.iter().copied());
        spread(f, &op.body, &mut carried);
    }
    spread(f, &seg.body, &mut carried);
    carried
}

/// Adds to `carried` the parameters of the loops and operators in `body` and the variables
/// computed from carried ones.
fn spread(f: &Function, body: &Body, carried: &mut HashSet<VarId>) {
    for stmt in &body.stmts {
        match &stmt.exp {
            Exp::Loop { params, .. } => carried.extend(params.iter().map(|&(p, _)| p)),
            Exp::Soac(soac) => {
                for op in soac_lambdas(soac).into_iter().skip(1) {
                    carried.extend(op.params.iter().copied());
                }
            }
            _ => {}
        }
        for (_, nested) in nested_scopes(&stmt.exp) {
            spread(f, nested.body(), carried);
        }
        if free_vars_stmt(f, stmt).iter().any(|v| carried.contains(v)) {
            carried.extend(stmt.pat.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use ogham_ir::Exp;
    use ogham_ir::kir::HostOp;

    /// A running maximum, whose condition is carried, then a masked sum starting from it, whose
    /// condition (the mask) is not; neither loop's result is carried.
    const KERNEL: &str =
        "entry main [m_0, n_1] (xss_2: [m_0][n_1]f64, keep_3: [n_1]bool) : [m_0]f64 =
  let r_20: [m_0]f64 = segmap thread (gtid_4 < m_0) : f64
    do {
      let row_5: [n_1]f64 = xss_2[gtid_4]
      let max_12: f64 = loop (best_6: f64 = 0.0f64) for i_7 < n_1 do {
        let elem_8: f64 = row_5[i_7]
        let larger_9: bool = elem_8 > best_6
        let new_10: f64 = if larger_9 : f64 then {
          in elem_8
        } else {
          in best_6
        }
        in new_10
      }
      let total_19: f64 = loop (s_13: f64 = max_12) for j_14 < n_1 do {
        let kept_15: bool = keep_3[j_14]
        let next_18: f64 = if kept_15 : f64 then {
          let y_16: f64 = row_5[j_14]
          let added_17: f64 = s_13 + y_16
          in added_17
        } else {
          in s_13
        }
        in next_18
      }
      in total_19
    }
  in r_20
";

    #[test]
    fn loop_parameters_and_what_is_computed_from_them_are_carried() {
        let program = ogham_ir::parse::parse_program(KERNEL).expect("an IR program");
        let f = &program.functions[0];
        let seg = (f.body.stmts.iter())
            .find_map(|s| match &s.exp {
                Exp::Host(HostOp::Seg(seg)) => Some(seg),
                _ => None,
            })
            .expect("a kernel");
        let carried = super::of(f, seg);
        let mut names: Vec<&str> = (carried.iter())
            .map(|v| f.vars[v.0 as usize].name.as_str())
            .collect();
        names.sort_unstable();
        assert_eq!(names, ["added", "best", "larger", "new", "next", "s"]);
    }
}
