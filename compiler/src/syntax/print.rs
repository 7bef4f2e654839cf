//! Printing an AST back as Ogham source text.
//!
//! The output parses back to the same AST (modulo spans and ids): every compound expression is
//! parenthesised, so the printed text also shows how a program was grouped, which makes it a
//! compact form for tests (`a + b * c` prints as `a + (b * c)`). Each declaration is printed on
//! one line (after its doc comment and attributes).

use crate::syntax::ast::*;
use std::fmt::Write;

/// A whole module, one declaration per line.
pub fn module(decls: &[Decl]) -> String {
    let mut out = String::new();
    for d in decls {
        decl(&mut out, d);
        out.push('\n');
    }
    out
}

/// An expression at top level (no parentheses around it).
pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    expr_into(&mut out, e);
    out
}

/// A type at top level.
pub fn type_exp(t: &TypeExp) -> String {
    let mut out = String::new();
    type_into(&mut out, t);
    out
}

/// A pattern at top level.
pub fn pattern(p: &Pattern) -> String {
    let mut out = String::new();
    pattern_into(&mut out, p, false);
    out
}

/// A pattern at top level as written by hand: a record field bound to its own name is written
/// alone (`{x, y = b}`, not `{x = x, y = b}`; the same pattern to the parser).
pub fn pattern_punned(p: &Pattern) -> String {
    let mut out = String::new();
    pattern_into(&mut out, p, true);
    out
}

/// A parameter of a function or lambda: a pattern atom (`x`, `(x: t)`, `(a, b)`), record
/// fields punned as by [`pattern_punned`].
pub fn param_punned(p: &Pattern) -> String {
    let mut out = String::new();
    pattern_atom(&mut out, p, true);
    out
}

/// A type with `->` parenthesised (the return type of a lambda).
pub fn type_operand(t: &TypeExp) -> String {
    let mut out = String::new();
    type_app(&mut out, t);
    out
}

/// The type and size parameters of a definition or alias, each after a space: ` [n] ('t: num)`.
pub fn type_param_list(params: &[TypeParam]) -> String {
    let mut out = String::new();
    type_params(&mut out, params);
    out
}

fn doc_comment(out: &mut String, doc: &Option<String>) {
    if let Some(doc) = doc {
        for (i, line) in doc.lines().enumerate() {
            let marker = if i == 0 { "-- |" } else { "--" };
            let _ = writeln!(out, "{marker} {line}");
        }
    }
}

fn decl(out: &mut String, d: &Decl) {
    match d {
        Decl::Def(def) => {
            doc_comment(out, &def.doc);
            for a in &def.attrs {
                let _ = write!(out, "#[{}] ", a.name);
            }
            out.push_str(if def.entry { "entry " } else { "def " });
            out.push_str(&def.name.name);
            signature(out, &def.type_params, &def.params, def.ret.as_ref());
            out.push_str(" = ");
            expr_into(out, &def.body);
        }
        Decl::TypeAlias(t) => {
            doc_comment(out, &t.doc);
            let _ = write!(out, "type {}", t.name.name);
            type_params(out, &t.params);
            out.push_str(" = ");
            type_into(out, &t.body);
        }
        Decl::Import(i) => {
            let _ = write!(out, "import \"{}\"", i.path);
        }
    }
}

fn type_params(out: &mut String, params: &[TypeParam]) {
    for p in params {
        match p {
            TypeParam::Size(n) => {
                let _ = write!(out, " [{}]", n.name);
            }
            TypeParam::Type(t) => {
                let _ = write!(out, " '{}", t.name);
            }
            TypeParam::Constrained(t, class) => {
                let _ = write!(out, " ('{}: {})", t.name, class.name);
            }
        }
    }
}

fn signature(out: &mut String, tps: &[TypeParam], params: &[Pattern], ret: Option<&TypeExp>) {
    type_params(out, tps);
    for p in params {
        out.push(' ');
        pattern_atom(out, p, false);
    }
    if let Some(t) = ret {
        out.push_str(" : ");
        type_into(out, t);
    }
}

