//! CUDA C for the statements of a kernel body: every IR variable becomes a C variable `v<id>`
//! (a scalar, or a `View<T, R>` — element pointer, extents, strides — for an array), every
//! statement one or a few C statements, with the interpreter's scalar semantics from the
//! prelude (`og_div`, `og_f2i`, ...).
//!
//! Invariants relied on: every variable is bound once (so `v<id>` names are unique in a
//! kernel); a body that is emitted more than once (a lambda applied in several places) is
//! wrapped in its own C block, so its declarations never clash. Arrays made inside a kernel come
//! from a bump arena (`og_arena` per thread; at block level `og_block_arena`, whose addresses
//! every thread of the block computes identically).
//!
//! Block-level code (`Emit::block`): the statements outside any lambda run redundantly on every
//! thread of the block (so scalars and control flow are uniform), writes to memory are shared
//! out across the threads or done by thread 0 between barriers, and the SOACs there run across
//! the block's threads: maps by rows, reductions and scans by contiguous chunks combined in
//! shared memory (order-preserving tree / Hillis–Steele scan), scatters and histograms by
//! thread 0 in order (as the interpreter applies them).

use super::{ErrorSite, Failure, Unsupported};
use crate::builtins::MathFn;
use crate::ir::op::{BinOp, UnOp};
use crate::ir::{
    self, Body, Const, DimIndex, Exp, Function, Lambda, LoopForm, Soac, Stmt, SubExp, VarId,
};
use crate::source::Span;
use crate::types::PrimType;

pub type Res<T> = Result<T, Unsupported>;

/// The C type of a scalar.
pub fn ctype(p: PrimType) -> &'static str {
    match p {
        PrimType::Bool => "bool",
        PrimType::I8 => "i8",
        PrimType::I16 => "i16",
        PrimType::I32 => "i32",
        PrimType::I64 => "i64",
        PrimType::U8 => "u8",
        PrimType::F32 => "float",
        PrimType::F64 => "double",
    }
}

/// The C type of a value of IR type `ty`.
pub fn type_str(ty: &ir::Type) -> String {
    match ty {
        ir::Type::Prim(p) => ctype(*p).to_string(),
        ir::Type::Array { elem, shape } => view_type(*elem, shape.len()),
    }
}

fn view_type(elem: PrimType, rank: usize) -> String {
    format!("View<{}, {rank}>", ctype(elem))
}

/// A constant as a C expression of its type (non-finite floats by their bits).
pub fn literal(c: Const) -> String {
    match c {
        Const::Bool(b) => b.to_string(),
        Const::I8(x) => format!("((i8){x})"),
        Const::I16(x) => format!("((i16){x})"),
        Const::I32(i32::MIN) => "((i32)(-2147483647 - 1))".to_string(),
        Const::I32(x) => format!("((i32){x})"),
        Const::I64(i64::MIN) => "((i64)(-9223372036854775807LL - 1))".to_string(),
        Const::I64(x) => format!("((i64){x}LL)"),
        Const::U8(x) => format!("((u8){x})"),
        Const::F32(x) if x.is_finite() => format!("({x:?}f)"),
        Const::F32(x) => format!("__int_as_float((int)0x{:08x}u)", x.to_bits()),
        Const::F64(x) if x.is_finite() => format!("({x:?})"),
        Const::F64(x) => format!("__longlong_as_double((long long)0x{:016x}ull)", x.to_bits()),
    }
}

/// The C name of a variable.
pub fn var(v: VarId) -> String {
    format!("v{}", v.0)
}

pub struct Emit<'f> {
    pub f: &'f Function,
    out: String,
    depth: usize,
    /// The checks emitted so far, numbered from `first_site`.
    pub sites: Vec<ErrorSite>,
    pub first_site: usize,
    loc: Span,
    unchecked: &'f [Span],
    fresh: usize,
    /// Block-level code: statements outside lambdas are shared by the block's threads.
    pub block: bool,
    /// How many lambdas (per-thread code) enclose the current statement.
    lambdas: usize,
    /// The most accumulator components a block-level reduction or scan keeps in shared memory.
    pub shared_slots: usize,
    /// Whether the code allocates from an arena.
    allocates: bool,
}

/// What [`Emit`] produced.
pub struct Emitted {
    pub text: String,
    pub sites: Vec<ErrorSite>,
    pub shared_slots: usize,
    pub allocates: bool,
}

