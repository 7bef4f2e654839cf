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
            let (head, value, body) = match &cur.kind {
                ExprKind::Let(p, v, body) => (
                    Doc::text(format!("let {}", print::pattern_punned(p))),
                    &**v,
                    &**body,
                ),
                ExprKind::LetFun(f, body) => {
                    let sig = signature(
                        &f.name.name,
                        &f.type_params,
                        &f.params,
                        f.ret.as_ref(),
                        true,
                    );
                    (Doc::concat(vec![Doc::text("let "), sig]), &f.body, &**body)
                }
                ExprKind::LetWith(name, idx, v, body) => {
                    let head = Doc::concat(vec![
                        Doc::text(format!("let {}", name.name)),
                        self.index(idx),
                    ]);
                    (head, &**v, &**body)
                }
                _ => break,
            };
            if cur.id != e.id {
                parts.push(self.comments.separator(cur.span.start as usize, Doc::Hard));
            }
            parts.push(self.rhs(head, value));
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

/// `name [n][m] 't (x: t) : r`: the parameters filled into lines, continued lines aligned after
/// the name. Size parameters are written together (`[n][m]`) unless `spaced` (a local
/// function's must be spaced: `let f [n][m]` would index `f`).
pub(super) fn signature(
    name: &str,
    tps: &[TypeParam],
    params: &[Pattern],
    ret: Option<&TypeExp>,
    spaced: bool,
) -> Doc {
    let mut items: Vec<String> = Vec::new();
    let mut prev_size = false;
    for tp in tps {
        let text = print::type_param_list(std::slice::from_ref(tp))
            .trim_start()
            .to_string();
        let size = matches!(tp, TypeParam::Size(_));
        match items.last_mut() {
            Some(last) if size && prev_size && !spaced => last.push_str(&text),
            _ => items.push(text),
        }
        prev_size = size;
    }
    items.extend(params.iter().map(print::param_punned));
    if let Some(t) = ret {
        items.push(format!(": {}", print::type_exp(t)));
    }
    if items.is_empty() {
        return Doc::text(name);
    }
    let items = items.into_iter().map(Doc::text).collect();
    Doc::concat(vec![
        Doc::text(format!("{name} ")),
        Doc::align(Doc::Fill(items)),
    ])
}
