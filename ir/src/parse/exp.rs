//! The expression half of the IR parser: one method of [`Parser`] per expression form that
//! [`crate::print`] writes (calls, operators, `if`, `loop`, SOACs, kernels), with lambdas and
//! SOAC operators.
//!
//! Invariants: as the parent module's; each form is read back exactly as printed, and what
//! printing derives (a SOAC's or kernel's keyword, a conversion's source type) is checked
//! against what was parsed rather than trusted.

use super::lex::{DOT, Tok};
use super::{Parser, Res};
use crate::kir::{HostOp, Plans, PointLayout, SegKind, SegLevel, SegOp};
use crate::math::MathFn;
use crate::op::{BinOp, UnOp};
use crate::types::PrimType;
use crate::{
    AssertKind, Body, DimIndex, Exp, Form, HistOp, Lambda, LoopForm, RedOp, ScanOp, Soac, SubExp,
    Type,
};

impl Parser {
    pub(super) fn exp<H: Form>(&mut self) -> Res<Exp<H>> {
        let Tok::Word(w) = self.peek().clone() else {
            return self.operator_exp();
        };
        if PrimType::from_name(&w).is_some()
            && *self.peek_at(1) == Tok::Punct(DOT)
            && let Tok::Word(member) = self.peek_at(2).clone()
            && member != "nan"
            && member != "inf"
        {
            return self.call_exp(&member);
        }
        match w.as_str() {
            "if" => self.if_exp(),
            "loop" => self.loop_exp(),
            "map" | "redomap" | "scanomap" | "screma" => self.screma(&w),
            "scatter" => self.scatter(),
            "hist" => self.hist(),
            "segmap" | "segred" | "segscan" | "seghist" => self.seg(&w),
            "iota" => {
                self.bump();
                let n = self.single_arg()?;
                Ok(Exp::Iota(n))
            }
            "replicate" => {
                self.bump();
                let args = self.subexps("(", ")")?;
                match args[..] {
                    [n, v] => Ok(Exp::Replicate(n, v)),
                    _ => self.error("`replicate` takes a count and a value"),
                }
            }
            "rearrange" => {
                self.bump();
                self.punct("(")?;
                let perm = self.list("(", ")", |p| match p.peek().clone() {
                    Tok::Number(n) => match n.parse::<usize>() {
                        Ok(d) => {
                            p.bump();
                            Ok(d)
                        }
                        Err(_) => p.expected("a dimension number"),
                    },
                    _ => p.expected("a dimension number"),
                })?;
                self.punct(",")?;
                let v = self.var()?;
                self.punct(")")?;
                Ok(Exp::Rearrange(v, perm))
            }
            "reshape" => {
                self.bump();
                self.punct("(")?;
                let shape = self.subexps("(", ")")?;
                self.punct(",")?;
                let v = self.var()?;
                self.punct(")")?;
                Ok(Exp::Reshape(v, shape))
            }
            "concat" => {
                self.bump();
                Ok(Exp::Concat(self.vars_list()?))
            }
            "copy" => {
                self.bump();
                self.punct("(")?;
                let v = self.var()?;
                self.punct(")")?;
                Ok(Exp::Copy(v))
            }
            "assert" | "assert_user" => {
                self.bump();
                let kind = if w == "assert" {
                    AssertKind::Size
                } else {
                    AssertKind::User
                };
                self.punct("(")?;
                let cond = self.subexp()?;
                self.punct(",")?;
                let Tok::Str(message) = self.peek().clone() else {
                    return self.expected("a string");
                };
                self.bump();
                self.punct(")")?;
                Ok(Exp::Assert {
                    cond,
                    message,
                    kind,
                })
            }
            "trace" => {
                self.bump();
                self.punct("(")?;
                let Tok::Str(label) = self.peek().clone() else {
                    return self.expected("a string");
                };
                self.bump();
                self.punct(",")?;
                let value = self.subexp()?;
                self.punct(")")?;
                Ok(Exp::Trace { label, value })
            }
            "threshold" => {
                let at = self.next_index();
                self.bump();
                self.punct("(")?;
                let id = self.threshold_id()?;
                self.punct(",")?;
                let size = self.subexp()?;
                self.punct(")")?;
                self.host(at, HostOp::Threshold { id, size })
            }
            _ => self.operator_exp(),
        }
    }

