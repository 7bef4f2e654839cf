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

use crate::kir::ThresholdId;
use crate::print::{print_pattern, print_subexp, print_type, var_name};
use crate::types::PrimType;
use crate::{Const, Form, Function, Program, SubExp, Type, VarId};
use std::collections::{BTreeMap, BTreeSet};

mod body;
mod exp;
mod soac;

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
}
