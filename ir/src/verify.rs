//! Verifier for the core and kernel IR: checks the invariants documented in [`crate`] and
//! [`crate::kir`] and reports every violation, one line each, naming the function and the
//! statement (`main: let ys_3: [n_0]f32: ...`). The pipeline runs it after every pass in tests
//! and debug builds, so a pass that breaks the IR is caught where it happens.
//!
//! # What is checked
//!
//! - Scoping: every variable is bound once (function and size parameters, patterns, lambda and
//!   loop parameters, loop indices, segment-space indices), before its uses, and used only in
//!   the scope of its binding. Every dimension of every bound type is an `i64` constant or an
//!   `i64` variable in scope; a pattern may use its own earlier variables (existential sizes).
//! - Types: each construct's typing rule (operands of a `BinOp` agree, comparisons give `bool`,
//!   `Math` arity, index rank, lambda arities against scans, reductions, inputs and
//!   destinations, `if`/`loop`/kernel results, ...) and the pattern's arity and types against
//!   the expression's.
//! - Form: kernel IR has no SOAC at host level (outside kernel bodies); core IR declares no
//!   thresholds. Thresholds are declared once. (That core IR holds no kernel or threshold, and
//!   a kernel no kernel, the types say: see [`crate::Form`].)
//! - Uniqueness: a consumed array (an `Update` target, a `Scatter`/`Hist` destination, the
//!   initial value of a loop parameter the loop body consumes) and everything it aliases
//!   (copies by `let`, slices, rearranged and reshaped views) is not used after the consuming
//!   statement. Only unique function parameters may be consumed, and a lambda, loop or kernel
//!   body consumes only variables bound inside it (a loop's own parameters included). The two
//!   branches of an `if` are checked separately: what one consumes the other may use.
//!
//! # Sizes
//!
//! Dimensions compare by [`SubExp`] equality, except where a value flows into a declared type
//! whose sizes the type checker proved equal or the evaluator checks at run time. There two
//! dimensions agree unless both are constants and differ:
//! - the results of a body against the declared results (`if` branches, loop bodies, lambda
//!   bodies, kernel bodies) and the initial values of loop parameters against their types,
//!   after substituting the pattern's or the parameters' own existential sizes;
//! - SOAC inputs against the width and lambda parameters against input rows;
//! - the value of an `Update` against the slice it replaces, array literal elements, the rows
//!   of `Concat` operands, neutral elements, scatter values and histogram destinations.
//!
//! That is what the passes need ([`verify`]: the type checker proved such sizes equal, or the
//! program checks them at run time). A program read from a file (a library) gets
//! [`verify_exact`]: the code generators omit the bounds check of an index proven below a
//! dimension of the array's type (`ogham_compiler::back::lower::bounds`), so a value's
//! declared sizes must be its sizes, and every comparison above is exact, as are SOAC inputs'
//! outer sizes against the width and a `Concat`'s declared outer size against the sum of its
//! operands' (a variable bound to `a + b`, nested for more operands). Exact is up to the
//! equalities the program establishes before the comparison, in the same body or an enclosing
//! one: an `i64` copied by `let x = y`, and the operands of an `a == b` (`i64`s) that an
//! `assert` checked. Everything the compiler emits passes it (`tests/filetests.rs`, the
//! `loads::` trials); an `Update`'s value is still compared by element type and rank only,
//! since the generated code checks its shape at run time.

use crate::kir::{HostOp, SegKind, SegOp, ThresholdId};
use crate::math::MathFn;
use crate::print::{print_pattern, print_subexp, print_type, size_params, var_name};
use crate::traverse::{Subst, substitute_type};
use crate::types::PrimType;
use crate::{
    Body, Const, DimIndex, Exp, Form, Function, HistOp, Lambda, LoopForm, Program, RedOp, ScanOp,
    Soac, Stmt, SubExp, Type, VarId,
};
use std::collections::{BTreeMap, BTreeSet};

/// Checks the invariants of the program's form (see the module headers of `ir` and `kir`);
/// returns every violation found, each as one line naming the function and the variable or
/// statement. Sizes compare leniently where the compiler's passes rely on it (see "Sizes").
pub fn verify<H: Form>(program: &Program<H>) -> Result<(), Vec<String>> {
    check(program, false)
}

/// [`verify`] with every size compared exactly (see "Sizes"): the check of a program read from
/// a file (a library), whose sizes the code generators then trust.
pub fn verify_exact<H: Form>(program: &Program<H>) -> Result<(), Vec<String>> {
    check(program, true)
}