/// The size of an array type, with its brackets: `[n]`, `[3]`, `[]`.
pub fn size_exp(s: &SizeExp) -> String {
    let mut out = String::new();
    size(&mut out, s);
    out
}

fn size(out: &mut String, s: &SizeExp) {
    match s {
        SizeExp::Named(n) => {
            let _ = write!(out, "[{}]", n.name);
        }
        SizeExp::Const(n, _) => {
            let _ = write!(out, "[{n}]");
        }
        SizeExp::Any(_) => out.push_str("[]"),
    }
}

fn type_into(out: &mut String, t: &TypeExp) {
    match t {
        TypeExp::Arrow(a, b, _) => {
            type_app(out, a);
            out.push_str(" -> ");
            type_into(out, b);
        }
        t => type_app(out, t),
    }
}

/// A type where `->` needs parentheses.
fn type_app(out: &mut String, t: &TypeExp) {
    match t {
        TypeExp::Prim(p, _) => out.push_str(p.name()),
        TypeExp::Array(s, elem, _) => {
            size(out, s);
            type_app(out, elem);
        }
        TypeExp::Unique(t, _) => {
            out.push('*');
            type_app(out, t);
        }
        TypeExp::Name(n, args, _) => {
            out.push_str(&n.name);
            for a in args {
                out.push(' ');
                match a {
                    TypeArg::Size(s) => size(out, s),
                    TypeArg::Type(t) => type_atom(out, t),
                }
            }
        }
        TypeExp::Tuple(ts, _) => {
            out.push('(');
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                type_into(out, t);
            }
            out.push(')');
        }
        TypeExp::Record(fs, _) => {
            out.push('{');
            for (i, (n, t)) in fs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}: ", n.name);
                type_into(out, t);
            }
            out.push('}');
        }
        TypeExp::Arrow(..) => {
            out.push('(');
            type_into(out, t);
            out.push(')');
        }
    }
}

/// A type argument: a name without arguments, a tuple or a record; anything else parenthesised.
fn type_atom(out: &mut String, t: &TypeExp) {
    match t {
        TypeExp::Prim(..) | TypeExp::Tuple(..) | TypeExp::Record(..) => type_app(out, t),
        TypeExp::Name(_, args, _) if args.is_empty() => type_app(out, t),
        _ => {
            out.push('(');
            type_into(out, t);
            out.push(')');
        }
    }
}

/// `pun`: write a record field bound to its own name alone.
fn pattern_into(out: &mut String, p: &Pattern, pun: bool) {
    match p {
        Pattern::Ascribed(p, t, _) => {
            pattern_atom(out, p, pun);
            out.push_str(": ");
            type_into(out, t);
        }
        p => pattern_atom(out, p, pun),
    }
}

fn pattern_atom(out: &mut String, p: &Pattern, pun: bool) {
    match p {
        Pattern::Var(i) => out.push_str(&i.name),
        Pattern::Wildcard(_) => out.push('_'),
        Pattern::Tuple(ps, _) => {
            out.push('(');
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pattern_into(out, p, pun);
            }
            out.push(')');
        }
        Pattern::Record(fs, _) => {
            out.push('{');
            for (i, (n, p)) in fs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&n.name);
                if !(pun && matches!(p, Pattern::Var(v) if v.name == n.name)) {
                    out.push_str(" = ");
                    pattern_into(out, p, pun);
                }
            }
            out.push('}');
        }
        Pattern::Ascribed(..) => {
            out.push('(');
            pattern_into(out, p, pun);
            out.push(')');
        }
    }
}

fn literal(out: &mut String, lit: &Literal) {
    match lit.value {
        LitValue::Int(n) => {
            let _ = write!(out, "{n}");
        }
        // `{:?}` always writes a float with a `.` or an exponent, as the lexer wants it.
        LitValue::Float(x) if x.is_finite() => {
            let _ = write!(out, "{x:?}");
        }
        LitValue::Float(x) if x.is_nan() => out.push_str("nan"),
        LitValue::Float(_) | LitValue::Inf => out.push_str("inf"),
        LitValue::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        LitValue::Nan => out.push_str("nan"),
    }
    if let Some(s) = lit.suffix {
        out.push_str(s.name());
    }
}

