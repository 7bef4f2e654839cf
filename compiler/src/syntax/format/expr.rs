//! Laying out expressions: the AST to a [`Doc`] with minimal parentheses.
//!
//! Every expression has a binding level (open expressions and `with`/`:`/`:>` 0, `|> <|` 1, the
//! operator tiers 2–9, unary 10, application and `trace` 11, postfix 12, atoms 13, as in
//! `grammar.lalrpop`), and every position asks for a minimum level; an expression below it is
//! parenthesised. Since the grammar is unambiguous, the text parses back to the same tree.
//! Literals, strings and names are copied from the source text, so `0xff` stays `0xff`.
//!
//! Invariant: children are printed in source order, each taking the comments before it (see
//! `comments`), so comments keep their order.

use super::comments::Comments;
use super::doc::Doc;
use crate::syntax::ast::*;
use crate::syntax::print;

/// Indentation of a continued line.
pub const INDENT: usize = 2;

/// Levels of the grammar's expression nonterminals.
pub const OPEN: u8 = 0;
pub const OP_EXPR: u8 = 1;
const UNARY: u8 = 10;
const APP: u8 = 11;
const POSTFIX: u8 = 12;
const ATOM: u8 = 13;

/// The binding level of a binary operator.
fn op_level(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        PipeRight | PipeLeft => 1,
        Or => 2,
        And => 3,
        Eq | Ne | Lt | Le | Gt | Ge => 4,
        BitOr | BitXor | BitAnd => 5,
        Shl | Shr => 6,
        Add | Sub => 7,
        Mul | Div | Mod | Quot | Rem => 8,
        Pow => 9,
    }
}

fn level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::BinOp(op, ..) => op_level(*op),
        ExprKind::UnOp(..) => UNARY,
        ExprKind::Apply(..) | ExprKind::Trace(..) => APP,
        ExprKind::Field(..) | ExprKind::Index(..) => POSTFIX,
        ExprKind::Lit(_)
        | ExprKind::Var(_)
        | ExprKind::Tuple(_)
        | ExprKind::Record(_)
        | ExprKind::ArrayLit(_)
        | ExprKind::OpSection(_)
        | ExprKind::LeftSection(..)
        | ExprKind::RightSection(..) => ATOM,
        _ => OPEN,
    }
}

/// Whether an operand needs parentheses under `op`: `left` tells which side it is on.
fn operand_needs_parens(op: BinOp, child: &Expr, left: bool) -> bool {
    let (p, l) = (op_level(op), level(child));
    let child_op = match child.kind {
        ExprKind::BinOp(o, ..) => Some(o),
        _ => None,
    };
    match (op, left) {
        (BinOp::Pow, true) => l < UNARY,
        (BinOp::Pow, false) => l < p,
        (BinOp::PipeLeft, true) => l <= p,
        (BinOp::PipeLeft, false) => l < p || child_op == Some(BinOp::PipeRight),
        (_, true) => l < p,
        (_, false) => l <= p,
    }
}

/// Parentheses the grammar does not need but a reader does, around an operand of `parent`:
/// `&&` under `||`, a comparison under a comparison, bitwise and shift operators mixed with
/// other operators (their levels differ from C's), a division or remainder under another
/// multiplicative operator (`(a / h) * b`, `(i % n) * m`, not `a / h * b`), and a negation
/// under `**` (`(-x) ** 2`).
fn for_clarity(parent: BinOp, child: &Expr) -> bool {
    let bitwise = |op: BinOp| matches!(op_level(op), 5 | 6);
    let dividing = |op: BinOp| matches!(op, BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem);
    match child.kind {
        ExprKind::BinOp(c, ..) => {
            (parent == BinOp::Or && c == BinOp::And)
                || (op_level(parent) == 4 && op_level(c) == 4)
                || ((bitwise(parent) || bitwise(c)) && c != parent)
                || (op_level(parent) == 8 && dividing(c) && c != parent)
        }
        ExprKind::UnOp(..) => parent == BinOp::Pow,
        _ => false,
    }
}

/// Prints expressions of one file.
pub struct Printer<'a> {
    pub text: &'a str,
    pub comments: Comments<'a>,
}

fn text(s: impl Into<String>) -> Doc {
    Doc::text(s)
}

