//! Laying out the multi-line forms: `let` chains, `if` chains, loops and the signatures of
//! functions (shared by definitions and local functions).
//!
//! A `let` chain is one `let` a line and `in body` on the last one (the `in`s between
//! `let`s are left out, as the grammar allows); blank lines between the `let`s are kept. A
//! single `let` that the source wrote on one line with its body (`let y = f x in g y`) stays
//! on one line when it fits (so formatting formatted text changes nothing).
//! `if c then a else b` stays on one line when it fits, else `else` starts a line and
//! `else if` chains stay flat. A loop's body goes on the next line, indented, when the loop
//! does not fit on one.

use super::doc::Doc;
use super::expr::{INDENT, OP_EXPR, OPEN, Printer};
use crate::syntax::ast::*;
use crate::syntax::print;

impl Printer<'_> {
    /// `let ... let ... in body`.
    pub(super) fn let_chain(&self, e: &Expr) -> Doc {
        let mut parts = Vec::new();
        let mut cur = e;
        loop {
            // The head is made after the separator: the comments before this `let` come before
            // those in its signature or index.
            type Head<'h> = Box<dyn FnOnce() -> Doc + 'h>;
            let (head, value, body): (Head<'_>, &Expr, &Expr) = match &cur.kind {
                ExprKind::Let(p, v, body) => (
                    Box::new(|| Doc::text(format!("let {} =", print::pattern_punned(p)))),
                    v,
                    body,
                ),
                ExprKind::LetFun(f, body) => {
                    let head = || {
                        let sig = Signature {
                            tps: &f.type_params,
                            params: &f.params,
                            ret: f.ret.as_ref(),
                            spaced: true,
                        };
                        let sig = self.signature(&f.name.name, &sig, " =");
                        Doc::concat(vec![Doc::text("let "), sig])
                    };
                    (Box::new(head), &f.body, body)
                }
                ExprKind::LetWith(name, idx, v, body) => {
                    let head = || {
                        Doc::concat(vec![
                            Doc::text(format!("let {}", name.name)),
                            self.index(idx),
                            Doc::text(" ="),
                        ])
                    };
                    (Box::new(head), v, body)
                }
                _ => break,
            };
            if cur.id != e.id {
                parts.push(self.comments.separator(cur.span.start as usize, Doc::Hard));
            }
            let head = head();
            parts.push(self.after_equals(head, value));
            cur = body;
        }
        // One `let` written on one line with its body stays on one line if it fits.
        let one_line = cur.id == first_body_id(e)
            && !self.text[e.span.start as usize..cur.span.start as usize].contains('\n');
        let line = if one_line { Doc::Line } else { Doc::Hard };
        parts.push(self.comments.separator(cur.span.start as usize, line));
        parts.push(Doc::text("in "));
        parts.push(Doc::align(self.open(cur)));
        Doc::group(Doc::concat(parts))
    }

    /// `if c then a else b`, with `else if` chains kept flat.
    pub(super) fn if_chain(&self, e: &Expr) -> Doc {
        let mut parts = Vec::new();
        let mut cur = e;
        while let ExprKind::If(c, t, f) = &cur.kind {
            if cur.id != e.id {
                parts.push(Doc::text("else "));
            }
            parts.push(Doc::group(Doc::concat(vec![
                Doc::text("if "),
                self.open(c),
                Doc::text(" then"),
                Doc::nest(
                    INDENT,
                    Doc::concat(vec![
                        self.comments.separator(t.span.start as usize, Doc::Line),
                        // `if a then (if b then x else y) else z`: no `else` that reads as b's.
                        self.expr(
                            t,
                            if matches!(t.kind, ExprKind::If(..)) {
                                OP_EXPR
                            } else {
                                OPEN
                            },
                        ),
                    ]),
                ),
            ])));
            parts.push(self.comments.separator(f.span.start as usize, Doc::Line));
            cur = f;
        }
        parts.push(Doc::group(Doc::concat(vec![
            Doc::text("else"),
            Doc::nest(INDENT, Doc::concat(vec![Doc::Line, self.open(cur)])),
        ])));
        Doc::group(Doc::concat(parts))
    }

    /// `loop pat = init for ... do body`.
    pub(super) fn loop_(
        &self,
        pat: &Pattern,
        init: Option<&Expr>,
        form: &LoopForm,
        body: &Expr,
    ) -> Doc {
        let mut head = vec![Doc::text(format!("loop {}", print::pattern_punned(pat)))];
        if let Some(init) = init {
            head.push(Doc::text(" = "));
            head.push(self.open(init));
        }
        match form {
            LoopForm::For(i, n) => {
                head.push(Doc::text(format!(" for {} < ", i.name)));
                head.push(self.open(n));
            }
            LoopForm::ForIn(p, xs) => {
                head.push(Doc::text(format!(" for {} in ", print::pattern_punned(p))));
                head.push(self.open(xs));
            }
            LoopForm::Range(i, lo, hi) => {
                head.push(Doc::text(format!(" for {} in ", i.name)));
                head.push(self.expr(lo, 1));
                head.push(Doc::text(".."));
                head.push(self.expr(hi, 1));
            }
            LoopForm::While(c) => {
                head.push(Doc::text(" while "));
                head.push(self.open(c));
            }
        }
        head.push(Doc::text(" do"));
        head.push(Doc::nest(
            INDENT,
            Doc::concat(vec![
                self.comments.separator(body.span.start as usize, Doc::Line),
                self.open(body),
            ]),
        ));
        Doc::group(Doc::concat(head))
    }
}

