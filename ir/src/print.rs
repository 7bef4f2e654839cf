//! Printer for the core and kernel IR: stable, deterministic, Futhark-like text, used by
//! `ogham dev --print core|kir`, `--dump-after`, snapshot tests and verifier messages.
//!
//! - Variables print as `name_id` (name hint, then arena index), so printed names are unique.
//! - Constants carry their type as a suffix (`1i64`, `0.5f32`, `true`); floats print in Rust's
//!   shortest round-trip form, so the text denotes the exact value (`f32.nan`, `-f32.inf`).
//! - Types: `f32`, `[n_0][3i64]f32`.
//! - A statement is `let pat = exp`; a pattern of one variable is `x_1: t`, otherwise
//!   `(a_1: t, b_2: u)` (`()` for none). Nested bodies print their statements one per line,
//!   indented by two spaces, then `in results`, between braces.
//! - Output depends only on the program (no hashing, no addresses), and printing never fails,
//!   even on invalid IR (the verifier prints the statements it rejects).
//! - The text of a valid program reads back with [`super::parse`], and prints again identically
//!   (so `-(1i64)`, an operator on a constant, is not `-1i64`, a constant).
//! - A statement of a kernel's body that the target passes planned ([`crate::kir::Plans`]) has
//!   its plan on the line before it: `@unswitch(c_3)`, `@skip_idle`, `@jam`, `@interleave`.

use crate::kir::{HostOp, Plan, Plans, PointLayout, SegKind, SegLevel, SegOp};
use crate::{
    AssertKind, Body, Const, DimIndex, Exp, Form, Function, HistOp, Lambda, LoopForm, Program,
    RedOp, ScanOp, Soac, Stmt, SubExp, Type, VarId,
};
use std::fmt::Write;

/// The whole program: its thresholds (kernel IR), then one entry per function.
pub fn print_program<F: Form>(program: &Program<F>) -> String {
    let mut out = String::new();
    for t in &program.thresholds {
        let _ = writeln!(out, "threshold {} = {} -- {}", t.id, t.default, t.doc);
    }
    for (i, function) in program.functions.iter().enumerate() {
        if i > 0 || !program.thresholds.is_empty() {
            out.push('\n');
        }
        out.push_str(&print_function(function));
    }
    out
}

/// One function: `entry name [size params] (params) : (result types) =`, then its body.
pub fn print_function<F: Form>(function: &Function<F>) -> String {
    let p = Printer::new(function);
    let mut out = String::new();
    let sizes = size_params(function);
    let _ = write!(out, "entry {} ", function.name);
    if !sizes.is_empty() {
        let names: Vec<String> = sizes.iter().map(|&v| p.var(v)).collect();
        let _ = write!(out, "[{}] ", names.join(", "));
    }
    let params: Vec<String> = function
        .params
        .iter()
        .map(|param| {
            let star = if param.unique { "*" } else { "" };
            format!("{star}{}", p.binder(param.var))
        })
        .collect();
    let results: Vec<String> = function
        .body
        .result
        .iter()
        .map(|&se| p.operand_type(se))
        .collect();
    let _ = writeln!(out, "({}) : {} =", params.join(", "), tuple(&results));
    p.body_lines(&mut out, &function.body, 1);
    out
}

/// One statement (and any nested code), starting at indentation level `indent`.
pub fn print_stmt<F: Form, H: Form>(
    function: &Function<F>,
    stmt: &Stmt<H>,
    indent: usize,
) -> String {
    let mut out = String::new();
    Printer::new(function).stmt(&mut out, stmt, indent);
    out
}

/// The pattern of a statement, as in `let (a_1: i64, b_2: [a_1]f32)`.
pub fn print_pattern<F: Form>(function: &Function<F>, pat: &[VarId]) -> String {
    Printer::new(function).pattern(pat)
}

/// A type, with variables named as in `function`.
pub fn print_type<F: Form>(function: &Function<F>, ty: &Type) -> String {
    Printer::new(function).ty(ty)
}