fn check<H: Form>(program: &Program<H>, exact: bool) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut thresholds = BTreeSet::new();
    for t in &program.thresholds {
        if !thresholds.insert(t.id) {
            errors.push(format!("threshold {} is declared twice", t.id));
        }
    }
    if !H::HOST && !program.thresholds.is_empty() {
        errors.push("core IR declares thresholds".to_string());
    }
    for function in &program.functions {
        let mut checker = Checker::new(function, &thresholds, exact);
        checker.function();
        errors.append(&mut checker.errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Where the checker is, for messages: formatted only when an error is reported.
#[derive(Clone, Copy)]
enum Context<'a> {
    Parameters,
    Result,
    /// The statement binding this pattern.
    Let(&'a [VarId]),
}

struct Checker<'a, F: Form> {
    f: &'a Function<F>,
    thresholds: &'a BTreeSet<ThresholdId>,
    errors: Vec<String>,
    /// Whether each variable has been bound so far (anywhere in the function).
    bound: Vec<bool>,
    in_scope: Vec<bool>,
    /// The variables in scope, innermost last, so that leaving a scope can unbind them.
    scope: Vec<VarId>,
    /// The consumption frame (nesting of lambda, loop and kernel bodies) of each binding.
    frame_of: Vec<usize>,
    frame: usize,
    /// Consumed variables, with the statement that consumed them.
    consumed: BTreeMap<VarId, Context<'a>>,
    /// For each array variable, the other variables it may alias.
    aliases: Vec<Vec<VarId>>,
    non_unique_params: BTreeSet<VarId>,
    /// The statement being checked, for messages.
    context: Context<'a>,
    /// Whether every size is compared exactly ([`verify_exact`]).
    exact: bool,
    /// Sizes known equal where the statement being checked runs, innermost last: an `i64`
    /// copied by `let`, the operands of an `==` that an `assert` before it checked.
    equal: Vec<(SubExp, SubExp)>,
    /// The operands of each `bool` variable bound to an `==` of two `i64`s.
    equalities: BTreeMap<VarId, (SubExp, SubExp)>,
    /// The operands of each `i64` variable bound to a `+` (for the sizes of concatenations).
    sums: BTreeMap<VarId, (SubExp, SubExp)>,
}

impl<'a, F: Form> Checker<'a, F> {
    fn new(f: &'a Function<F>, thresholds: &'a BTreeSet<ThresholdId>, exact: bool) -> Self {
        let n = f.vars.len();
        Checker {
            f,
            thresholds,
            errors: Vec::new(),
            bound: vec![false; n],
            in_scope: vec![false; n],
            scope: Vec::new(),
            frame_of: vec![0; n],
            frame: 0,
            consumed: BTreeMap::new(),
            aliases: vec![Vec::new(); n],
            non_unique_params: f
                .params
                .iter()
                .filter(|p| !p.unique)
                .map(|p| p.var)
                .collect(),
            context: Context::Parameters,
            exact,
            equal: Vec::new(),
            equalities: BTreeMap::new(),
            sums: BTreeMap::new(),
        }
    }

    /// The sizes known equal to `a` (`a` first).
    fn class(&self, a: SubExp) -> Vec<SubExp> {
        let mut seen = vec![a];
        let mut next = 0;
        while let Some(&x) = seen.get(next) {
            for &(p, q) in &self.equal {
                for (from, to) in [(p, q), (q, p)] {
                    if from == x && !seen.contains(&to) {
                        seen.push(to);
                    }
                }
            }
            next += 1;
        }
        seen
    }

    /// Whether sizes `a` and `b` are equal: the same operand, or linked by known equalities.
    fn same(&self, a: SubExp, b: SubExp) -> bool {
        a == b || self.class(a).contains(&b)
    }

    /// Whether size `d` is the sum of `parts`: equal to the one part, to a variable bound to
    /// `x + y` with `y` the last part and `x` the sum of the others (or the other way round),
    /// or constants that add up.
    fn is_sum(&self, d: SubExp, parts: &[SubExp]) -> bool {
        let [rest @ .., last] = parts else {
            return d == SubExp::i64(0);
        };
        if rest.is_empty() {
            return self.same(d, *last);
        }
        let constant = |se: SubExp| match se {
            SubExp::Const(Const::I64(n)) => Some(n),
            _ => None,
        };
        let total = parts
            .iter()
            .try_fold(0i64, |sum, &p| sum.checked_add(constant(p)?));
        if total.is_some() && total == constant(d) {
            return true;
        }
        self.class(d).iter().any(|s| {
            let Some(&(x, y)) = s.as_var().and_then(|v| self.sums.get(&v)) else {
                return false;
            };
            (self.same(y, *last) && self.is_sum(x, rest))
                || (self.same(x, *last) && self.is_sum(y, rest))
        })
    }

    /// Whether `actual` fits `expected`: the same element type and rank, and equal dimensions
    /// ([`Checker::same`]), or (when `lenient` and not [`verify_exact`]) dimensions that are not
    /// two different constants.
    fn fits(&self, expected: &Type, actual: &Type, lenient: bool) -> bool {
        let lenient = lenient && !self.exact;
        expected.elem() == actual.elem()
            && expected.rank() == actual.rank()
            && expected.shape().iter().zip(actual.shape()).all(|(&a, &b)| {
                self.same(a, b)
                    || (lenient && !matches!((a, b), (SubExp::Const(_), SubExp::Const(_))))
            })
    }

    fn error(&mut self, message: String) {
        self.errors.push(format!(
            "{}: {}: {message}",
            self.f.name,
            self.show_context(self.context)
        ));
    }

    fn show_context(&self, context: Context) -> String {
        match context {
            Context::Parameters => "parameters".to_string(),
            Context::Result => "result".to_string(),
            Context::Let(pat) => format!("let {}", print_pattern(self.f, pat)),
        }
    }

    fn name(&self, v: VarId) -> String {
        var_name(self.f, v)
    }

    fn show(&self, ty: &Type) -> String {
        print_type(self.f, ty)
    }

    fn known(&self, v: VarId) -> bool {
        v.index() < self.f.vars.len()
    }

    // ---- scopes and bindings ----

    fn bind(&mut self, v: VarId) {
        if !self.known(v) {
            self.error(format!("variable {} is not in the arena", self.name(v)));
            return;
        }
        if self.bound[v.index()] {
            self.error(format!("{} is bound twice", self.name(v)));
        }
        let shape = self.f.ty(v).shape().to_vec();
        for dim in shape {
            self.check_dim(dim, &format!("the type of {}", self.name(v)));
        }
        self.bound[v.index()] = true;
        self.in_scope[v.index()] = true;
        self.frame_of[v.index()] = self.frame;
        self.scope.push(v);
    }

    fn leave_scope(&mut self, mark: usize) {
        for v in self.scope.drain(mark..) {
            self.in_scope[v.index()] = false;
        }
    }

    /// A dimension must be an `i64` constant or an `i64` variable in scope.
    fn check_dim(&mut self, dim: SubExp, what: &str) {
        match dim {
            SubExp::Const(Const::I64(_)) => {}
            SubExp::Const(c) => self.error(format!(
                "dimension {} in {what} is not an i64",
                print_subexp(self.f, SubExp::Const(c))
            )),
            SubExp::Var(v) => {
                if !self.known(v) || !self.in_scope[v.index()] {
                    self.error(format!("size {} in {what} is not in scope", self.name(v)));
                } else if *self.f.ty(v) != Type::Prim(PrimType::I64) {
                    self.error(format!("size {} in {what} is not an i64", self.name(v)));
                }
            }
        }
    }

    fn check_type_dims(&mut self, ty: &Type, what: &str) {
        for &dim in ty.shape() {
            self.check_dim(dim, what);
        }
    }

    // ---- uses and consumption ----

    /// The type of a used variable, after checking that it is in scope and not consumed.
    fn use_var(&mut self, v: VarId) -> Option<Type> {
        if !self.known(v) {
            self.error(format!("variable {} is not in the arena", self.name(v)));
            return None;
        }
        if !self.in_scope[v.index()] {
            self.error(format!("{} is not in scope", self.name(v)));
        }
        let by = std::iter::once(v)
            .chain(self.aliases[v.index()].iter().copied())
            .find_map(|a| self.consumed.get(&a).copied());
        if let Some(by) = by {
            self.error(format!(
                "{} is used after being consumed by `{}`",
                self.name(v),
                self.show_context(by)
            ));
        }
        Some(self.f.ty(v).clone())
    }

    fn use_subexp(&mut self, se: SubExp) -> Option<Type> {
        match se {
            SubExp::Const(c) => Some(Type::Prim(c.prim_type())),
            SubExp::Var(v) => self.use_var(v),
        }
    }

    fn use_array(&mut self, v: VarId, what: &str) -> Option<Type> {
        let ty = self.use_var(v)?;
        if ty.rank() == 0 {
            self.error(format!("{what} {} is not an array", self.name(v)));
            return None;
        }
        Some(ty)
    }

    fn expect_prim(&mut self, se: SubExp, expected: PrimType, what: &str) {
        if let Some(ty) = self.use_subexp(se)
            && ty != Type::Prim(expected)
        {
            self.error(format!(
                "{what} {} has type {}, expected {expected}",
                print_subexp(self.f, se),
                self.show(&ty)
            ));
        }
    }

    fn expect_fits(&mut self, what: &str, expected: &Type, actual: &Type, lenient: bool) {
        if !self.fits(expected, actual, lenient) {
            self.error(format!(
                "{what} has type {}, expected {}",
                self.show(actual),
                self.show(expected)
            ));
        }
    }

    /// Marks `v` (and what it aliases) consumed by the current statement.
    fn consume(&mut self, v: VarId) {
        if !self.known(v) {
            return;
        }
        let targets: Vec<VarId> = std::iter::once(v)
            .chain(self.aliases[v.index()].iter().copied())
            .collect();
        for &t in &targets {
            if self.non_unique_params.contains(&t) {
                self.error(format!(
                    "consumes {}, a parameter that is not unique",
                    self.name(t)
                ));
            }
            if self.frame_of[t.index()] < self.frame {
                self.error(format!(
                    "consumes {}, which is bound outside the enclosing lambda, loop or kernel",
                    self.name(t)
                ));
            }
        }
        for t in targets {
            self.consumed.insert(t, self.context);
        }
    }

    // ---- functions, bodies, statements ----

    fn function(&mut self) {
        self.context = Context::Parameters;
        for size in size_params(self.f) {
            self.bind(size);
            if self.known(size) && *self.f.ty(size) != Type::Prim(PrimType::I64) {
                self.error(format!("size parameter {} is not an i64", self.name(size)));
            }
        }
        for param in &self.f.params {
            self.bind(param.var);
        }
        self.context = Context::Result;
        self.body(&self.f.body);
    }

    /// Checks a body in a scope of its own; returns the types of its results. Errors in the
    /// results are reported against the enclosing statement.
    fn body<H: Form>(&mut self, body: &'a Body<H>) -> Vec<Option<Type>> {
        let context = self.context;
        let mark = self.scope.len();
        for stmt in &body.stmts {
            self.stmt(stmt);
        }
        self.context = context;
        let types = body.result.iter().map(|&r| self.use_subexp(r)).collect();
        self.leave_scope(mark);
        types
    }

    /// Checks a body's results against declared types, with `subst` applied to the latter.
    fn body_against<H: Form>(
        &mut self,
        what: &str,
        body: &'a Body<H>,
        declared: &[Type],
        subst: &Subst,
    ) {
        // What the body's statements prove holds for its results, and not after the body.
        let facts = self.equal.len();
        let results = self.body(body);
        if results.len() != declared.len() {
            self.error(format!(
                "{what} returns {} values, expected {}",
                results.len(),
                declared.len()
            ));
        } else {
            for (i, (actual, expected)) in results.iter().zip(declared).enumerate() {
                if let Some(actual) = actual {
                    let expected = substitute_type(expected, subst);
                    self.expect_fits(&format!("result {i} of {what}"), &expected, actual, true);
                }
            }
        }
        self.equal.truncate(facts);
    }

    /// Records the equalities of sizes that hold after `stmt`: `let x = y` of an `i64`, and an
    /// `assert` of `a == b` (`a`, `b` `i64`s); and the sums `x = a + b` of `i64`s.
    fn record_equalities<H: Form>(&mut self, stmt: &'a Stmt<H>) {
        let i64 = Type::Prim(PrimType::I64);
        let is_i64 = |se: SubExp| match se {
            SubExp::Const(c) => c.prim_type() == PrimType::I64,
            SubExp::Var(v) => self.known(v) && *self.f.ty(v) == i64,
        };
        match (&stmt.exp, &stmt.pat[..]) {
            (Exp::SubExp(se), [x]) if is_i64(*se) && is_i64(SubExp::Var(*x)) => {
                self.equal.push((SubExp::Var(*x), *se));
            }
            (Exp::BinOp(crate::op::BinOp::Eq, a, b), [c]) if is_i64(*a) && is_i64(*b) => {
                self.equalities.insert(*c, (*a, *b));
            }
            (Exp::BinOp(crate::op::BinOp::Add, a, b), [c]) if is_i64(*a) && is_i64(*b) => {
                self.sums.insert(*c, (*a, *b));
            }
            (
                Exp::Assert {
                    cond: SubExp::Var(c),
                    ..
                },
                [],
            ) => {
                if let Some(&fact) = self.equalities.get(c) {
                    self.equal.push(fact);
                }
            }
            _ => {}
        }
    }

    fn stmt<H: Form>(&mut self, stmt: &'a Stmt<H>) {
        let context = Context::Let(&stmt.pat);
        self.context = context;
        if H::HOST && matches!(stmt.exp, Exp::Soac(_)) {
            self.error("a SOAC at host level in kernel IR".to_string());
        }
        let expected = self.exp(stmt);
        self.context = context;
        for &v in &stmt.pat {
            self.bind(v);
        }
        let Some(expected) = expected else { return };
        if expected.len() != stmt.pat.len() {
            self.error(format!(
                "the pattern binds {} values but the expression returns {}",
                stmt.pat.len(),
                expected.len()
            ));
            return;
        }
        for (&v, ty) in stmt.pat.iter().zip(&expected) {
            if self.known(v) && !self.fits(ty, self.f.ty(v), false) {
                self.error(format!(
                    "{} has type {}, but the expression returns {}",
                    self.name(v),
                    self.show(self.f.ty(v)),
                    self.show(ty)
                ));
            }
        }
        self.record_aliases(stmt);
        self.record_equalities(stmt);
    }

    /// Views and copies of an array alias it (and what it aliases).
    fn record_aliases<H: Form>(&mut self, stmt: &'a Stmt<H>) {
        let source = match &stmt.exp {
            Exp::SubExp(SubExp::Var(v))
            | Exp::Index(v, _)
            | Exp::Rearrange(v, _)
            | Exp::Reshape(v, _) => *v,
            _ => return,
        };
        let [target] = stmt.pat[..] else { return };
        if !self.known(source) || !self.known(target) || self.f.ty(target).rank() == 0 {
            return;
        }
        let mut aliases = self.aliases[source.index()].clone();
        aliases.push(source);
        self.aliases[target.index()] = aliases;
    }

    /// Checks the expression of `stmt`; returns the types it produces (`None` when they cannot
    /// be determined because of an error already reported).
    fn exp<H: Form>(&mut self, stmt: &'a Stmt<H>) -> Option<Vec<Type>> {
        let one = |t: Type| Some(vec![t]);
        match &stmt.exp {
            Exp::SubExp(se) => one(self.use_subexp(*se)?),
            Exp::BinOp(op, a, b) => {
                let (ta, tb) = (self.use_subexp(*a)?, self.use_subexp(*b)?);
                if ta != tb || ta.rank() != 0 {
                    self.error(format!(
                        "operands of {} have types {} and {}",
                        op.symbol(),
                        self.show(&ta),
                        self.show(&tb)
                    ));
                    return None;
                }
                match op.result_type(ta.elem()) {
                    Some(t) => one(Type::Prim(t)),
                    None => {
                        self.error(format!(
                            "operator {} does not apply to {}",
                            op.symbol(),
                            ta.elem()
                        ));
                        None
                    }
                }
            }
            Exp::UnOp(op, a) => {
                let t = self.use_subexp(*a)?;
                let ok = t.rank() == 0 && op.applies_to(t.elem());
                if !ok {
                    self.error(format!("unary {op:?} does not apply to {}", self.show(&t)));
                    return None;
                }
                one(t)
            }
            Exp::Math(op, ty, args) => self.math(*op, *ty, args),
            Exp::Convert(to, a) => {
                let t = self.use_subexp(*a)?;
                if t.rank() != 0 {
                    self.error(format!("conversion of the array {}", self.show(&t)));
                }
                one(Type::Prim(*to))
            }
            Exp::Index(v, idx) => {
                let t = self.use_array(*v, "indexed value")?;
                one(self.slice_type(&t, idx)?)
            }
            Exp::Update(v, idx, value) => {
                let t = self.use_array(*v, "updated value")?;
                let slice = self.slice_type(&t, idx);
                // Sizes are checked at run time (a mismatch is the program's error, R0704).
                if let (Some(slice), Some(vt)) = (slice, self.use_subexp(*value))
                    && (slice.elem() != vt.elem() || slice.rank() != vt.rank())
                {
                    self.expect_fits("the new value", &slice, &vt, true);
                }
                self.consume(*v);
                one(t)
            }
            Exp::Iota(n) => {
                self.expect_prim(*n, PrimType::I64, "iota size");
                one(Type::Array {
                    elem: PrimType::I64,
                    shape: vec![*n],
                })
            }
            Exp::Replicate(n, v) => {
                self.expect_prim(*n, PrimType::I64, "replicate count");
                one(self.use_subexp(*v)?.array_of(*n))
            }
            Exp::ArrayLit(elems, elem_ty) => {
                self.check_type_dims(elem_ty, "the element type");
                for (i, &e) in elems.iter().enumerate() {
                    if let Some(t) = self.use_subexp(e) {
                        self.expect_fits(&format!("element {i}"), elem_ty, &t, true);
                    }
                }
                one(elem_ty.array_of(SubExp::i64(elems.len() as i64)))
            }
            Exp::Rearrange(v, perm) => {
                let t = self.use_array(*v, "rearranged value")?;
                let mut sorted = perm.clone();
                sorted.sort_unstable();
                if sorted != (0..t.rank()).collect::<Vec<_>>() {
                    self.error(format!(
                        "{perm:?} is not a permutation of the {} dimensions",
                        t.rank()
                    ));
                    return None;
                }
                let shape = perm.iter().map(|&d| t.shape()[d]).collect();
                one(Type::with_shape(t.elem(), shape))
            }
            Exp::Reshape(v, shape) => {
                let t = self.use_array(*v, "reshaped value")?;
                for &d in shape {
                    self.expect_prim(d, PrimType::I64, "new dimension");
                }
                if shape.is_empty() {
                    self.error("reshape to no dimensions".to_string());
                    return None;
                }
                one(Type::with_shape(t.elem(), shape.clone()))
            }
            Exp::Concat(vs) => self.concat(stmt, vs),
            Exp::Copy(v) => one(self.use_array(*v, "copied value")?),
            Exp::Assert { cond, .. } => {
                self.expect_prim(*cond, PrimType::Bool, "assertion");
                Some(vec![])
            }
            Exp::Trace { value, .. } => {
                self.use_subexp(*value)?;
                Some(vec![])
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                self.expect_prim(*cond, PrimType::Bool, "condition");
                // The declared types may refer to the pattern's existential sizes: compare the
                // branch results with them after substituting each branch's own results.
                let before = self.consumed.clone();
                let then_subst = self.result_subst(&stmt.pat, &then_body.result);
                self.body_against("the then branch", then_body, ret, &then_subst);
                let after_then = std::mem::replace(&mut self.consumed, before);
                let else_subst = self.result_subst(&stmt.pat, &else_body.result);
                self.body_against("the else branch", else_body, ret, &else_subst);
                self.consumed.extend(after_then);
                Some(ret.clone())
            }
            Exp::Loop { params, form, body } => self.loop_(stmt, params, form, body),
            Exp::Soac(soac) => self.soac(soac),
            Exp::Host(host) => match host.host() {
                HostOp::Seg(seg) => self.seg(seg),
                HostOp::Threshold { id, size } => {
                    if !self.thresholds.contains(id) {
                        self.error(format!("threshold {id} is not declared"));
                    }
                    self.expect_prim(*size, PrimType::I64, "threshold size");
                    one(Type::Prim(PrimType::Bool))
                }
            },
        }
    }

    /// `pat[i] -> result[i]`, for comparing results with types that refer to the pattern.
    fn result_subst(&self, pat: &[VarId], result: &[SubExp]) -> Subst {
        pat.iter().copied().zip(result.iter().copied()).collect()
    }

    fn math(&mut self, op: MathFn, ty: PrimType, args: &[SubExp]) -> Option<Vec<Type>> {
        if ty == PrimType::Bool || (op.float_only() && !ty.is_float()) {
            self.error(format!("{op:?} does not apply to {ty}"));
        }
        if args.len() != op.arity() {
            self.error(format!(
                "{op:?} takes {} arguments, given {}",
                op.arity(),
                args.len()
            ));
        }
        for &a in args {
            self.expect_prim(a, ty, "argument");
        }
        let result = if op.returns_bool() {
            PrimType::Bool
        } else {
            ty
        };
        Some(vec![Type::Prim(result)])
    }

    /// The type of `array[idx]`.
    fn slice_type(&mut self, array: &Type, idx: &[DimIndex]) -> Option<Type> {
        if idx.len() > array.rank() {
            self.error(format!(
                "{} indices into an array of rank {}",
                idx.len(),
                array.rank()
            ));
            return None;
        }
        let mut shape = Vec::new();
        for d in idx {
            match d {
                DimIndex::Fix(i) => self.expect_prim(*i, PrimType::I64, "index"),
                DimIndex::Slice { start, len, stride } => {
                    self.expect_prim(*start, PrimType::I64, "slice start");
                    self.expect_prim(*len, PrimType::I64, "slice length");
                    self.expect_prim(*stride, PrimType::I64, "slice stride");
                    shape.push(*len);
                }
            }
        }
        shape.extend_from_slice(&array.shape()[idx.len()..]);
        Some(Type::with_shape(array.elem(), shape))
    }

    fn concat<H: Form>(&mut self, stmt: &'a Stmt<H>, vs: &[VarId]) -> Option<Vec<Type>> {
        let mut types = Vec::new();
        for &v in vs {
            types.push(self.use_array(v, "concatenated value")?);
        }
        let Some(first) = types.first().cloned() else {
            self.error("concatenation of no arrays".to_string());
            return None;
        };
        for t in &types[1..] {
            self.expect_fits("a concatenated array's row", &first.row(), &t.row(), true);
        }
        // The outer size is the sum of the operands' sizes, which no single dimension denotes:
        // the pattern's outer dimension is taken as declared, and (exact) must be that sum.
        let outer = stmt
            .pat
            .first()
            .filter(|&&v| self.known(v))
            .and_then(|&v| self.f.ty(v).shape().first().copied())?;
        let parts: Vec<SubExp> = types.iter().map(|t| t.shape()[0]).collect();
        if self.exact && !self.is_sum(outer, &parts) {
            self.error(format!(
                "the concatenation's size {} is not the sum of its operands' sizes",
                print_subexp(self.f, outer)
            ));
        }
        Some(vec![first.row().array_of(outer)])
    }

    fn loop_<H: Form>(
        &mut self,
        stmt: &'a Stmt<H>,
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &'a Body<H>,
    ) -> Option<Vec<Type>> {
        let inits: Vec<Option<Type>> = params.iter().map(|&(_, i)| self.use_subexp(i)).collect();
        if let LoopForm::For { bound, .. } = form {
            self.expect_prim(*bound, PrimType::I64, "loop bound");
        }
        let mark = self.scope.len();
        self.frame += 1;
        for &(p, _) in params {
            self.bind(p);
        }
        let param_types: Vec<Type> = params
            .iter()
            .filter(|&&(p, _)| self.known(p))
            .map(|&(p, _)| self.f.ty(p).clone())
            .collect();
        if param_types.len() != params.len() {
            self.frame -= 1;
            self.leave_scope(mark);
            return None;
        }
        let pvars: Vec<VarId> = params.iter().map(|&(p, _)| p).collect();
        let init_values: Vec<SubExp> = params.iter().map(|&(_, i)| i).collect();
        let init_subst = self.result_subst(&pvars, &init_values);
        for (i, (init, ty)) in inits.iter().zip(&param_types).enumerate() {
            if let Some(init) = init {
                let expected = substitute_type(ty, &init_subst);
                self.expect_fits(&format!("initial value {i}"), &expected, init, true);
            }
        }
        match form {
            LoopForm::For { index, .. } => {
                self.bind(*index);
                if self.known(*index) && *self.f.ty(*index) != Type::Prim(PrimType::I64) {
                    self.error(format!("loop index {} is not an i64", self.name(*index)));
                }
            }
            LoopForm::While { cond } => {
                let is_param = pvars.contains(cond);
                if !is_param || *self.f.ty(*cond) != Type::Prim(PrimType::Bool) {
                    self.error(format!(
                        "while condition {} is not a bool loop parameter",
                        self.name(*cond)
                    ));
                }
            }
        }
        let body_subst = self.result_subst(&pvars, &body.result);
        self.body_against("the loop body", body, &param_types, &body_subst);
        self.frame -= 1;
        self.leave_scope(mark);
        // A parameter consumed by the body consumes its initial value.
        for &(p, init) in params {
            if self.consumed.remove(&p).is_some()
                && let SubExp::Var(v) = init
            {
                self.consume(v);
            }
        }
        let pattern_subst = self.result_subst(
            &pvars,
            &stmt.pat.iter().map(|&v| SubExp::Var(v)).collect::<Vec<_>>(),
        );
        Some(
            param_types
                .iter()
                .map(|t| substitute_type(t, &pattern_subst))
                .collect(),
        )
    }

    /// Checks a lambda whose parameters receive values of types `args` (compared leniently);
    /// it may not consume variables bound outside it.
    fn lambda(&mut self, what: &str, lambda: &'a Lambda, args: &[Type]) {
        for t in &lambda.ret {
            self.check_type_dims(t, &format!("the result type of {what}"));
        }
        if lambda.params.len() != args.len() {
            self.error(format!(
                "{what} takes {} parameters, expected {}",
                lambda.params.len(),
                args.len()
            ));
        }
        let mark = self.scope.len();
        self.frame += 1;
        for (&p, arg) in lambda.params.iter().zip(args) {
            self.bind(p);
            if self.known(p) {
                let name = format!("parameter {} of {what}", self.name(p));
                self.expect_fits(&name, self.f.ty(p), arg, true);
            }
        }
        for &p in lambda.params.iter().skip(args.len()) {
            self.bind(p);
        }
        self.body_against(what, &lambda.body, &lambda.ret, &Subst::new());
        self.frame -= 1;
        self.leave_scope(mark);
    }

    /// Checks an associative operator of `k` values: `2k` parameters, `k` results, `k` neutral
    /// elements of those types; returns the operator's element types.
    fn operator(&mut self, what: &str, lambda: &'a Lambda, neutral: &[SubExp]) -> Vec<Type> {
        let k = lambda.ret.len();
        let elems = lambda.ret.clone();
        let args: Vec<Type> = elems.iter().chain(&elems).cloned().collect();
        self.lambda(what, lambda, &args);
        if neutral.len() != k {
            self.error(format!(
                "{what} has {} neutral elements for {k} values",
                neutral.len()
            ));
        }
        for (i, (&ne, t)) in neutral.iter().zip(&elems).enumerate() {
            if let Some(nt) = self.use_subexp(ne) {
                self.expect_fits(&format!("neutral element {i} of {what}"), t, &nt, true);
            }
        }
        elems
    }

    fn scan_ops(&mut self, scans: &'a [ScanOp]) -> Vec<Type> {
        let mut elems = Vec::new();
        for (i, op) in scans.iter().enumerate() {
            elems.extend(self.operator(&format!("scan {i}"), &op.lambda, &op.neutral));
        }
        elems
    }

    fn red_ops(&mut self, reds: &'a [RedOp]) -> Vec<Type> {
        let mut elems = Vec::new();
        for (i, op) in reds.iter().enumerate() {
            elems.extend(self.operator(&format!("reduction {i}"), &op.lambda, &op.neutral));
        }
        elems
    }

    /// Checks histogram operators and consumes their destinations; returns the values the map
    /// lambda (or kernel body) must produce for them (a bin, then each histogram's values) and
    /// the destinations' types.
    fn hist_ops(&mut self, hists: &'a [HistOp]) -> (Vec<Type>, Vec<Type>) {
        let (mut fed, mut dests) = (vec![], vec![]);
        for (i, op) in hists.iter().enumerate() {
            let what = format!("histogram {i}");
            self.expect_prim(op.num_bins, PrimType::I64, "bin count");
            let elems = self.operator(&what, &op.op, &op.neutral);
            if op.dests.len() != elems.len() {
                self.error(format!(
                    "{what} has {} destinations for {} values",
                    op.dests.len(),
                    elems.len()
                ));
            }
            fed.push(Type::Prim(PrimType::I64));
            fed.extend(elems.iter().cloned());
            for (&d, elem) in op.dests.iter().zip(&elems) {
                if let Some(t) = self.use_array(d, "histogram destination") {
                    let expected = elem.array_of(op.num_bins);
                    let last_rows = Type::with_shape(
                        t.elem(),
                        t.shape()[t.rank().saturating_sub(expected.rank())..].to_vec(),
                    );
                    self.expect_fits(
                        &format!("destination of {what}"),
                        &expected,
                        &last_rows,
                        true,
                    );
                    dests.push(t);
                }
            }
        }
        for op in hists {
            for &d in &op.dests {
                self.consume(d);
            }
        }
        (fed, dests)
    }

    /// The row types of SOAC inputs, whose outer size must be `width`.
    fn inputs(&mut self, width: SubExp, inputs: &[VarId]) -> Option<Vec<Type>> {
        self.expect_prim(width, PrimType::I64, "width");
        let mut rows = Vec::new();
        for &v in inputs {
            let t = self.use_array(v, "input")?;
            let outer = t.shape()[0];
            let both_const = matches!((outer, width), (SubExp::Const(_), SubExp::Const(_)));
            if !self.same(outer, width) && (both_const || self.exact) {
                self.error(format!(
                    "input {} has outer size {}, expected {}",
                    self.name(v),
                    print_subexp(self.f, outer),
                    print_subexp(self.f, width)
                ));
            }
            rows.push(t.row());
        }
        Some(rows)
    }

    /// Checks that `lambda.ret` starts with values of the types `fed`; returns the rest.
    fn fed_then_mapped(&mut self, what: &str, ret: &[Type], fed: &[Type]) -> Option<Vec<Type>> {
        if ret.len() < fed.len() {
            self.error(format!(
                "{what} returns {} values, expected at least {}",
                ret.len(),
                fed.len()
            ));
            return None;
        }
        for (i, (t, f)) in ret.iter().zip(fed).enumerate() {
            self.expect_fits(&format!("result {i} of {what}"), f, t, true);
        }
        Some(ret[fed.len()..].to_vec())
    }

    fn soac(&mut self, soac: &'a Soac) -> Option<Vec<Type>> {
        let width = soac.width();
        let rows = self.inputs(width, soac.inputs())?;
        let map = soac.map_lambda();
        self.lambda("the map lambda", map, &rows);
        match soac {
            Soac::Screma { scans, reds, .. } => {
                let scanned = self.scan_ops(scans);
                let reduced = self.red_ops(reds);
                let fed: Vec<Type> = scanned.iter().chain(&reduced).cloned().collect();
                let mapped = self.fed_then_mapped("the map lambda", &map.ret, &fed)?;
                let arrays = |ts: &[Type]| ts.iter().map(|t| t.array_of(width)).collect::<Vec<_>>();
                let mut out = arrays(&scanned);
                out.extend(reduced);
                out.extend(arrays(&mapped));
                Some(out)
            }
            Soac::Scatter { dests, .. } => {
                if map.ret.len() != 2 * dests.len() {
                    self.error(format!(
                        "the map lambda returns {} values for {} destinations",
                        map.ret.len(),
                        dests.len()
                    ));
                }
                let mut out = Vec::new();
                for (i, &d) in dests.iter().enumerate() {
                    let t = self.use_array(d, "scatter destination")?;
                    if let Some([index, value]) = map.ret.get(2 * i..2 * i + 2) {
                        let what = format!("index for destination {i}");
                        self.expect_fits(&what, &Type::Prim(PrimType::I64), index, false);
                        let what = format!("value for destination {i}");
                        self.expect_fits(&what, &t.row(), value, true);
                    }
                    out.push(t);
                }
                for &d in dests {
                    self.consume(d);
                }
                Some(out)
            }
            Soac::Hist { hists, .. } => {
                let (fed, dests) = self.hist_ops(hists);
                let rest = self.fed_then_mapped("the map lambda", &map.ret, &fed)?;
                if !rest.is_empty() {
                    self.error("the map lambda returns values no histogram takes".to_string());
                }
                Some(dests)
            }
        }
    }

    fn seg(&mut self, seg: &'a SegOp) -> Option<Vec<Type>> {
        let extents: Vec<SubExp> = seg.space.iter().map(|&(_, e)| e).collect();
        for &e in &extents {
            self.expect_prim(e, PrimType::I64, "space extent");
        }
        if extents.is_empty() {
            self.error("a kernel with an empty space".to_string());
            return None;
        }
        for t in &seg.ret {
            self.check_type_dims(t, "the kernel's result type");
        }
        let (fed, dests) = match &seg.kind {
            SegKind::Map => (vec![], vec![]),
            SegKind::Red(reds) => (self.red_ops(reds), vec![]),
            SegKind::Scan(scans) => (self.scan_ops(scans), vec![]),
            SegKind::Hist(hists) => self.hist_ops(hists),
        };
        let mark = self.scope.len();
        self.frame += 1;
        for &(v, _) in &seg.space {
            self.bind(v);
            if self.known(v) && *self.f.ty(v) != Type::Prim(PrimType::I64) {
                self.error(format!("space index {} is not an i64", self.name(v)));
            }
        }
        self.body_against("the kernel body", &seg.body, &seg.ret, &Subst::new());
        self.frame -= 1;
        self.leave_scope(mark);
        let mapped = self.fed_then_mapped("the kernel body", &seg.ret, &fed)?;
        let over = |dims: &[SubExp], t: &Type| {
            let mut shape = dims.to_vec();
            shape.extend_from_slice(t.shape());
            Type::with_shape(t.elem(), shape)
        };
        let segments = &extents[..extents.len() - 1];
        Some(match &seg.kind {
            SegKind::Map | SegKind::Scan(_) => seg.ret.iter().map(|t| over(&extents, t)).collect(),
            SegKind::Red(_) => fed
                .iter()
                .map(|t| over(segments, t))
                .chain(mapped.iter().map(|t| over(&extents, t)))
                .collect(),
            SegKind::Hist(_) => {
                if !mapped.is_empty() {
                    self.error("the kernel body returns values no histogram takes".to_string());
                }
                dests
            }
        })
    }
}