/// The body of the first `let` of a chain.
fn first_body_id(e: &Expr) -> ExprId {
    match &e.kind {
        ExprKind::Let(_, _, body)
        | ExprKind::LetFun(_, body)
        | ExprKind::LetWith(_, _, _, body) => body.id,
        _ => e.id,
    }
}

/// The parts of a signature after the name, each with where it starts in the source: type and
/// size parameters (`[n][m]` together unless `spaced`), parameters, `: r`.
pub(super) struct Signature<'s> {
    pub tps: &'s [TypeParam],
    pub params: &'s [Pattern],
    pub ret: Option<&'s TypeExp>,
    /// A local function's size parameters must be spaced: `let f [n][m]` would index `f`.
    pub spaced: bool,
}

impl Printer<'_> {
    /// `name [n][m] 't (x: t) : r` and `end` (` =`): the parameters fill lines, continued lines
    /// aligned after the name; the return type may break (a long tuple type). A comment between
    /// parameters stays where it was: each line break of the source with a comment is kept,
    /// the other parameters follow on their line.
    pub(super) fn signature(&self, name: &str, sig: &Signature<'_>, end: &str) -> Doc {
        let mut tparams: Vec<(usize, String)> = Vec::new();
        let mut prev_size = false;
        for tp in sig.tps {
            let text = print::type_param_list(std::slice::from_ref(tp))
                .trim_start()
                .to_string();
            let (TypeParam::Size(ident)
            | TypeParam::Type(ident)
            | TypeParam::Constrained(ident, _)) = tp;
            let size = matches!(tp, TypeParam::Size(_));
            match tparams.last_mut() {
                Some((_, last)) if size && prev_size && !sig.spaced => last.push_str(&text),
                _ => tparams.push((ident.span.start as usize, text)),
            }
            prev_size = size;
        }
        let mut items: Vec<(usize, Doc)> = tparams
            .into_iter()
            .map(|(start, text)| (start, Doc::text(text)))
            .collect();
        for p in sig.params {
            items.push((p.span().start as usize, Doc::text(print::param_punned(p))));
        }
        if let Some(t) = sig.ret {
            let ret = Doc::concat(vec![Doc::text(": "), self.type_exp(t)]);
            items.push((t.span().start as usize, ret));
        }
        let Some(last) = items.pop() else {
            return Doc::text(format!("{name}{end}"));
        };
        // The end goes with the last item, so that a line is broken where it would not fit.
        items.push((last.0, Doc::concat(vec![last.1, Doc::text(end)])));
        let mut docs = Vec::new();
        let mut seps = Vec::new();
        for (i, (start, item)) in items.into_iter().enumerate() {
            if i == 0 {
                docs.push(Doc::concat(vec![self.comments.before(start), item]));
            } else {
                seps.push(self.comments.separator(start, Doc::Line));
                docs.push(item);
            }
        }
        // Without a comment before it, an item stays on the line of the one before.
        let params =
            Doc::fill_or_separated(
                docs,
                seps,
                |sep| {
                    if sep.is_line() { Doc::text(" ") } else { sep }
                },
            );
        Doc::concat(vec![Doc::text(format!("{name} ")), Doc::align(params)])
    }
}