/// An operand, with variables named as in `function`.
pub fn print_subexp<F: Form>(function: &Function<F>, se: SubExp) -> String {
    Printer::new(function).subexp(se)
}

/// A variable's printed name, `name_id`.
pub fn var_name<F: Form>(function: &Function<F>, v: VarId) -> String {
    Printer::new(function).var(v)
}

/// A constant with its type suffix (`3i32`, `0.1f32`, `-f64.inf`, `true`).
pub fn print_const(c: Const) -> String {
    fn float(x: f64, suffix: &str, exact: String) -> String {
        if x.is_nan() {
            format!("{suffix}.nan")
        } else if x.is_infinite() {
            let sign = if x < 0.0 { "-" } else { "" };
            format!("{sign}{suffix}.inf")
        } else {
            format!("{exact}{suffix}")
        }
    }
    match c {
        Const::Bool(b) => b.to_string(),
        Const::I8(x) => format!("{x}i8"),
        Const::I16(x) => format!("{x}i16"),
        Const::I32(x) => format!("{x}i32"),
        Const::I64(x) => format!("{x}i64"),
        Const::U8(x) => format!("{x}u8"),
        Const::F32(x) => float(x as f64, "f32", format!("{x:?}")),
        Const::F64(x) => float(x, "f64", format!("{x:?}")),
    }
}

/// The size parameters of a function: the variables among its parameters' dimensions that are
/// not parameters themselves, in order of first appearance.
pub fn size_params<F: Form>(function: &Function<F>) -> Vec<VarId> {
    let mut sizes = Vec::new();
    for param in &function.params {
        let Some(info) = function.vars.get(param.var.index()) else {
            continue;
        };
        for dim in info.ty.shape() {
            if let SubExp::Var(v) = *dim {
                let is_param = function.params.iter().any(|p| p.var == v);
                if !is_param && !sizes.contains(&v) {
                    sizes.push(v);
                }
            }
        }
    }
    sizes
}

fn tuple(items: &[String]) -> String {
    if items.len() == 1 {
        items[0].clone()
    } else {
        format!("({})", items.join(", "))
    }
}

fn pad(indent: usize) -> String {
    "  ".repeat(indent)
}

struct Printer<'a, F: Form> {
    f: &'a Function<F>,
    /// The plans of the kernel whose body is being printed.
    plans: Option<&'a Plans>,
}

impl<'a, F: Form> Printer<'a, F> {
    fn new(f: &'a Function<F>) -> Self {
        Printer { f, plans: None }
    }

    fn var(&self, v: VarId) -> String {
        match self.f.vars.get(v.index()) {
            Some(info) if !info.name.is_empty() => format!("{}_{}", info.name, v.0),
            _ => format!("v_{}", v.0),
        }
    }

    fn subexp(&self, se: SubExp) -> String {
        match se {
            SubExp::Const(c) => print_const(c),
            SubExp::Var(v) => self.var(v),
        }
    }

    fn subexps(&self, ses: &[SubExp]) -> String {
        let items: Vec<String> = ses.iter().map(|&se| self.subexp(se)).collect();
        items.join(", ")
    }

    fn vars(&self, vs: &[VarId]) -> String {
        let items: Vec<String> = vs.iter().map(|&v| self.var(v)).collect();
        items.join(", ")
    }

    fn ty(&self, ty: &Type) -> String {
        let mut out = String::new();
        for &dim in ty.shape() {
            let _ = write!(out, "[{}]", self.subexp(dim));
        }
        out.push_str(ty.elem().name());
        out
    }

    fn types(&self, tys: &[Type]) -> String {
        let items: Vec<String> = tys.iter().map(|t| self.ty(t)).collect();
        tuple(&items)
    }

    /// The printed type of an operand (`<unknown>` for a variable missing from the arena).
    fn operand_type(&self, se: SubExp) -> String {
        match se {
            SubExp::Const(c) => c.prim_type().name().to_string(),
            SubExp::Var(v) => match self.f.vars.get(v.index()) {
                Some(info) => self.ty(&info.ty),
                None => "<unknown>".to_string(),
            },
        }
    }