fn comma_exprs<'a>(out: &mut String, es: impl IntoIterator<Item = &'a Expr>) {
    for (i, e) in es.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        expr_into(out, e);
    }
}

fn index_args(out: &mut String, args: &[IndexArg]) {
    out.push('[');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match a {
            IndexArg::Index(e) => atom(out, e),
            IndexArg::Slice {
                start, end, stride, ..
            } => {
                let part = |out: &mut String, e: &Option<Expr>| {
                    if let Some(e) = e {
                        atom(out, e);
                    }
                };
                part(out, start);
                out.push(':');
                part(out, end);
                if stride.is_some() {
                    out.push(':');
                    part(out, stride);
                }
            }
        }
    }
    out.push(']');
}

/// Whether an expression prints without surrounding parentheses as an operand.
fn is_atom(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Lit(_)
            | ExprKind::Var(_)
            | ExprKind::Tuple(_)
            | ExprKind::Record(_)
            | ExprKind::ArrayLit(_)
            | ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::OpSection(_)
            | ExprKind::LeftSection(..)
            | ExprKind::RightSection(..)
    )
}

/// An operand: atoms as they are, anything else in parentheses.
fn atom(out: &mut String, e: &Expr) {
    if is_atom(e) {
        expr_into(out, e);
    } else {
        out.push('(');
        expr_into(out, e);
        out.push(')');
    }
}

/// `{a = x, b = y}`.
fn record_into(out: &mut String, fs: &[(Ident, Expr)]) {
    out.push('{');
    for (i, (n, e)) in fs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{} = ", n.name);
        expr_into(out, e);
    }
    out.push('}');
}

/// `\p q : t -> body`.
fn lambda_into(out: &mut String, params: &[Pattern], ret: Option<&TypeExp>, body: &Expr) {
    out.push('\\');
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        pattern_atom(out, p, false);
    }
    if let Some(t) = ret {
        out.push_str(" : ");
        type_app(out, t);
    }
    out.push_str(" -> ");
    expr_into(out, body);
}

/// `a with [idx] = v`.
fn update_into(out: &mut String, a: &Expr, idx: &[IndexArg], v: &Expr) {
    atom(out, a);
    out.push_str(" with ");
    index_args(out, idx);
    out.push_str(" = ");
    expr_into(out, v);
}

/// `r with a.b = v`.
fn record_update_into(out: &mut String, r: &Expr, path: &[Ident], v: &Expr) {
    atom(out, r);
    out.push_str(" with ");
    let names: Vec<&str> = path.iter().map(|f| f.name.as_str()).collect();
    out.push_str(&names.join("."));
    out.push_str(" = ");
    expr_into(out, v);
}

/// `loop pat = init for ... do body`.
fn loop_into(out: &mut String, pat: &Pattern, init: Option<&Expr>, form: &LoopForm, body: &Expr) {
    out.push_str("loop ");
    pattern_into(out, pat, false);
    if let Some(init) = init {
        out.push_str(" = ");
        expr_into(out, init);
    }
    match form {
        LoopForm::For(i, n) => {
            let _ = write!(out, " for {} < ", i.name);
            expr_into(out, n);
        }
        LoopForm::ForIn(p, xs) => {
            out.push_str(" for ");
            pattern_into(out, p, false);
            out.push_str(" in ");
            expr_into(out, xs);
        }
        LoopForm::Range(i, lo, hi) => {
            let _ = write!(out, " for {} in ", i.name);
            expr_into(out, lo);
            out.push_str("..");
            expr_into(out, hi);
        }
        LoopForm::While(c) => {
            out.push_str(" while ");
            expr_into(out, c);
        }
    }
    out.push_str(" do ");
    expr_into(out, body);
}