    fn single_arg(&mut self) -> Res<SubExp> {
        self.punct("(")?;
        let a = self.subexp()?;
        self.punct(")")?;
        Ok(a)
    }

    /// `t.f(args)`: a math function or a conversion (`f32.i64(x)`) at scalar type `t`.
    fn call_exp<H: Form>(&mut self, member: &str) -> Res<Exp<H>> {
        let ty = self.prim()?;
        self.punct(DOT)?;
        self.bump();
        if let Some(from) = PrimType::from_name(member) {
            let at = self.next_index();
            let a = self.single_arg()?;
            let actual = match a {
                SubExp::Const(c) => Some(c.prim_type()),
                SubExp::Var(v) => self.vars[v.index()]
                    .as_ref()
                    .and_then(|s| s.ty.as_ref().map(Type::elem)),
            };
            if actual.is_some_and(|t| t != from) {
                return self.error_at(at, &format!("the operand of `{ty}.{from}` is not `{from}`"));
            }
            return Ok(Exp::Convert(ty, a));
        }
        match MathFn::named(member) {
            Some(op) => Ok(Exp::Math(op, ty, self.subexps("(", ")")?)),
            None => self.error(format!(
                "`{ty}.{member}` is not a math function or conversion"
            )),
        }
    }

    /// An operand alone, an operator application, an index, an update or an array literal.
    fn operator_exp<H: Form>(&mut self) -> Res<Exp<H>> {
        if self.peek_punct("[") {
            let elems = self.subexps("[", "]")?;
            self.punct(":")?;
            let ty = self.ty()?;
            return Ok(Exp::ArrayLit(elems, ty));
        }
        if self.eat_punct("!") {
            return Ok(Exp::UnOp(UnOp::Not, self.unop_operand()?));
        }
        let negate = self.peek_punct("-")
            && !matches!(self.peek_at(1), Tok::Word(w) if PrimType::from_name(w).is_some());
        if negate {
            self.bump();
            return Ok(Exp::UnOp(UnOp::Neg, self.unop_operand()?));
        }
        let a = self.subexp()?;
        if let Tok::Punct(p) = self.peek().clone()
            && let Some(op) = BinOp::ALL.into_iter().find(|op| op.symbol() == p)
        {
            self.bump();
            return Ok(Exp::BinOp(op, a, self.subexp()?));
        }
        let SubExp::Var(v) = a else {
            return Ok(Exp::SubExp(a));
        };
        if self.peek_punct("[") {
            return Ok(Exp::Index(v, self.slice()?));
        }
        if self.eat_word("with") {
            let slice = self.slice()?;
            self.punct("=")?;
            return Ok(Exp::Update(v, slice, self.subexp()?));
        }
        Ok(Exp::SubExp(a))
    }

    /// The operand of a unary operator: a variable, or a constant in parentheses.
    fn unop_operand(&mut self) -> Res<SubExp> {
        if self.eat_punct("(") {
            let c = self.subexp()?;
            self.punct(")")?;
            if c.as_var().is_some() {
                return self.error("only a constant operand is parenthesised");
            }
            Ok(c)
        } else {
            Ok(SubExp::Var(self.var()?))
        }
    }

    /// `[i, a:+n*s, ...]`.
    fn slice(&mut self) -> Res<Vec<DimIndex>> {
        self.list("[", "]", |p| {
            let start = p.subexp()?;
            if !p.eat_punct(":") {
                return Ok(DimIndex::Fix(start));
            }
            p.punct("+")?;
            let len = p.subexp()?;
            p.punct("*")?;
            let stride = p.subexp()?;
            Ok(DimIndex::Slice { start, len, stride })
        })
    }