    /// `x_1: t`, reading the type from the arena.
    fn binder(&self, v: VarId) -> String {
        match self.f.vars.get(v.index()) {
            Some(info) => format!("{}: {}", self.var(v), self.ty(&info.ty)),
            None => format!("{}: <unknown>", self.var(v)),
        }
    }

    fn pattern(&self, pat: &[VarId]) -> String {
        let items: Vec<String> = pat.iter().map(|&v| self.binder(v)).collect();
        tuple(&items)
    }

    fn results(&self, result: &[SubExp]) -> String {
        let items: Vec<String> = result.iter().map(|&se| self.subexp(se)).collect();
        tuple(&items)
    }

    /// The statements of `body` at `indent`, then `in results`.
    fn body_lines<H: Form>(&self, out: &mut String, body: &Body<H>, indent: usize) {
        for stmt in &body.stmts {
            self.stmt(out, stmt, indent);
        }
        let _ = writeln!(out, "{}in {}", pad(indent), self.results(&body.result));
    }

    /// `{`, the body one level deeper, and `}` at `indent` (no newline after the brace).
    fn block<H: Form>(&self, out: &mut String, body: &Body<H>, indent: usize) {
        out.push_str("{\n");
        self.body_lines(out, body, indent + 1);
        out.push_str(&pad(indent));
        out.push('}');
    }

    fn stmt<H: Form>(&self, out: &mut String, stmt: &Stmt<H>, indent: usize) {
        let plan = self.plans.zip(stmt.pat.first()).and_then(|(p, v)| p.get(v));
        if let Some(plan) = plan {
            let _ = write!(out, "{}@{}", pad(indent), plan.name());
            if let Plan::Unswitch { cond } = plan {
                let _ = write!(out, "({})", self.var(*cond));
            }
            out.push('\n');
        }
        let _ = write!(out, "{}let {} = ", pad(indent), self.pattern(&stmt.pat));
        self.exp(out, &stmt.exp, indent);
        out.push('\n');
    }

    fn dim_index(&self, d: &DimIndex) -> String {
        match d {
            DimIndex::Fix(i) => self.subexp(*i),
            DimIndex::Slice { start, len, stride } => format!(
                "{}:+{}*{}",
                self.subexp(*start),
                self.subexp(*len),
                self.subexp(*stride)
            ),
        }
    }

    fn slice(&self, idx: &[DimIndex]) -> String {
        let items: Vec<String> = idx.iter().map(|d| self.dim_index(d)).collect();
        format!("[{}]", items.join(", "))
    }