/// The expression before `.x` or `[i]`: literals are parenthesised too (`(1).0`, not `1.0`).
fn receiver(out: &mut String, e: &Expr) {
    if matches!(e.kind, ExprKind::Lit(_)) {
        out.push('(');
        expr_into(out, e);
        out.push(')');
    } else {
        atom(out, e);
    }
}

fn expr_into(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Lit(lit) => literal(out, lit),
        ExprKind::Var(q) => {
            let _ = write!(out, "{q}");
        }
        ExprKind::Tuple(es) => {
            out.push('(');
            comma_exprs(out, es);
            out.push(')');
        }
        ExprKind::Record(fs) => record_into(out, fs),
        ExprKind::ArrayLit(es) => {
            out.push('[');
            comma_exprs(out, es);
            out.push(']');
        }
        ExprKind::Field(e, f) => {
            receiver(out, e);
            let _ = write!(out, ".{}", f.name);
        }
        ExprKind::Index(e, args) => {
            receiver(out, e);
            index_args(out, args);
        }
        ExprKind::Apply(f, args) => {
            atom(out, f);
            for a in args {
                out.push(' ');
                atom(out, a);
            }
        }
        ExprKind::BinOp(op, a, b) => {
            atom(out, a);
            let _ = write!(out, " {} ", op.symbol());
            atom(out, b);
        }
        ExprKind::UnOp(op, a) => {
            out.push(match op {
                UnOp::Neg => '-',
                UnOp::Not => '!',
            });
            atom(out, a);
        }
        ExprKind::OpSection(op) => {
            let _ = write!(out, "({})", op.symbol());
        }
        ExprKind::LeftSection(op, a) => {
            out.push('(');
            atom(out, a);
            let _ = write!(out, " {})", op.symbol());
        }
        ExprKind::RightSection(op, a) => {
            let _ = write!(out, "({} ", op.symbol());
            atom(out, a);
            out.push(')');
        }
        ExprKind::Lambda(params, ret, body) => lambda_into(out, params, ret.as_ref(), body),
        ExprKind::Let(p, e, body) => {
            out.push_str("let ");
            pattern_into(out, p, false);
            out.push_str(" = ");
            expr_into(out, e);
            out.push_str(" in ");
            expr_into(out, body);
        }
        ExprKind::LetFun(f, body) => {
            let _ = write!(out, "let {}", f.name.name);
            signature(out, &f.type_params, &f.params, f.ret.as_ref());
            out.push_str(" = ");
            expr_into(out, &f.body);
            out.push_str(" in ");
            expr_into(out, body);
        }
        ExprKind::LetWith(name, idx, v, body) => {
            let _ = write!(out, "let {}", name.name);
            index_args(out, idx);
            out.push_str(" = ");
            expr_into(out, v);
            out.push_str(" in ");
            expr_into(out, body);
        }
        ExprKind::Assert(c, message, e) => {
            out.push_str("assert ");
            atom(out, c);
            let _ = write!(out, " {message:?} ");
            expr_into(out, e);
        }
        ExprKind::Trace(label, e) => {
            let _ = write!(out, "trace {label:?} ");
            atom(out, e);
        }
        ExprKind::If(c, t, f) => {
            out.push_str("if ");
            expr_into(out, c);
            out.push_str(" then ");
            expr_into(out, t);
            out.push_str(" else ");
            expr_into(out, f);
        }
        ExprKind::Loop {
            pat,
            init,
            form,
            body,
        } => loop_into(out, pat, init.as_deref(), form, body),
        ExprKind::Update(a, idx, v) => update_into(out, a, idx, v),
        ExprKind::RecordUpdate(r, path, v) => record_update_into(out, r, path, v),
        ExprKind::Ascribe(e, t) => {
            atom(out, e);
            out.push_str(" : ");
            type_into(out, t);
        }
        ExprKind::Coerce(e, t) => {
            atom(out, e);
            out.push_str(" :> ");
            type_into(out, t);
        }
    }
}