    /// `if c : ts then { ... } else { ... }`.
    fn if_exp<H: Form>(&mut self) -> Res<Exp<H>> {
        self.keyword("if")?;
        let cond = self.subexp()?;
        self.punct(":")?;
        let ret = self.types()?;
        self.keyword("then")?;
        let then_body = self.block()?;
        self.keyword("else")?;
        let else_body = self.block()?;
        Ok(Exp::If {
            cond,
            then_body,
            else_body,
            ret,
        })
    }

    /// `loop (x_1: t = init, ...) for i_2 < n do { ... }` or `... while c_3 do { ... }`.
    fn loop_exp<H: Form>(&mut self) -> Res<Exp<H>> {
        self.keyword("loop")?;
        let params = self.list("(", ")", |p| {
            let v = p.binder()?;
            p.punct("=")?;
            Ok((v, p.subexp()?))
        })?;
        let form = if self.eat_word("for") {
            let index = self.var()?;
            self.punct("<")?;
            let bound = self.subexp()?;
            LoopForm::For { index, bound }
        } else if self.eat_word("while") {
            LoopForm::While { cond: self.var()? }
        } else {
            return self.expected("`for` or `while`");
        };
        self.keyword("do")?;
        let body = self.block()?;
        Ok(Exp::Loop { params, form, body })
    }

    /// `\(x_1: t, ...) : ts -> { ... }`, or `-> results` for a body without statements.
    fn lambda(&mut self) -> Res<Lambda> {
        self.punct("\\")?;
        let params = self.list("(", ")", Parser::binder)?;
        self.punct(":")?;
        let ret = self.types()?;
        self.punct("->")?;
        let body = if self.peek_punct("{") {
            let body = self.block()?;
            if body.stmts.is_empty() {
                return self.error("a lambda without statements is written `-> results`");
            }
            body
        } else {
            Body {
                stmts: Vec::new(),
                result: self.tuple(Parser::subexp)?,
            }
        };
        Ok(Lambda { params, body, ret })
    }

    /// `lambda (neutral...)`, after an operator's keyword.
    fn operator(&mut self) -> Res<(Lambda, Vec<SubExp>)> {
        let lambda = self.lambda()?;
        let neutral = self.subexps("(", ")")?;
        Ok((lambda, neutral))
    }