    /// The expression, starting mid-line; nested code continues on following lines at
    /// `indent + 1` and the expression ends without a newline.
    fn exp<H: Form>(&self, out: &mut String, exp: &Exp<H>, indent: usize) {
        match exp {
            Exp::SubExp(se) => out.push_str(&self.subexp(*se)),
            Exp::BinOp(op, a, b) => {
                let _ = write!(
                    out,
                    "{} {} {}",
                    self.subexp(*a),
                    op.symbol(),
                    self.subexp(*b)
                );
            }
            // An operator on a constant keeps parentheses, so that `-(1i64)` (an operator)
            // reads back differently from `-1i64` (a constant).
            Exp::UnOp(op, SubExp::Const(c)) => {
                let _ = write!(out, "{}({})", op.symbol(), print_const(*c));
            }
            Exp::UnOp(op, a) => {
                let _ = write!(out, "{}{}", op.symbol(), self.subexp(*a));
            }
            Exp::Math(op, ty, args) => {
                let _ = write!(out, "{ty}.{}({})", op.name(), self.subexps(args));
            }
            Exp::Convert(to, a) => {
                let from = self.source_type_name(*a);
                let _ = write!(out, "{to}.{from}({})", self.subexp(*a));
            }
            Exp::Index(v, idx) => {
                let _ = write!(out, "{}{}", self.var(*v), self.slice(idx));
            }
            Exp::Update(v, idx, value) => {
                let _ = write!(
                    out,
                    "{} with {} = {}",
                    self.var(*v),
                    self.slice(idx),
                    self.subexp(*value)
                );
            }
            Exp::Iota(n) => {
                let _ = write!(out, "iota({})", self.subexp(*n));
            }
            Exp::Replicate(n, v) => {
                let _ = write!(out, "replicate({}, {})", self.subexp(*n), self.subexp(*v));
            }
            Exp::ArrayLit(elems, elem_ty) => {
                let _ = write!(out, "[{}] : {}", self.subexps(elems), self.ty(elem_ty));
            }
            Exp::Rearrange(v, perm) => {
                let perm: Vec<String> = perm.iter().map(|d| d.to_string()).collect();
                let _ = write!(out, "rearrange(({}), {})", perm.join(", "), self.var(*v));
            }
            Exp::Reshape(v, shape) => {
                let _ = write!(out, "reshape(({}), {})", self.subexps(shape), self.var(*v));
            }
            Exp::Concat(vs) => {
                let _ = write!(out, "concat({})", self.vars(vs));
            }
            Exp::Copy(v) => {
                let _ = write!(out, "copy({})", self.var(*v));
            }
            Exp::Assert {
                cond,
                message,
                kind,
            } => {
                let name = match kind {
                    AssertKind::Size => "assert",
                    AssertKind::User => "assert_user",
                };
                let _ = write!(out, "{name}({}, {message:?})", self.subexp(*cond));
            }
            Exp::Trace { label, value } => {
                let _ = write!(out, "trace({label:?}, {})", self.subexp(*value));
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                let _ = write!(out, "if {} : {} then ", self.subexp(*cond), self.types(ret));
                self.block(out, then_body, indent);
                out.push_str(" else ");
                self.block(out, else_body, indent);
            }
            Exp::Loop { params, form, body } => self.loop_(out, params, form, body, indent),
            Exp::Soac(soac) => self.soac(out, soac, indent),
            Exp::Host(host) => match host.host() {
                HostOp::Seg(seg) => self.seg(out, seg, indent),
                HostOp::Threshold { id, size } => {
                    let _ = write!(out, "threshold({id}, {})", self.subexp(*size));
                }
            },
        }
    }

