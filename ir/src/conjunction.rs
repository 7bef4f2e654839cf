//! The conjuncts of a `&&` chain. Lowering makes `a && b` the statement `if a then {..; in b}
//! else {in false}`, so that `b`'s statements run only when `a` holds; passes that reason about a
//! condition (`narrow`'s guards, the code generators' bounds proofs) read its leaves, the
//! conditions that are not themselves such chains, in evaluation order.

use crate::{Body, Const, Core, Exp, Form, Stmt, SubExp, VarId};

/// The `&&` chain of a boolean variable.
pub struct Conjunction<'s, H: Form = Core> {
    /// The leaves in evaluation order, each with its defining expression (`None` when it is not
    /// defined among the chain's statements, or is a constant branch result).
    pub leaves: Vec<(VarId, Option<&'s Exp<H>>)>,
    /// The variable each `if a then {..} else {false}` of the chain binds, with its `then`
    /// statements and the number of leaves evaluated before them (all true when they run).
    pub ifs: Vec<(VarId, &'s [Stmt<H>], usize)>,
}

impl<'s, H: Form> Conjunction<'s, H> {
    /// The chain `v`, defined in `stmts` (nested chains in the `then` bodies that define them).
    pub fn of(v: VarId, stmts: &'s [Stmt<H>]) -> Self {
        let mut chain = Conjunction {
            leaves: Vec::new(),
            ifs: Vec::new(),
        };
        chain.add(v, stmts);
        chain
    }

    fn add(&mut self, v: VarId, stmts: &'s [Stmt<H>]) {
        let Some(def) = stmts.iter().find(|s| s.pat == [v]) else {
            self.leaves.push((v, None));
            return;
        };
        match &def.exp {
            Exp::If {
                cond: SubExp::Var(a),
                then_body,
                else_body,
                ..
            } if is_false(else_body) => {
                self.add(*a, stmts);
                self.ifs.push((v, &then_body.stmts, self.leaves.len()));
                match then_body.result[..] {
                    [SubExp::Var(b)] => self.add(b, &then_body.stmts),
                    _ => self.leaves.push((v, None)),
                }
            }
            exp => self.leaves.push((v, Some(exp))),
        }
    }
}

/// Whether `body` is `{in false}`.
fn is_false<H: Form>(body: &Body<H>) -> bool {
    body.stmts.is_empty() && body.result == [SubExp::Const(Const::Bool(false))]
}