impl<'f> Emit<'f> {
    pub fn new(f: &'f Function, unchecked: &'f [Span], depth: usize) -> Emit<'f> {
        Emit {
            f,
            out: String::new(),
            depth,
            sites: Vec::new(),
            first_site: 0,
            loc: Span::default(),
            unchecked,
            fresh: 0,
            block: false,
            lambdas: 0,
            shared_slots: 0,
            allocates: false,
        }
    }

    pub fn finish(self) -> Emitted {
        Emitted {
            text: self.out,
            sites: self.sites,
            shared_slots: self.shared_slots,
            allocates: self.allocates,
        }
    }

    // ----- text -----

    pub fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    pub fn open(&mut self, header: impl AsRef<str>) {
        let h = header.as_ref();
        if h.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{h} {{"));
        }
        self.depth += 1;
    }

    pub fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    /// `} else {` between the branches of an `if` opened with [`Emit::open`].
    pub fn else_branch(&mut self) {
        self.depth -= 1;
        self.line("} else {");
        self.depth += 1;
    }

    /// A fresh C name.
    pub fn temp(&mut self, hint: &str) -> String {
        self.fresh += 1;
        format!("t{}_{hint}", self.fresh)
    }

    pub fn operand(&self, se: SubExp) -> String {
        match se {
            SubExp::Const(c) => literal(c),
            SubExp::Var(v) => var(v),
        }
    }

    fn prim_of(&self, se: SubExp) -> PrimType {
        self.f.subexp_type(se).elem()
    }

    /// `ty v<id> = init;`
    pub fn declare(&mut self, v: VarId, init: &str) {
        let ty = type_str(self.f.ty(v));
        self.line(format!("{ty} {} = {init};", var(v)));
    }

    /// Shared out across the block's threads (block level, outside lambdas)?
    fn cooperative(&self) -> bool {
        self.block && self.lambdas == 0
    }

    /// The first row and the step of a loop whose rows the block's threads share.
    fn par(&self) -> (&'static str, &'static str) {
        if self.cooperative() {
            ("threadIdx.x", "blockDim.x")
        } else {
            ("0", "1")
        }
    }

    fn barrier(&mut self) {
        if self.cooperative() {
            self.line("__syncthreads();");
        }
    }

    fn arena(&self) -> &'static str {
        if self.cooperative() {
            "og_block_arena"
        } else {
            "og_arena"
        }
    }

    // ----- checks -----

    /// Continues when `cond` holds; otherwise records `failure` with `details` (`i64`
    /// expressions) in the context and leaves the kernel.
    pub fn check(&mut self, cond: &str, failure: Failure, details: &[String]) -> Res<()> {
        if details.len() > super::MAX_DETAILS {
            return Err(Unsupported(format!(
                "a run-time check needs {} values (at most {})",
                details.len(),
                super::MAX_DETAILS
            )));
        }
        let site = self.first_site + self.sites.len();
        self.sites.push(ErrorSite {
            loc: self.loc,
            failure,
        });
        self.open(format!("if (!({cond}))"));
        if details.is_empty() {
            self.line(format!("og_fail(ctx, {site}, 0, 0);"));
        } else {
            let list: Vec<String> = details.iter().map(|d| format!("(i64)({d})")).collect();
            self.line(format!("const i64 og_d[] = {{{}}};", list.join(", ")));
            self.line(format!("og_fail(ctx, {site}, {}, og_d);", details.len()));
        }
        self.line("return;");
        self.close();
        Ok(())
    }

    fn bounds_checked(&self) -> bool {
        let loc = self.loc;
        !self
            .unchecked
            .iter()
            .any(|r| r.file == loc.file && r.start <= loc.start && loc.end <= r.end)
    }

    /// `0 <= n <= MAX_ELEMS` (see `crate::sizes::count`).
    fn check_size(&mut self, n: &str, what: &str) -> Res<()> {
        self.check(
            &format!("(u64)({n}) <= (u64){}LL", crate::sizes::MAX_ELEMS),
            Failure::NegativeSize {
                what: what.to_string(),
            },
            &[n.to_string()],
        )
    }

    /// Checks that the extents `actual` equal `expected`.
    fn check_same_shape(&mut self, actual: &[String], expected: &[String], what: &str) -> Res<()> {
        let cond: Vec<String> = actual
            .iter()
            .zip(expected)
            .map(|(a, e)| format!("{a} == {e}"))
            .collect();
        if cond.is_empty() {
            return Ok(());
        }
        let mut details = actual.to_vec();
        details.extend(expected.iter().cloned());
        self.check(
            &cond.join(" && "),
            Failure::ShapeMismatch {
                what: what.to_string(),
                rank: actual.len(),
            },
            &details,
        )
    }

    // ----- memory -----

    fn dims(view: &str, rank: usize) -> Vec<String> {
        (0..rank).map(|k| format!("{view}.d[{k}]")).collect()
    }

    /// A fresh contiguous array of the given extents from the arena; returns its view's name.
    pub fn alloc(&mut self, elem: PrimType, dims: &[String]) -> Res<String> {
        self.allocates = true;
        let name = self.temp("a");
        let t = ctype(elem);
        if dims.is_empty() {
            self.line(format!("const i64 {name}_bytes = (i64)sizeof({t});"));
        } else {
            self.line(format!(
                "const i64 {name}_bytes = og_bytes<{}>({{{}}}, (i64)sizeof({t}));",
                dims.len(),
                dims.join(", ")
            ));
        }
        self.line(format!(
            "{t}* {name}_p = ({t}*)og_alloc({}, {name}_bytes);",
            self.arena()
        ));
        self.check(
            &format!("{name}_p != 0"),
            Failure::OutOfMemory,
            &[format!("{name}_bytes")],
        )?;
        self.line(format!(
            "{} {name} = og_view<{t}, {}>({name}_p, {{{}}});",
            view_type(elem, dims.len()),
            dims.len(),
            dims.join(", ")
        ));
        Ok(name)
    }

    /// The extents of a type (its dimensions as C expressions).
    fn dims_of(&self, ty: &ir::Type) -> Vec<String> {
        ty.shape().iter().map(|d| self.operand(*d)).collect()
    }

    /// Row `i` of a view of rank `rank`: the element (rank 1) or a view.
    fn row(view: &str, rank: usize, i: &str) -> String {
        if rank == 1 {
            format!("{view}.p[({i}) * {view}.s[0]]")
        } else {
            format!("og_row({view}, {i})")
        }
    }

    /// `dst[i] = val` for a destination of rank `rank` (a scalar or a view of the row's extents).
    fn write_row(&mut self, dst: &str, rank: usize, i: &str, val: &str) -> Res<()> {
        if rank == 1 {
            self.line(format!("{dst}.p[({i}) * {dst}.s[0]] = {val};"));
            return Ok(());
        }
        let actual = Self::dims(val, rank - 1);
        let expected: Vec<String> = (1..rank).map(|k| format!("{dst}.d[{k}]")).collect();
        self.check_same_shape(&actual, &expected, "row")?;
        self.line(format!("og_copy(og_row({dst}, {i}), {val});"));
        Ok(())
    }

    /// Copies view `src` into view `dst` (same extents), shared out at block level.
    fn copy(&mut self, dst: &str, src: &str) {
        let (first, step) = self.par();
        self.line(format!("og_copy({dst}, {src}, {first}, {step});"));
        self.barrier();
    }

    // ----- bodies -----

    pub fn body(&mut self, body: &Body) -> Res<Vec<String>> {
        for stmt in &body.stmts {
            self.stmt(stmt)?;
        }
        Ok(body.result.iter().map(|se| self.operand(*se)).collect())
    }

    /// Applies a lambda in its own C block; returns the names of the temporaries holding its
    /// results.
    pub fn apply(&mut self, lambda: &Lambda, args: &[String]) -> Res<Vec<String>> {
        let results: Vec<String> = lambda
            .ret
            .iter()
            .map(|t| {
                let name = self.temp("r");
                self.line(format!("{} {name};", type_str(t)));
                name
            })
            .collect();
        self.open("");
        self.lambdas += 1;
        for (p, a) in lambda.params.iter().zip(args) {
            self.declare(*p, a);
        }
        let vals = self.body(&lambda.body)?;
        for (r, v) in results.iter().zip(vals) {
            self.line(format!("{r} = {v};"));
        }
        self.lambdas -= 1;
        self.close();
        Ok(results)
    }

    fn stmt(&mut self, stmt: &Stmt) -> Res<()> {
        self.loc = stmt.loc;
        let pat = &stmt.pat;
        match &stmt.exp {
            Exp::SubExp(se) => {
                let x = self.operand(*se);
                self.declare(pat[0], &x);
            }
            Exp::BinOp(op, a, b) => {
                let t = self.prim_of(*a);
                let (x, y) = (self.operand(*a), self.operand(*b));
                let e = self.binop(*op, t, &x, &y)?;
                self.declare(pat[0], &e);
            }
            Exp::UnOp(op, a) => {
                let t = self.prim_of(*a);
                let x = self.operand(*a);
                let e = match (op, t) {
                    (UnOp::Neg, PrimType::F32 | PrimType::F64) => format!("(-{x})"),
                    (UnOp::Neg, _) => format!("og_neg({x})"),
                    (UnOp::Not, PrimType::Bool) => format!("(!{x})"),
                    (UnOp::Not, t) => format!("(({})~{x})", ctype(t)),
                };
                self.declare(pat[0], &e);
            }
            Exp::Math(f, t, args) => {
                let args: Vec<String> = args.iter().map(|a| self.operand(*a)).collect();
                let e = math(*f, *t, &args);
                self.declare(pat[0], &e);
            }
            Exp::Convert(to, a) => {
                let from = self.prim_of(*a);
                let x = self.operand(*a);
                self.declare(pat[0], &convert(from, *to, &x));
            }
            Exp::Index(a, idx) => {
                let target = self.index(*a, idx, false)?;
                let init = match target {
                    Target::Element(addr) => addr,
                    Target::View(v) => v,
                };
                self.declare(pat[0], &init);
            }
            Exp::Update(a, idx, v) => {
                // Earlier reads of the array by other threads of the block come first.
                self.barrier();
                let target = self.index(*a, idx, true)?;
                let val = self.operand(*v);
                match target {
                    Target::Element(addr) => {
                        let write = format!("{addr} = {val};");
                        if self.cooperative() {
                            self.line(format!("if (threadIdx.x == 0) {write}"));
                        } else {
                            self.line(write);
                        }
                        self.barrier();
                    }
                    Target::View(dst) => {
                        let r = self.f.subexp_type(*v).rank();
                        if r == 0 {
                            return Err(Unsupported("an update of a slice by a scalar".into()));
                        }
                        let (actual, expected) = (Self::dims(&val, r), Self::dims(&dst, r));
                        self.check_same_shape(&actual, &expected, "update")?;
                        self.copy(&dst, &val);
                    }
                }
                self.declare(pat[0], &var(*a));
            }
            Exp::Iota(n) => {
                let n = self.operand(*n);
                self.check_size(&n, "iota")?;
                let out = self.alloc(PrimType::I64, std::slice::from_ref(&n))?;
                let (first, step) = self.par();
                self.line(format!(
                    "for (i64 k = {first}; k < {n}; k += {step}) {out}.p[k] = k;"
                ));
                self.barrier();
                self.declare(pat[0], &out);
            }
            Exp::Replicate(n, v) => {
                let n = self.operand(*n);
                self.check_size(&n, "replicate")?;
                let val = self.operand(*v);
                let elem = self.f.ty(pat[0]).elem();
                let mut dims = vec![n];
                let r = self.f.subexp_type(*v).rank();
                dims.extend(Self::dims(&val, r));
                let out = self.alloc(elem, &dims)?;
                let (first, step) = self.par();
                self.line(format!("og_fill({out}, {val}, {first}, {step});"));
                self.barrier();
                self.declare(pat[0], &out);
            }
            Exp::ArrayLit(elems, elem_ty) => {
                let mut dims = vec![elems.len().to_string()];
                dims.extend(self.dims_of(elem_ty));
                let out = self.alloc(elem_ty.elem(), &dims)?;
                let rank = dims.len();
                self.single(&mut |e| {
                    for (k, x) in elems.iter().enumerate() {
                        let x = e.operand(*x);
                        e.write_row(&out, rank, &k.to_string(), &x)?;
                    }
                    Ok(())
                })?;
                self.declare(pat[0], &out);
            }
            Exp::Rearrange(a, perm) => {
                let a = var(*a);
                self.declare(pat[0], &a);
                let v = var(pat[0]);
                for (k, &d) in perm.iter().enumerate() {
                    self.line(format!("{v}.d[{k}] = {a}.d[{d}]; {v}.s[{k}] = {a}.s[{d}];"));
                }
            }
            Exp::Reshape(a, dims) => {
                let rank = self.f.ty(*a).rank();
                let view = var(*a);
                let have = Self::dims(&view, rank);
                let target: Vec<String> = dims.iter().map(|d| self.operand(*d)).collect();
                let cond = if target.len() == rank {
                    have.iter()
                        .zip(&target)
                        .map(|(x, y)| format!("{x} == {y}"))
                        .collect::<Vec<_>>()
                        .join(" && ")
                } else {
                    format!("og_count({view}) == ({})", target.join(" * "))
                };
                let mut details = have.clone();
                details.extend(target.iter().cloned());
                self.check(
                    if cond.is_empty() { "true" } else { &cond },
                    Failure::Reshape {
                        array: *a,
                        dims: dims.clone(),
                    },
                    &details,
                )?;
                let elem = self.f.ty(*a).elem();
                let copy = self.alloc(elem, &have)?;
                self.copy(&copy, &view);
                let t = ctype(elem);
                let init = format!(
                    "og_view<{t}, {}>({copy}.p, {{{}}})",
                    target.len(),
                    target.join(", ")
                );
                self.declare(pat[0], &init);
            }
            Exp::Concat(arrays) => {
                let rank = self.f.ty(arrays[0]).rank();
                let views: Vec<String> = arrays.iter().map(|a| var(*a)).collect();
                let first_rows: Vec<String> = Self::dims(&views[0], rank).split_off(1);
                for v in &views {
                    let rows = Self::dims(v, rank).split_off(1);
                    self.check_same_shape(&rows, &first_rows, "concatenation")?;
                }
                let total: Vec<String> = views.iter().map(|v| format!("{v}.d[0]")).collect();
                let mut dims = vec![format!("({})", total.join(" + "))];
                dims.extend(first_rows);
                let out = self.alloc(self.f.ty(arrays[0]).elem(), &dims)?;
                let at = self.temp("at");
                self.line(format!("i64 {at} = 0;"));
                for v in &views {
                    let part = self.temp("part");
                    self.line(format!(
                        "auto {part} = {out}; {part}.p += {at} * {out}.s[0]; {part}.d[0] = {v}.d[0];"
                    ));
                    self.copy(&part, v);
                    self.line(format!("{at} += {v}.d[0];"));
                }
                self.declare(pat[0], &out);
            }
            Exp::Copy(a) => {
                let view = var(*a);
                let ty = self.f.ty(*a);
                let dims = Self::dims(&view, ty.rank());
                let out = self.alloc(ty.elem(), &dims)?;
                self.copy(&out, &view);
                self.declare(pat[0], &out);
            }
            Exp::Assert {
                cond,
                message,
                kind,
            } => {
                let c = self.operand(*cond);
                self.check(
                    &c,
                    Failure::Assert {
                        message: message.clone(),
                        kind: *kind,
                    },
                    &[],
                )?;
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                for v in pat {
                    let ty = type_str(self.f.ty(*v));
                    self.line(format!("{ty} {};", var(*v)));
                }
                let c = self.operand(*cond);
                self.open(format!("if ({c})"));
                self.assign_results(pat, then_body)?;
                self.else_branch();
                self.assign_results(pat, else_body)?;
                self.close();
            }
            Exp::Loop { params, form, body } => self.run_loop(pat, params, form, body)?,
            Exp::Soac(soac) => {
                if self.cooperative() {
                    self.soac_block(soac, pat)?
                } else {
                    self.soac_seq(soac, pat)?
                }
            }
            Exp::Seg(_) => return Err(Unsupported("a kernel inside a kernel".to_string())),
            Exp::Threshold { .. } => {
                return Err(Unsupported("a threshold inside a kernel".to_string()));
            }
        }
        Ok(())
    }

    /// Emits `body` and assigns its results to the (declared) variables `pat`.
    fn assign_results(&mut self, pat: &[VarId], body: &Body) -> Res<()> {
        let vals = self.body(body)?;
        for (v, val) in pat.iter().zip(vals) {
            self.line(format!("{} = {val};", var(*v)));
        }
        Ok(())
    }

    /// Runs `emit` on one thread (thread 0 at block level, between barriers).
    fn single(&mut self, emit: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        if !self.cooperative() {
            return emit(self);
        }
        self.line("__syncthreads();");
        self.open("if (threadIdx.x == 0)");
        self.lambdas += 1;
        emit(self)?;
        self.lambdas -= 1;
        self.close();
        self.line("__syncthreads();");
        Ok(())
    }

    fn run_loop(
        &mut self,
        pat: &[VarId],
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
    ) -> Res<()> {
        for (p, init) in params {
            let x = self.operand(*init);
            self.declare(*p, &x);
        }
        match form {
            LoopForm::For { index, bound } => {
                let i = var(*index);
                let n = self.operand(*bound);
                self.open(format!("for (i64 {i} = 0; {i} < {n}; {i}++)"));
            }
            LoopForm::While { cond } => self.open(format!("while ({})", var(*cond))),
        }
        let vals = self.body(body)?;
        // The new values may read the old ones: through temporaries.
        let temps: Vec<String> = params
            .iter()
            .zip(&vals)
            .map(|((p, _), val)| {
                let t = self.temp("next");
                self.line(format!("{} {t} = {val};", type_str(self.f.ty(*p))));
                t
            })
            .collect();
        for ((p, _), t) in params.iter().zip(temps) {
            self.line(format!("{} = {t};", var(*p)));
        }
        self.close();
        for (v, (p, _)) in pat.iter().zip(params) {
            self.declare(*v, &var(*p));
        }
        Ok(())
    }

    // ----- indexing -----

    fn index(&mut self, a: VarId, idx: &[DimIndex], for_update: bool) -> Res<Target> {
        let rank = self.f.ty(a).rank();
        let elem = self.f.ty(a).elem();
        let view = var(a);
        let mut conds = Vec::new();
        let mut details = Self::dims(&view, rank);
        let mut offset = Vec::new();
        let mut dims = Vec::new();
        let mut strides = Vec::new();
        for (k, d) in idx.iter().enumerate() {
            match d {
                DimIndex::Fix(i) => {
                    let i = self.operand(*i);
                    conds.push(format!("(u64)({i}) < (u64){view}.d[{k}]"));
                    offset.push(format!("({i}) * {view}.s[{k}]"));
                    details.push(i);
                }
                DimIndex::Slice { start, len, stride } => {
                    let (s, n, st) = (
                        self.operand(*start),
                        self.operand(*len),
                        self.operand(*stride),
                    );
                    conds.push(format!("og_slice_ok({view}.d[{k}], {s}, {n}, {st})"));
                    offset.push(format!("({s}) * {view}.s[{k}]"));
                    dims.push(n.clone());
                    strides.push(format!("{view}.s[{k}] * ({st})"));
                    details.extend([s, n, st]);
                }
            }
        }
        if self.bounds_checked() && !conds.is_empty() {
            self.check(
                &conds.join(" && "),
                Failure::Index {
                    rank,
                    idx: idx.to_vec(),
                    update: for_update,
                },
                &details,
            )?;
        }
        let offset = if offset.is_empty() {
            "0".to_string()
        } else {
            offset.join(" + ")
        };
        for k in idx.len()..rank {
            dims.push(format!("{view}.d[{k}]"));
            strides.push(format!("{view}.s[{k}]"));
        }
        if dims.is_empty() {
            return Ok(Target::Element(format!("{view}.p[{offset}]")));
        }
        let name = self.temp("ix");
        self.line(format!("{} {name};", view_type(elem, dims.len())));
        self.line(format!("{name}.p = {view}.p + ({offset});"));
        for (k, (d, s)) in dims.iter().zip(&strides).enumerate() {
            self.line(format!("{name}.d[{k}] = {d}; {name}.s[{k}] = {s};"));
        }
        Ok(Target::View(name))
    }

    // ----- SOACs -----

    /// The input views of a SOAC, checked to have `width` rows.
    fn soac_inputs(&mut self, soac: &Soac) -> Res<(String, Vec<(String, usize)>)> {
        let width = self.operand(soac.width());
        let mut inputs = Vec::new();
        for v in soac.inputs() {
            let name = var(*v);
            let rank = self.f.ty(*v).rank();
            self.check_same_shape(
                &[format!("{name}.d[0]")],
                std::slice::from_ref(&width),
                "SOAC input",
            )?;
            inputs.push((name, rank));
        }
        Ok((width, inputs))
    }

    fn rows(inputs: &[(String, usize)], i: &str) -> Vec<String> {
        inputs.iter().map(|(v, r)| Self::row(v, *r, i)).collect()
    }

    /// Accumulator variables for operators, initialised to their neutral elements.
    fn accumulators(&mut self, neutrals: &[&[SubExp]]) -> Res<Vec<Vec<String>>> {
        let mut accs = Vec::new();
        for neutral in neutrals {
            let mut names = Vec::new();
            for n in neutral.iter() {
                let ty = self.f.subexp_type(*n);
                if ty.rank() > 0 {
                    return Err(Unsupported(
                        "a reduction or scan of arrays in a kernel".to_string(),
                    ));
                }
                let name = self.temp("acc");
                let init = self.operand(*n);
                self.line(format!("{} {name} = {init};", ctype(ty.elem())));
                names.push(name);
            }
            accs.push(names);
        }
        Ok(accs)
    }

    /// `acc = op(acc, vals)`.
    pub fn accumulate(&mut self, op: &Lambda, acc: &[String], vals: &[String]) -> Res<()> {
        let mut args = acc.to_vec();
        args.extend(vals.iter().cloned());
        let new = self.apply(op, &args)?;
        for (a, n) in acc.iter().zip(new) {
            self.line(format!("{a} = {n};"));
        }
        Ok(())
    }

    /// The arrays a Screma returns (scans and maps) allocated for pattern `pat`.
    fn screma_arrays(&mut self, pat: &[VarId], n_scan: usize, n_red: usize) -> Res<Vec<String>> {
        let mut arrays = Vec::new();
        for (j, v) in pat.iter().enumerate() {
            if j >= n_scan && j < n_scan + n_red {
                continue;
            }
            let ty = self.f.ty(*v).clone();
            let dims = self.dims_of(&ty);
            arrays.push(self.alloc(ty.elem(), &dims)?);
        }
        Ok(arrays)
    }

    /// Binds the pattern of a Screma: scanned arrays, reduced values, mapped arrays.
    fn bind_screma(&mut self, pat: &[VarId], arrays: &[String], reds: &[String], n_scan: usize) {
        let values = arrays[..n_scan]
            .iter()
            .chain(reds)
            .chain(&arrays[n_scan..])
            .cloned()
            .collect::<Vec<_>>();
        for (v, x) in pat.iter().zip(values) {
            self.declare(*v, &x);
        }
    }

    fn soac_seq(&mut self, soac: &Soac, pat: &[VarId]) -> Res<()> {
        let (width, inputs) = self.soac_inputs(soac)?;
        let i = self.temp("i");
        match soac {
            Soac::Screma {
                map, scans, reds, ..
            } => {
                let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
                let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
                let arrays = self.screma_arrays(pat, n_scan, n_red)?;
                let ops = ir::screma_operators(scans, reds);
                let neutrals: Vec<&[SubExp]> = ops.iter().map(|(_, n)| *n).collect();
                let accs = self.accumulators(&neutrals)?;
                self.open(format!("for (i64 {i} = 0; {i} < {width}; {i}++)"));
                let vals = self.apply(map, &Self::rows(&inputs, &i))?;
                let mut k = 0;
                for (j, (op, neutral)) in ops.iter().enumerate() {
                    let m = neutral.len();
                    self.accumulate(op, &accs[j], &vals[k..k + m])?;
                    if k < n_scan {
                        for (c, acc) in accs[j].iter().enumerate() {
                            let dst = arrays[k + c].clone();
                            self.write_row(&dst, 1, &i, acc)?;
                        }
                    }
                    k += m;
                }
                for (c, val) in vals[k..].iter().enumerate() {
                    let dst = arrays[n_scan + c].clone();
                    let rank = self.f.ty(pat[n_scan + n_red + c]).rank();
                    self.write_row(&dst, rank, &i, val)?;
                }
                self.close();
                let red_accs: Vec<String> = accs[scans.len()..].concat();
                self.bind_screma(pat, &arrays, &red_accs, n_scan);
            }
            Soac::Scatter { map, dests, .. } => {
                self.open(format!("for (i64 {i} = 0; {i} < {width}; {i}++)"));
                let vals = self.apply(map, &Self::rows(&inputs, &i))?;
                for (d, pair) in dests.iter().zip(vals.chunks(2)) {
                    let dest = var(*d);
                    let rank = self.f.ty(*d).rank();
                    self.open(format!("if ((u64){} < (u64){dest}.d[0])", pair[0]));
                    self.write_row(&dest, rank, &pair[0], &pair[1])?;
                    self.close();
                }
                self.close();
                for (v, d) in pat.iter().zip(dests) {
                    self.declare(*v, &var(*d));
                }
            }
            Soac::Hist { map, hists, .. } => {
                self.open(format!("for (i64 {i} = 0; {i} < {width}; {i}++)"));
                let vals = self.apply(map, &Self::rows(&inputs, &i))?;
                let mut k = 0;
                for h in hists {
                    let bins = self.operand(h.num_bins);
                    let dests: Vec<(String, usize)> = h
                        .dests
                        .iter()
                        .map(|d| (var(*d), self.f.ty(*d).rank()))
                        .collect();
                    let bin = vals[k].clone();
                    self.open(format!("if ((u64){bin} < (u64){bins})"));
                    self.combine_into(&h.op, &dests, &bin, &vals[k + 1..k + 1 + dests.len()])?;
                    self.close();
                    k += 1 + dests.len();
                }
                self.close();
                let all: Vec<VarId> = hists.iter().flat_map(|h| h.dests.clone()).collect();
                for (v, d) in pat.iter().zip(all) {
                    self.declare(*v, &var(d));
                }
            }
        }
        Ok(())
    }

    /// `dest[row] = op(dest[row], vals)` for every destination (rows are scalars or arrays).
    pub fn combine_into(
        &mut self,
        op: &Lambda,
        dests: &[(String, usize)],
        row: &str,
        vals: &[String],
    ) -> Res<()> {
        let mut args: Vec<String> = dests.iter().map(|(d, r)| Self::row(d, *r, row)).collect();
        args.extend(vals.iter().cloned());
        let new = self.apply(op, &args)?;
        for ((d, r), n) in dests.iter().zip(new) {
            self.write_row(d, *r, row, &n)?;
        }
        Ok(())
    }

    /// A SOAC at block level, shared out across the block's threads.
    fn soac_block(&mut self, soac: &Soac, pat: &[VarId]) -> Res<()> {
        let Soac::Screma {
            map, scans, reds, ..
        } = soac
        else {
            // Scatters and histograms apply their points in order: on one thread. They
            // return their (updated) destinations.
            self.single(&mut |e| e.soac_seq(soac, &[]))?;
            let dests: Vec<VarId> = match soac {
                Soac::Scatter { dests, .. } => dests.clone(),
                Soac::Hist { hists, .. } => hists.iter().flat_map(|h| h.dests.clone()).collect(),
                Soac::Screma { .. } => unreachable!("handled below"),
            };
            for (v, d) in pat.iter().zip(dests) {
                self.declare(*v, &var(d));
            }
            return Ok(());
        };
        let (width, inputs) = self.soac_inputs(soac)?;
        let n_scan: usize = scans.iter().map(|s| s.neutral.len()).sum();
        let n_red: usize = reds.iter().map(|r| r.neutral.len()).sum();
        let arrays = self.screma_arrays(pat, n_scan, n_red)?;
        let i = self.temp("i");
        let map_ranks: Vec<usize> = pat[n_scan + n_red..]
            .iter()
            .map(|v| self.f.ty(*v).rank())
            .collect();
        if scans.is_empty() && reds.is_empty() {
            // A map: rows shared out one per thread in turn (coalesced).
            self.open(format!(
                "for (i64 {i} = threadIdx.x; {i} < {width}; {i} += blockDim.x)"
            ));
            self.lambdas += 1;
            let vals = self.apply(map, &Self::rows(&inputs, &i))?;
            for (c, val) in vals.iter().enumerate() {
                self.write_row(&arrays[c], map_ranks[c], &i, val)?;
            }
            self.lambdas -= 1;
            self.close();
            self.line("__syncthreads();");
            self.bind_screma(pat, &arrays, &[], 0);
            return Ok(());
        }
        self.shared_slots = self.shared_slots.max(n_scan + n_red);
        // Contiguous chunks, one per thread, so that operators combine in order.
        let (lo, hi) = (self.temp("lo"), self.temp("hi"));
        self.line(format!(
            "const i64 {lo} = threadIdx.x * {width} / blockDim.x, {hi} = (threadIdx.x + 1) * {width} / blockDim.x;"
        ));
        let ops = ir::screma_operators(scans, reds);
        let neutrals: Vec<&[SubExp]> = ops.iter().map(|(_, n)| *n).collect();
        let accs = self.accumulators(&neutrals)?;
        let types: Vec<PrimType> = neutrals
            .iter()
            .flat_map(|n| n.iter().map(|x| self.prim_of(*x)))
            .collect();
        // Pass 1: this thread's chunk: the mapped rows, its totals.
        self.open(format!("for (i64 {i} = {lo}; {i} < {hi}; {i}++)"));
        self.lambdas += 1;
        let vals = self.apply(map, &Self::rows(&inputs, &i))?;
        let mut k = 0;
        for (j, (op, neutral)) in ops.iter().enumerate() {
            self.accumulate(op, &accs[j], &vals[k..k + neutral.len()])?;
            k += neutral.len();
        }
        for (c, val) in vals[k..].iter().enumerate() {
            self.write_row(&arrays[n_scan + c], map_ranks[c], &i, val)?;
        }
        self.lambdas -= 1;
        self.close();
        // The chunks' totals in shared memory, one slot array per component.
        let slots: Vec<String> = types
            .iter()
            .enumerate()
            .map(|(c, t)| format!("(({}*)(og_shared + {c} * 8 * (i64)blockDim.x))", ctype(*t)))
            .collect();
        let flat: Vec<String> = accs.concat();
        let mut base = 0;
        let mut carries: Vec<Vec<String>> = Vec::new();
        for (j, (op, neutral)) in ops.iter().enumerate() {
            let m = neutral.len();
            let sh = &slots[base..base + m];
            for (c, s) in sh.iter().enumerate() {
                self.line(format!("{s}[threadIdx.x] = {};", flat[base + c]));
            }
            self.line("__syncthreads();");
            let d = self.temp("d");
            if j < scans.len() {
                // Inclusive Hillis–Steele scan of the totals, then each thread's carry-in.
                self.open(format!("for (i64 {d} = 1; {d} < blockDim.x; {d} *= 2)"));
                let news: Vec<String> = (0..m)
                    .map(|c| {
                        let t = self.temp("x");
                        self.line(format!(
                            "{} {t} = {}[threadIdx.x];",
                            ctype(types[base + c]),
                            sh[c]
                        ));
                        t
                    })
                    .collect();
                self.open(format!("if (threadIdx.x >= {d})"));
                self.lambdas += 1;
                let mut args: Vec<String> = sh
                    .iter()
                    .map(|s| format!("{s}[threadIdx.x - {d}]"))
                    .collect();
                args.extend(news.iter().cloned());
                let r = self.apply(op, &args)?;
                for (x, y) in news.iter().zip(r) {
                    self.line(format!("{x} = {y};"));
                }
                self.lambdas -= 1;
                self.close();
                self.line("__syncthreads();");
                for (s, x) in sh.iter().zip(&news) {
                    self.line(format!("{s}[threadIdx.x] = {x};"));
                }
                self.line("__syncthreads();");
                self.close();
                let carry: Vec<String> = (0..m)
                    .map(|c| {
                        let t = self.temp("carry");
                        let n = self.operand(neutral[c]);
                        self.line(format!(
                            "const {} {t} = threadIdx.x == 0 ? {n} : {}[threadIdx.x - 1];",
                            ctype(types[base + c]),
                            sh[c]
                        ));
                        t
                    })
                    .collect();
                carries.push(carry);
            } else {
                // Order-preserving tree: slot t takes slot t + d when t is a multiple of 2d.
                self.open(format!("for (i64 {d} = 1; {d} < blockDim.x; {d} *= 2)"));
                self.open(format!(
                    "if (threadIdx.x % (2 * {d}) == 0 && threadIdx.x + {d} < blockDim.x)"
                ));
                self.lambdas += 1;
                let mut args: Vec<String> =
                    sh.iter().map(|s| format!("{s}[threadIdx.x]")).collect();
                args.extend(sh.iter().map(|s| format!("{s}[threadIdx.x + {d}]")));
                let r = self.apply(op, &args)?;
                for (s, y) in sh.iter().zip(r) {
                    self.line(format!("{s}[threadIdx.x] = {y};"));
                }
                self.lambdas -= 1;
                self.close();
                self.line("__syncthreads();");
                self.close();
                for (c, s) in sh.iter().enumerate() {
                    self.line(format!("{} = {s}[0];", flat[base + c]));
                }
            }
            self.line("__syncthreads();");
            base += m;
        }
        if !scans.is_empty() {
            // Pass 2: the chunk again from its carry-in, writing the scans.
            for (acc, carry) in accs.iter().zip(&carries) {
                for (a, c) in acc.iter().zip(carry) {
                    self.line(format!("{a} = {c};"));
                }
            }
            self.open(format!("for (i64 {i} = {lo}; {i} < {hi}; {i}++)"));
            self.lambdas += 1;
            let vals = self.apply(map, &Self::rows(&inputs, &i))?;
            let mut k = 0;
            for (j, scan) in scans.iter().enumerate() {
                let m = scan.neutral.len();
                self.accumulate(&scan.lambda, &accs[j], &vals[k..k + m])?;
                for (c, acc) in accs[j].iter().enumerate() {
                    self.write_row(&arrays[k + c], 1, &i, acc)?;
                }
                k += m;
            }
            self.lambdas -= 1;
            self.close();
            self.line("__syncthreads();");
        }
        let red_accs: Vec<String> = accs[scans.len()..].concat();
        self.bind_screma(pat, &arrays, &red_accs, n_scan);
        Ok(())
    }

    // ----- scalar operations -----

    fn binop(&mut self, op: BinOp, t: PrimType, x: &str, y: &str) -> Res<String> {
        let cmp = match op {
            BinOp::Eq => Some("=="),
            BinOp::Ne => Some("!="),
            BinOp::Lt => Some("<"),
            BinOp::Le => Some("<="),
            BinOp::Gt => Some(">"),
            BinOp::Ge => Some(">="),
            _ => None,
        };
        if let Some(c) = cmp {
            return Ok(format!("({x} {c} {y})"));
        }
        if t == PrimType::Bool {
            return match op {
                BinOp::BitAnd => Ok(format!("({x} && {y})")),
                BinOp::BitOr => Ok(format!("({x} || {y})")),
                BinOp::BitXor => Ok(format!("({x} != {y})")),
                _ => Err(Unsupported(format!("`{}` on bool", op.symbol()))),
            };
        }
        if t.is_float() {
            return match op {
                BinOp::Add => Ok(format!("({x} + {y})")),
                BinOp::Sub => Ok(format!("({x} - {y})")),
                BinOp::Mul => Ok(format!("({x} * {y})")),
                BinOp::Div => Ok(format!("({x} / {y})")),
                BinOp::Mod => Ok(format!("og_fmod_floor({x}, {y})")),
                BinOp::Quot => Ok(format!("trunc({x} / {y})")),
                BinOp::Rem => Ok(format!("fmod({x}, {y})")),
                BinOp::Pow => Ok(format!("pow({x}, {y})")),
                _ => Err(Unsupported(format!("`{}` on floats", op.symbol()))),
            };
        }
        let f = match op {
            BinOp::Add => "og_add",
            BinOp::Sub => "og_sub",
            BinOp::Mul => "og_mul",
            BinOp::Pow => "og_ipow",
            BinOp::Shl => "og_shl",
            BinOp::Shr => "og_shr",
            BinOp::BitAnd => return Ok(format!("({x} & {y})")),
            BinOp::BitOr => return Ok(format!("({x} | {y})")),
            BinOp::BitXor => return Ok(format!("({x} ^ {y})")),
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem => {
                self.check(&format!("{y} != 0"), Failure::DivByZero { op }, &[])?;
                match op {
                    BinOp::Div => "og_div",
                    BinOp::Mod => "og_mod",
                    BinOp::Quot => "og_quot",
                    _ => "og_rem",
                }
            }
            _ => return Err(Unsupported(format!("operator `{}`", op.symbol()))),
        };
        Ok(format!("(({}){f}({x}, {y}))", ctype(t)))
    }
}