    /// The operator lines of a screma or a kernel: `scan`, `reduce`, `reduce_comm`, `hist into`.
    fn operators(&mut self) -> Res<(Vec<ScanOp>, Vec<RedOp>, Vec<HistOp>)> {
        let (mut scans, mut reds, mut hists) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            if self.eat_word("scan") {
                let (lambda, neutral) = self.operator()?;
                scans.push(ScanOp { lambda, neutral });
            } else if self.peek_word("reduce") || self.peek_word("reduce_comm") {
                let commutative = self.peek_word("reduce_comm");
                self.bump();
                let (lambda, neutral) = self.operator()?;
                reds.push(RedOp {
                    lambda,
                    neutral,
                    commutative,
                });
            } else if self.peek_word("hist") && *self.peek_at(1) == Tok::Word("into".into()) {
                self.bump();
                self.bump();
                let dests = self.vars_list()?;
                self.keyword("bins")?;
                let num_bins = self.subexp()?;
                let (op, neutral) = self.operator()?;
                hists.push(HistOp {
                    num_bins,
                    dests,
                    op,
                    neutral,
                });
            } else {
                return Ok((scans, reds, hists));
            }
        }
    }

    /// `map w (xs) lambda`, or `redomap|scanomap|screma w (xs)`, operators, `map lambda`.
    fn screma<H: Form>(&mut self, keyword: &str) -> Res<Exp<H>> {
        let at = self.next_index();
        self.bump();
        let width = self.subexp()?;
        let inputs = self.vars_list()?;
        let (scans, reds, map) = if keyword == "map" {
            (Vec::new(), Vec::new(), self.lambda()?)
        } else {
            let (scans, reds, hists) = self.operators()?;
            let expected = match (scans.is_empty(), reds.is_empty()) {
                (true, true) => "map",
                (true, false) => "redomap",
                (false, true) => "scanomap",
                (false, false) => "screma",
            };
            if expected != keyword || !hists.is_empty() {
                return self.error_at(
                    at,
                    &format!("these operators make a `{expected}`, not a `{keyword}`"),
                );
            }
            self.keyword("map")?;
            (scans, reds, self.lambda()?)
        };
        Ok(Exp::Soac(Soac::Screma {
            width,
            inputs,
            map,
            scans,
            reds,
        }))
    }

    /// `scatter w (xs) into (dests) lambda`.
    fn scatter<H: Form>(&mut self) -> Res<Exp<H>> {
        self.keyword("scatter")?;
        let width = self.subexp()?;
        let inputs = self.vars_list()?;
        self.keyword("into")?;
        let dests = self.vars_list()?;
        let map = self.lambda()?;
        Ok(Exp::Soac(Soac::Scatter {
            width,
            inputs,
            map,
            dests,
        }))
    }

    /// `hist w (xs)`, `hist into` lines, `map lambda`.
    fn hist<H: Form>(&mut self) -> Res<Exp<H>> {
        let at = self.next_index();
        self.keyword("hist")?;
        let width = self.subexp()?;
        let inputs = self.vars_list()?;
        let (scans, reds, hists) = self.operators()?;
        if !scans.is_empty() || !reds.is_empty() {
            return self.error_at(at, "a `hist` has only `hist into` operators");
        }
        self.keyword("map")?;
        let map = self.lambda()?;
        Ok(Exp::Soac(Soac::Hist {
            width,
            inputs,
            map,
            hists,
        }))
    }

    /// `segX level [interleaved] (i_1 < n, ...) : ts`, operators, `do { ... }`.
    fn seg<H: Form>(&mut self, keyword: &str) -> Res<Exp<H>> {
        let at = self.next_index();
        self.bump();
        let level = match self.word("`thread` or `block`")?.as_str() {
            "thread" => SegLevel::Thread,
            "block" => SegLevel::Block,
            other => return self.error(format!("expected `thread` or `block`, found `{other}`")),
        };
        let layout = if self.eat_word("interleaved") {
            PointLayout::Interleaved
        } else {
            PointLayout::Contiguous
        };
        let space = self.list("(", ")", |p| {
            let v = p.var()?;
            p.punct("<")?;
            Ok((v, p.subexp()?))
        })?;
        self.punct(":")?;
        let ret = self.types()?;
        let (scans, reds, hists) = self.operators()?;
        let kind = match keyword {
            "segmap" if scans.is_empty() && reds.is_empty() && hists.is_empty() => SegKind::Map,
            "segred" if scans.is_empty() && hists.is_empty() => SegKind::Red(reds),
            "segscan" if reds.is_empty() && hists.is_empty() => SegKind::Scan(scans),
            "seghist" if scans.is_empty() && reds.is_empty() => SegKind::Hist(hists),
            _ => {
                return self.error_at(at, &format!("a `{keyword}` does not take these operators"));
            }
        };
        self.keyword("do")?;
        let outer = self.plans.replace(Plans::new());
        let body = self.block();
        let plans = std::mem::replace(&mut self.plans, outer).unwrap_or_default();
        let seg = SegOp {
            level,
            space,
            kind,
            body: body?,
            ret,
            layout,
            plans,
        };
        self.host(at, HostOp::Seg(Box::new(seg)))
    }

    /// A host operation (kernel IR), which the form `H` must allow; `at` is its first token.
    fn host<H: Form>(&self, at: usize, op: HostOp) -> Res<Exp<H>> {
        match H::from_host(op) {
            Some(op) => Ok(Exp::Host(op)),
            None => self.error_at(at, "a kernel or a threshold outside kernel IR's host code"),
        }
    }
}
