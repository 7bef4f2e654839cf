//! Hints for a space before `[`: `r [i]` is an application of `r` to the one-element array
//! `[i]`, not indexing (`r[i]`, where the `[` touches `r`; the lexer tells the two apart).
//!
//! Three places get a help: an argument `[i]` set apart from the array argument before it
//! (`f r [i]`, [`Checker::adjacency_hint`]); a callee that is not a function applied to `[i]`
//! (`r [i]` with `r: []f32`, [`Checker::spaced_index`]); and a callee of still unknown type
//! (a lambda's parameter in `map (\r -> r [0]) rs`), which the application makes a function:
//! the type error then surfaces elsewhere (at `rs`), so such applications are recorded
//! ([`Checker::note_spaced_call`]) and the first type error of the definition gets a note and
//! a label on `r [0]` ([`Checker::explain_spaced_calls`]). Only one-element array literals
//! count, and only when the source text shows a gap between callee and `[`.

use super::Checker;
use super::unify::Ty;
use crate::syntax::ast::{Expr, ExprKind};
use ogham_ir::diag::Label;
use ogham_ir::source::Span;

/// Type errors a spaced application can cause (mismatches, not-a-function, too many arguments).
const TYPE_ERRORS: [&str; 3] = ["E0301", "E0308", "E0305"];

impl Checker<'_> {
    /// The help for `f r [i]` where `f r[i]` was meant: an argument that is a one-element array
    /// literal set apart from the argument before it (`[` right after an expression indexes
    /// it; after a space it starts an array, another argument).
    pub(super) fn adjacency_hint(&self, callee_span: Span, args: &[(&Expr, Ty)]) -> Option<String> {
        let text = &self.sources.get(callee_span.file).text;
        let source = |span: Span| text.get(span.start as usize..span.end as usize);
        args.windows(2).find_map(|pair| {
            let (array, index) = (pair[0].0, pair[1].0);
            let ExprKind::ArrayLit(elems) = &index.kind else {
                return None;
            };
            if elems.len() != 1 || array.span.end >= index.span.start {
                return None;
            }
            let (f, a, i) = (
                source(callee_span)?,
                source(array.span)?,
                source(elems[0].span)?,
            );
            Some(format!(
                "`{a} [{i}]` passes the array `[{i}]` as another argument; to index `{a}`, write \
                 the `[` right after it: `{f} {a}[{i}]` (or `{f} ({a}[{i}])`)"
            ))
        })
    }

    /// For `r [i]` (`callee_span` then `arg`, with a gap): the help saying it applies `r` to an
    /// array and how to index instead.
    pub(super) fn spaced_index(&self, callee_span: Span, arg: &Expr) -> Option<String> {
        let ExprKind::ArrayLit(elems) = &arg.kind else {
            return None;
        };
        if elems.len() != 1
            || callee_span.file != arg.span.file
            || callee_span.end >= arg.span.start
        {
            return None;
        }
        let text = &self.sources.get(callee_span.file).text;
        let source = |span: Span| text.get(span.start as usize..span.end as usize);
        let (r, i) = (source(callee_span)?, source(elems[0].span)?);
        Some(format!(
            "`{r} [{i}]` applies `{r}` to the array `[{i}]`: did you mean `{r}[{i}]`? indexing \
             must not have a space before `[`"
        ))
    }

    /// Records `r [i]` where `r` has a type not known yet, for [`Self::explain_spaced_calls`].
    pub(super) fn note_spaced_call(&mut self, callee_span: Span, arg: &Expr) {
        if let Some(help) = self.spaced_index(callee_span, arg) {
            let whole = Span {
                end: arg.span.end,
                ..callee_span
            };
            self.spaced_calls.push((whole, help));
        }
    }

    /// Adds the recorded spaced applications of the definition just checked to its first type
    /// error after `errors_before` (a note and a label), and forgets them.
    pub(super) fn explain_spaced_calls(&mut self, errors_before: usize) {
        let calls = std::mem::take(&mut self.spaced_calls);
        let Some(d) = self.diags[errors_before..]
            .iter_mut()
            .find(|d| TYPE_ERRORS.contains(&d.code))
        else {
            return;
        };
        for (span, help) in calls {
            d.secondary.push(Label {
                span,
                message: "applied to an array here, so taken to be a function".to_string(),
            });
            d.notes.push(help);
        }
    }
}
