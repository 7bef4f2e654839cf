//! Interchange of a `for` loop with the enclosing maps: `map (\x -> loop ...)` becomes
//! `loop (map ...)`, the loop on the host with its parameters expanded over the nest and its
//! body distributed.
//!
//! Invariants: only loops with a bound uniform over the nest and regular parameters are
//! interchanged ([`Flattener::is_parallel`]); the loop's parameters are fresh variables.

use super::nest::{Irregular, Nest};
use super::{Flattener, stmt, updates_in_place, vars};
use ogham_ir::kir::HostStmt;
use ogham_ir::source::Span;
use ogham_ir::{Body, Exp, LoopForm, Stmt, SubExp, VarId};

impl Flattener<'_> {
    /// `map (\x -> loop (p = init) for i < b do body) xs` as
    /// `loop (ps = inits) for i < b do (map (\x p -> body) xs ps)`, the loop on the host and its
    /// body distributed over the nest.
    pub(super) fn interchange(
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
}