    /// The name of the type of a conversion's operand (`?` for a variable out of the arena).
    fn source_type_name(&self, a: SubExp) -> &'static str {
        match a {
            SubExp::Const(c) => c.prim_type().name(),
            SubExp::Var(v) => self
                .f
                .vars
                .get(v.index())
                .map_or("?", |i| i.ty.elem().name()),
        }
    }

    /// `loop (x_1 = init, ...) for i_2 < n do { ... }` (or `while c do`).
    fn loop_<H: Form>(
        &self,
        out: &mut String,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body<H>,
        indent: usize,
    ) {
        let params: Vec<String> = params
            .iter()
            .map(|&(v, init)| format!("{} = {}", self.binder(v), self.subexp(init)))
            .collect();
        let _ = write!(out, "loop ({}) ", params.join(", "));
        match form {
            LoopForm::For { index, bound } => {
                let _ = write!(
                    out,
                    "for {} < {} do ",
                    self.var(*index),
                    self.subexp(*bound)
                );
            }
            LoopForm::While { cond } => {
                let _ = write!(out, "while {} do ", self.var(*cond));
            }
        }
        self.block(out, body, indent);
    }

    /// `\(x_1: f32, y_2: f32) : f32 -> { ... }`; a body without statements stays on one line.
    fn lambda(&self, out: &mut String, lambda: &Lambda, indent: usize) {
        let params: Vec<String> = lambda.params.iter().map(|&v| self.binder(v)).collect();
        let _ = write!(
            out,
            "\\({}) : {} -> ",
            params.join(", "),
            self.types(&lambda.ret)
        );
        if lambda.body.stmts.is_empty() {
            out.push_str(&self.results(&lambda.body.result));
        } else {
            self.block(out, &lambda.body, indent);
        }
    }

    /// A line `keyword lambda (neutral)` at `indent` for an operator of a scan, reduction or
    /// histogram.
    fn operator(
        &self,
        out: &mut String,
        keyword: &str,
        lambda: &Lambda,
        neutral: &[SubExp],
        indent: usize,
    ) {
        let _ = write!(out, "\n{}{keyword} ", pad(indent));
        self.lambda(out, lambda, indent);
        let _ = write!(out, " ({})", self.subexps(neutral));
    }

    fn scans(&self, out: &mut String, scans: &[ScanOp], indent: usize) {
        for op in scans {
            self.operator(out, "scan", &op.lambda, &op.neutral, indent);
        }
    }

    fn reds(&self, out: &mut String, reds: &[RedOp], indent: usize) {
        for op in reds {
            let keyword = if op.commutative {
                "reduce_comm"
            } else {
                "reduce"
            };
            self.operator(out, keyword, &op.lambda, &op.neutral, indent);
        }
    }

    fn hists(&self, out: &mut String, hists: &[HistOp], indent: usize) {
        for op in hists {
            let keyword = format!(
                "hist into ({}) bins {}",
                self.vars(&op.dests),
                self.subexp(op.num_bins)
            );
            self.operator(out, &keyword, &op.op, &op.neutral, indent);
        }
    }

    fn soac(&self, out: &mut String, soac: &Soac, indent: usize) {
        let inner = indent + 1;
        match soac {
            Soac::Screma {
                width,
                inputs,
                map,
                scans,
                reds,
            } => {
                let keyword = match (scans.is_empty(), reds.is_empty()) {
                    (true, true) => "map",
                    (true, false) => "redomap",
                    (false, true) => "scanomap",
                    (false, false) => "screma",
                };
                let _ = write!(
                    out,
                    "{keyword} {} ({})",
                    self.subexp(*width),
                    self.vars(inputs)
                );
                if keyword == "map" {
                    out.push(' ');
                    self.lambda(out, map, indent);
                    return;
                }
                self.scans(out, scans, inner);
                self.reds(out, reds, inner);
                let _ = write!(out, "\n{}map ", pad(inner));
                self.lambda(out, map, inner);
            }
            Soac::Scatter {
                width,
                inputs,
                map,
                dests,
            } => {
                let _ = write!(
                    out,
                    "scatter {} ({}) into ({}) ",
                    self.subexp(*width),
                    self.vars(inputs),
                    self.vars(dests)
                );
                self.lambda(out, map, indent);
            }
            Soac::Hist {
                width,
                inputs,
                map,
                hists,
            } => {
                let _ = write!(out, "hist {} ({})", self.subexp(*width), self.vars(inputs));
                self.hists(out, hists, inner);
                let _ = write!(out, "\n{}map ", pad(inner));
                self.lambda(out, map, inner);
            }
        }
    }

    fn seg(&self, out: &mut String, seg: &SegOp, indent: usize) {
        let inner = indent + 1;
        let keyword = match seg.kind {
            SegKind::Map => "segmap",
            SegKind::Red(_) => "segred",
            SegKind::Scan(_) => "segscan",
            SegKind::Hist(_) => "seghist",
        };
        let level = match seg.level {
            SegLevel::Thread => "thread",
            SegLevel::Block => "block",
        };
        let layout = match seg.layout {
            PointLayout::Contiguous => "",
            PointLayout::Interleaved => " interleaved",
        };
        let space: Vec<String> = seg
            .space
            .iter()
            .map(|&(v, extent)| format!("{} < {}", self.var(v), self.subexp(extent)))
            .collect();
        let _ = write!(
            out,
            "{keyword} {level}{layout} ({}) : {}",
            space.join(", "),
            self.types(&seg.ret)
        );
        match &seg.kind {
            SegKind::Map => {}
            SegKind::Red(reds) => self.reds(out, reds, inner),
            SegKind::Scan(scans) => self.scans(out, scans, inner),
            SegKind::Hist(hists) => self.hists(out, hists, inner),
        }
        let _ = write!(out, "\n{}do ", pad(inner));
        let body = Printer {
            f: self.f,
            plans: Some(&seg.plans),
        };
        body.block(out, &seg.body, inner);
    }
}