/// Where an index leads: an element (an lvalue expression) or a view (its name).
enum Target {
    Element(String),
    View(String),
}

/// A math function at type `t`.
fn math(f: MathFn, t: PrimType, args: &[String]) -> String {
    let x = &args[0];
    if t.is_float() {
        let name = match f {
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Abs => "fabs",
            MathFn::Sgn => "og_fsgn",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            // Half to even, as the interpreter's `round_ties_even`.
            MathFn::Round => "rint",
            MathFn::Trunc => "trunc",
            // IEEE minNum/maxNum: a NaN operand yields the other one, as Rust's min/max.
            MathFn::Min => "fmin",
            MathFn::Max => "fmax",
            MathFn::Pow => "pow",
            MathFn::IsNan => "isnan",
            MathFn::IsInf => "isinf",
        };
        return format!("{name}({})", args.join(", "));
    }
    let c = ctype(t);
    match (f, t) {
        (MathFn::Min, _) => format!("({x} <= {y} ? {x} : {y})", y = args[1]),
        (MathFn::Max, _) => format!("({x} >= {y} ? {x} : {y})", y = args[1]),
        (MathFn::Pow, _) => format!("(({c})og_ipow({x}, {}))", args[1]),
        (MathFn::Abs, PrimType::U8) => x.clone(),
        (MathFn::Sgn, PrimType::U8) => format!("((u8)({x} != 0))"),
        (MathFn::Abs, _) => format!("(({c})og_iabs({x}))"),
        (MathFn::Sgn, _) => format!("(({c})og_isgn({x}))"),
        // The type checker gives integers no other math function.
        _ => format!("(({c})0)"),
    }
}

/// A conversion with the interpreter's rules (wrapping between integers, saturating from
/// floats with NaN giving 0, `x != 0` to bool).
fn convert(from: PrimType, to: PrimType, x: &str) -> String {
    use PrimType as P;
    let c = ctype(to);
    match (from, to) {
        _ if from == to => x.to_string(),
        (_, P::Bool) => format!("({x} != 0)"),
        (P::Bool, _) => format!("(({c})({x} ? 1 : 0))"),
        (P::F32 | P::F64, P::I8 | P::I16 | P::I32 | P::I64 | P::U8) => {
            let (lo, hi) = match to {
                P::I8 => ("((i8)-128)", "((i8)127)"),
                P::I16 => ("((i16)-32768)", "((i16)32767)"),
                P::I32 => ("((i32)(-2147483647 - 1))", "((i32)2147483647)"),
                P::I64 => (
                    "((i64)(-9223372036854775807LL - 1))",
                    "((i64)9223372036854775807LL)",
                ),
                _ => ("((u8)0)", "((u8)255)"),
            };
            format!("og_f2i<{c}>({x}, {lo}, {hi})")
        }
        _ => format!("(({c}){x})"),
    }
}