impl Printer<'_> {
    /// `e` where the grammar wants level `min` at least, after the comments before it.
    pub fn expr(&self, e: &Expr, min: u8) -> Doc {
        let comments = self.comments.before(e.span.start as usize);
        let body = self.kind(e);
        let body = if level(e) < min {
            Doc::concat(vec![text("("), Doc::align(body), text(")")])
        } else {
            body
        };
        Doc::concat(vec![comments, body])
    }

    /// `e` in a position for any expression.
    pub fn open(&self, e: &Expr) -> Doc {
        self.expr(e, OPEN)
    }

    fn source(&self, span: ogham_ir::source::Span) -> Doc {
        text(&self.text[span.start as usize..span.end as usize])
    }

    fn kind(&self, e: &Expr) -> Doc {
        match &e.kind {
            ExprKind::Lit(_) => self.source(e.span),
            ExprKind::Var(q) => text(q.to_string()),
            ExprKind::Tuple(es) => self.exprs("(", es, ")"),
            ExprKind::ArrayLit(es) => self.exprs("[", es, "]"),
            ExprKind::Record(fs) => self.record(fs),
            ExprKind::Field(r, f) => {
                Doc::concat(vec![self.receiver(r), text(format!(".{}", f.name))])
            }
            ExprKind::Index(r, idx) => Doc::concat(vec![self.receiver(r), self.index(idx)]),
            ExprKind::Apply(f, args) => self.apply(f, args),
            ExprKind::BinOp(..) => self.binop_chain(e),
            ExprKind::UnOp(op, a) => {
                let sign = if *op == UnOp::Neg { "-" } else { "!" };
                // `- -x` must not become the comment `--x`; `!(f x)` reads better than `!f x`,
                // which looks like `(!f) x`.
                let min = if matches!(a.kind, ExprKind::UnOp(UnOp::Neg, _))
                    || matches!(a.kind, ExprKind::Apply(..) | ExprKind::Trace(..))
                {
                    ATOM
                } else {
                    UNARY
                };
                Doc::concat(vec![text(sign), self.expr(a, min)])
            }
            ExprKind::OpSection(op) => text(format!("({})", op.symbol())),
            ExprKind::LeftSection(op, a) => {
                let min = match op {
                    BinOp::Pow => UNARY,
                    BinOp::PipeLeft => op_level(*op) + 1,
                    _ => op_level(*op),
                };
                Doc::concat(vec![
                    text("("),
                    self.expr(a, min),
                    text(format!(" {})", op.symbol())),
                ])
            }
            ExprKind::RightSection(op, a) => Doc::concat(vec![
                text(format!("({} ", op.symbol())),
                self.expr(a, OP_EXPR),
                text(")"),
            ]),
            ExprKind::Lambda(ps, ret, body) => self.lambda(ps, ret.as_ref(), body),
            ExprKind::Let(..) | ExprKind::LetFun(..) | ExprKind::LetWith(..) => self.let_chain(e),
            ExprKind::If(..) => self.if_chain(e),
            ExprKind::Assert(c, message, body) => {
                // `assert cond "message"`, the message under the condition if it does not fit.
                let head = Doc::concat(vec![
                    text("assert "),
                    Doc::align(Doc::concat(vec![
                        self.expr(c, POSTFIX),
                        Doc::Line,
                        text(format!("\"{message}\"")),
                    ])),
                ]);
                Doc::group(Doc::concat(vec![
                    Doc::group(head),
                    self.comments.separator(body.span.start as usize, Doc::Line),
                    self.open(body),
                ]))
            }
            ExprKind::Trace(label, a) => Doc::concat(vec![
                text(format!("trace \"{label}\" ")),
                self.expr(a, POSTFIX),
            ]),
            ExprKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.loop_(pat, init.as_deref(), form, body),
            ExprKind::Update(a, idx, v) => {
                let head =
                    Doc::concat(vec![self.expr(a, OP_EXPR), text(" with "), self.index(idx)]);
                self.rhs(head, v)
            }
            ExprKind::RecordUpdate(r, path, v) => {
                let names: Vec<&str> = path.iter().map(|f| f.name.as_str()).collect();
                let head = Doc::concat(vec![
                    self.expr(r, OP_EXPR),
                    text(format!(" with {}", names.join("."))),
                ]);
                self.rhs(head, v)
            }
            ExprKind::Ascribe(a, t) => {
                Doc::concat(vec![self.expr(a, OP_EXPR), text(" : "), self.type_exp(t)])
            }
            ExprKind::Coerce(a, t) => {
                Doc::concat(vec![self.expr(a, OP_EXPR), text(" :> "), self.type_exp(t)])
            }
        }
    }

    /// `head = value`, the value on the next line (indented) when it does not fit.
    pub fn rhs(&self, head: Doc, value: &Expr) -> Doc {
        self.after_equals(Doc::concat(vec![head, text(" =")]), value)
    }

    /// `head` (which ends with its `=`), then the value: on the next line, indented, when it
    /// does not fit.
    pub fn after_equals(&self, head: Doc, value: &Expr) -> Doc {
        Doc::group(Doc::concat(vec![
            head,
            Doc::nest(
                INDENT,
                Doc::concat(vec![
                    self.comments
                        .separator(value.span.start as usize, Doc::Line),
                    self.open(value),
                ]),
            ),
        ]))
    }

    /// The expression before `.x` or `[i]`; a literal is parenthesised (`(1).0`, not `1.0`).
    fn receiver(&self, r: &Expr) -> Doc {
        let min = if matches!(r.kind, ExprKind::Lit(_)) {
            ATOM + 1
        } else {
            POSTFIX
        };
        self.expr(r, min)
    }

    /// `(a, b)`, `[a, b]`, `{x = a, y}`, `{a: t, b: u}`: on one line, or one item a line
    /// after the opener. Each item is where it starts and how to print it (called in order).
    pub fn list<F: FnOnce() -> Doc>(
        &self,
        open: &str,
        items: impl IntoIterator<Item = (usize, F)>,
        close: &str,
    ) -> Doc {
        let mut parts = Vec::new();
        for (i, (start, item)) in items.into_iter().enumerate() {
            if i > 0 {
                parts.push(text(","));
                parts.push(self.comments.separator(start, Doc::Line));
            } else {
                parts.push(self.comments.before(start));
            }
            parts.push(item());
        }
        Doc::group(Doc::concat(vec![
            text(open),
            Doc::align(Doc::concat(parts)),
            text(close),
        ]))
    }

    /// `(a, b, c)` filling its lines, items aligned after the opener: for short items
    /// (without comments between them, which need [`Printer::list`]). Each item is where it
    /// starts and how to print it.
    fn filled<F: FnOnce() -> Doc>(&self, open: &str, items: Vec<(usize, F)>, close: &str) -> Doc {
        let n = items.len();
        let items = items.into_iter().enumerate().map(|(i, (_, item))| {
            let comma = if i + 1 < n { "," } else { "" };
            Doc::concat(vec![item(), text(comma)])
        });
        Doc::concat(vec![
            text(open),
            Doc::align(Doc::Fill(items.collect())),
            text(close),
        ])
    }

    /// A tuple or an array. Items that are numbers, names, fields or indexings (`xs[i]`,
    /// `-x`) fill the lines; anything longer goes one a line when the whole does not fit.
    fn exprs(&self, open: &str, es: &[Expr], close: &str) -> Doc {
        fn short(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::UnOp(_, a) | ExprKind::Field(a, _) => short(a),
                ExprKind::Index(a, idx) => {
                    short(a)
                        && idx
                            .iter()
                            .all(|i| matches!(i, IndexArg::Index(e) if short(e)))
                }
                kind => matches!(kind, ExprKind::Lit(_) | ExprKind::Var(_)),
            }
        }
        let end = es.last().map_or(0, |e| e.span.end as usize);
        let items: Vec<_> = es
            .iter()
            .map(|e| (e.span.start as usize, || self.open(e)))
            .collect();
        if es.len() > 1 && es.iter().all(short) && !self.comments.any_before(end) {
            return self.filled(open, items, close);
        }
        self.list(open, items, close)
    }

    /// `{x = a, y}`: a field whose value is the variable of its name is written alone.
    fn record(&self, fs: &[(Ident, Expr)]) -> Doc {
        let items = fs.iter().map(|(f, e)| {
            let field = move || match &e.kind {
                ExprKind::Var(q) if q.qualifier.is_none() && q.name == f.name => self.open(e),
                _ => Doc::concat(vec![text(format!("{} = ", f.name)), self.open(e)]),
            };
            (f.span.start as usize, field)
        });
        self.list("{", items, "}")
    }

    /// A type: a record type one field a line when it does not fit (it may hold comments), a
    /// tuple type filling its lines (one item a line if comments are inside), array types of
    /// those after their sizes (`[n](f32, i64)`); anything else on one line.
    pub fn type_exp(&self, t: &TypeExp) -> Doc {
        match t {
            TypeExp::Record(fs, _) => {
                let items = fs.iter().map(|(f, t)| {
                    let field =
                        move || Doc::concat(vec![text(format!("{}: ", f.name)), self.type_exp(t)]);
                    (f.span.start as usize, field)
                });
                self.list("{", items, "}")
            }
            TypeExp::Tuple(ts, span) if !ts.is_empty() => {
                let items: Vec<_> = ts
                    .iter()
                    .map(|t| (t.span().start as usize, || self.type_exp(t)))
                    .collect();
                if self.comments.any_before(span.end as usize) {
                    self.list("(", items, ")")
                } else {
                    self.filled("(", items, ")")
                }
            }
            TypeExp::Array(..) => {
                let mut sizes = String::new();
                let mut elem = t;
                while let TypeExp::Array(size, inner, _) = elem {
                    sizes.push_str(&print::size_exp(size));
                    elem = inner;
                }
                match elem {
                    TypeExp::Tuple(..) | TypeExp::Record(..) => {
                        Doc::concat(vec![text(sizes), self.type_exp(elem)])
                    }
                    _ => text(print::type_exp(t)),
                }
            }
            t => text(print::type_exp(t)),
        }
    }

    /// `[i, j:k, :n:s]`, on one line.
    pub fn index(&self, idx: &[IndexArg]) -> Doc {
        let mut parts = vec![text("[")];
        for (i, a) in idx.iter().enumerate() {
            if i > 0 {
                parts.push(text(", "));
            }
            match a {
                IndexArg::Index(e) => parts.push(self.expr(e, OP_EXPR)),
                IndexArg::Slice {
                    start, end, stride, ..
                } => {
                    let part = |e: &Option<Expr>| match e {
                        Some(e) => self.expr(e, OP_EXPR),
                        None => Doc::concat(Vec::new()),
                    };
                    parts.extend([part(start), text(":"), part(end)]);
                    if stride.is_some() {
                        parts.extend([text(":"), part(stride)]);
                    }
                }
            }
        }
        parts.push(text("]"));
        Doc::concat(parts)
    }

    /// `f a b`: the arguments fill the lines, aligned under the first; an argument that takes
    /// several lines ends its line. (Comments between arguments: one argument a line.)
    fn apply(&self, f: &Expr, args: &[Expr]) -> Doc {
        let head = self.expr(f, POSTFIX);
        let mut docs = Vec::new();
        let mut seps = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                seps.push(self.comments.separator(a.span.start as usize, Doc::Line));
            }
            docs.push(self.expr(a, POSTFIX));
        }
        let args = Doc::fill_or_separated(docs, seps, |sep| sep);
        Doc::group(Doc::concat(vec![head, text(" "), Doc::align(args)]))
    }

    /// A chain of operators of one level, `a + b - c`: broken before each operator, the
    /// operands aligned.
    fn binop_chain(&self, e: &Expr) -> Doc {
        // The left spine of operators of the same level, associating to the left.
        let mut rights = Vec::new();
        let mut first = e;
        while let ExprKind::BinOp(op, a, b) = &first.kind {
            rights.push((*op, &**b));
            let same = matches!(a.kind, ExprKind::BinOp(o, ..) if op_level(o) == op_level(*op))
                && !operand_needs_parens(*op, a, true)
                && !for_clarity(*op, a)
                && !matches!(op, BinOp::Pow | BinOp::PipeLeft);
            if !same {
                first = a;
                break;
            }
            first = a;
        }
        rights.reverse();
        let (first_op, _) = rights[0];
        let parens = |op, e, left| operand_needs_parens(op, e, left) || for_clarity(op, e);
        let min_first = if parens(first_op, first, true) {
            ATOM
        } else {
            OPEN
        };
        let mut parts = vec![self.expr(first, min_first)];
        for (op, b) in rights {
            let min = if parens(op, b, false) { ATOM } else { OPEN };
            parts.push(self.comments.separator(b.span.start as usize, Doc::Line));
            parts.push(text(format!("{} ", op.symbol())));
            parts.push(self.expr(b, min));
        }
        Doc::group(Doc::align(Doc::concat(parts)))
    }

    fn lambda(&self, ps: &[Pattern], ret: Option<&TypeExp>, body: &Expr) -> Doc {
        let params: Vec<String> = ps.iter().map(print::param_punned).collect();
        let mut head = format!("\\{}", params.join(" "));
        if let Some(t) = ret {
            head.push_str(&format!(" : {}", print::type_operand(t)));
        }
        head.push_str(" ->");
        if matches!(
            body.kind,
            ExprKind::Let(..) | ExprKind::LetFun(..) | ExprKind::LetWith(..) | ExprKind::If(..)
        ) {
            // `\x -> let ...`: the body aligned after the arrow.
            return Doc::concat(vec![text(head), text(" "), Doc::align(self.open(body))]);
        }
        Doc::group(Doc::concat(vec![
            text(head),
            Doc::nest(INDENT, Doc::concat(vec![Doc::Line, self.open(body)])),
        ]))
    }
}
