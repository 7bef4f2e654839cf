//! Indices proven in range, whose bounds checks the code generators omit.
//!
//! A run-time check `0 <= i < n` of an index `a[.., i, ..]` is omitted when this analysis proves
//! it holds. It collects, once per function, facts of the form "variable `i` lies in `0..b`"
//! (`b` a [`SubExp`]):
//!
//! - the index of a `for i < b` loop;
//! - a *counter* of such a loop: a parameter of type `i64` that starts at 0 and that each
//!   iteration keeps or increments by 1 (its new value is the parameter itself, `p + 1`, or an
//!   `if` whose branches return either): it is never more than the loop's index, so it too lies in
//!   `0..b` inside the body (the running count of a compaction, `xs with [count] = x`);
//! - an index of a kernel's segment space (`gtid < b`: both backends' kernel frames compute the
//!   indices of a point from a position below the space's size);
//! - a parameter of a SOAC lambda whose input is an array made by `iota b` (the parameter is an
//!   element of that array, whatever the SOAC's width: `map (\i -> a[i]) (iota b)`).
//!
//! An index `i` into dimension `k` of an array `a` is then proven in range when `i` lies in
//! `0..b` and the `k`-th dimension of `a`'s type is `b` itself (the same variable, or a constant
//! at least `b`'s). Inside a branch of an `if` on a comparison of `i` (`i < d` holds in the
//! `then` branch of `if i < d` or `if d > i`, and in the `else` branch of `if i >= d` or
//! `if d <= i`), an `i` known to lie in some `0..b` also lies in `0..d` (the padding idiom
//! `map (\i -> if i < n then xs[i] else 0) (iota m)`); a backend lowers the branches of its
//! `if`s with [`super::branch`], which keeps their conditions in its [`Proofs`].
//!
//! This relies on two invariants of the IR (see `ogham_ir`): every variable is bound once (so
//! `i`, `b` and the array's extents cannot change between the fact and the access), and an
//! array variable's extents at run time are its type's dimensions (lowering inserts the size
//! checks, `R0704` and `R0705`, that make a value fit its declared type; an array made by `iota` is not
//! updated in place while a SOAC still reads it, since a consumed array is not used again).
//! Indices the analysis cannot prove (data-dependent ones, offsets from proven ones) keep
//! their checks, and every out-of-bounds access still fails with its located error.

use ogham_ir::kir::{Function, HostOp};
use ogham_ir::op::BinOp;
use ogham_ir::traverse::{Visitor, walk};
use ogham_ir::types::PrimType;
use ogham_ir::{Exp, Form, LoopForm, Soac, Stmt, SubExp, VarId};
use std::collections::HashMap;

/// What [`counts`] needs of the statement binding a variable: a sum, or an `if`'s branch results.
#[derive(Clone, Copy)]
enum Def<'f> {
    Add(SubExp, SubExp),
    If(&'f [SubExp], &'f [SubExp]),
}

/// Whether `next`, a loop's new value of its parameter `p`, is `p` or `p + 1` (through `if`s);
/// `defs` gives each variable's position in the pattern of the statement binding it.
fn counts(defs: &HashMap<VarId, (usize, Def)>, p: VarId, next: SubExp) -> bool {
    let SubExp::Var(v) = next else {
        return false;
    };
    if v == p {
        return true;
    }
    let one = SubExp::Const(ogham_ir::Const::I64(1));
    match defs.get(&v) {
        Some((0, Def::Add(a, b))) => {
            (*a == SubExp::Var(p) && *b == one) || (*a == one && *b == SubExp::Var(p))
        }
        Some((k, Def::If(then_result, else_result))) => {
            counts(defs, p, then_result[*k]) && counts(defs, p, else_result[*k])
        }
        _ => false,
    }
}

/// The condition of an `if` whose branch the code being generated is in, and which branch.
type Guard = (VarId, bool);

/// What is known where a backend is generating code of a function: the ranges of its variables
/// and the conditions of the branches the code is in.
pub struct Proofs {
    ranges: Ranges,
    /// Innermost last.
    guards: Vec<Guard>,
}

impl Proofs {
    /// The proofs for code of `f` outside any branch.
    pub fn of(f: &Function) -> Proofs {
        Proofs {
            ranges: Ranges::of(f),
            guards: Vec::new(),
        }
    }

    /// Whether index `i` into a dimension of extent `dim` is proven in range here.
    pub fn within(&self, i: SubExp, dim: SubExp) -> bool {
        self.ranges.within(i, dim, &self.guards)
    }

    /// Code in the branch of an `if` on `cond` taken when `cond` is `taken` is generated next.
    pub(super) fn enter(&mut self, cond: SubExp, taken: bool) {
        if let SubExp::Var(c) = cond {
            self.guards.push((c, taken));
        }
    }

    /// The branch [`Proofs::enter`] entered is generated.
    pub(super) fn leave(&mut self, cond: SubExp) {
        if let SubExp::Var(_) = cond {
            self.guards.pop();
        }
    }
}

/// The variables known to lie in `0..bound`, with their bounds.
#[derive(Default)]
struct Ranges {
    below: HashMap<VarId, SubExp>,
    /// Conditions on `i64` variables: `c` bound to a comparison such that `c == holds` implies
    /// `i < d`, as `c -> (i, d, holds)`.
    less: HashMap<VarId, (VarId, SubExp, bool)>,
}

impl Ranges {
    /// The facts of every statement of `f` (host code and kernels, loops and lambdas at any
    /// depth).
    fn of(f: &Function) -> Ranges {
        let mut defs = Defs::default();
        walk(&f.body, &mut defs);
        let mut facts = Facts {
            f,
            defs,
            ranges: Ranges::default(),
        };
        walk(&f.body, &mut facts);
        facts.ranges
    }

    /// Whether `i` is proven to lie in `0..dim` in code under the branch conditions `guards`.
    fn within(&self, i: SubExp, dim: SubExp, guards: &[Guard]) -> bool {
        let SubExp::Var(i) = i else {
            return false;
        };
        let Some(b) = self.below.get(&i) else {
            return false;
        };
        let at_most = |b: &SubExp| match (b, dim) {
            (b, d) if *b == d => true,
            (SubExp::Const(ogham_ir::Const::I64(b)), SubExp::Const(ogham_ir::Const::I64(d))) => {
                *b <= d
            }
            _ => false,
        };
        at_most(b)
            || guards.iter().any(|(c, taken)| {
                matches!(self.less.get(c), Some((v, d, holds)) if *v == i && holds == taken && at_most(d))
            })
    }
}

/// The arrays made by `iota` and the definitions [`counts`] reads, from a first walk.
#[derive(Default)]
struct Defs<'f> {
    iotas: HashMap<VarId, SubExp>,
    defs: HashMap<VarId, (usize, Def<'f>)>,
}

impl<'f> Visitor<'f> for Defs<'f> {
    fn stmt<H: Form>(&mut self, stmt: &'f Stmt<H>) {
        if let ([v], Exp::Iota(n)) = (&stmt.pat[..], &stmt.exp) {
            self.iotas.insert(*v, *n);
        }
        let def = match &stmt.exp {
            Exp::BinOp(BinOp::Add, a, b) => Def::Add(*a, *b),
            Exp::If {
                then_body,
                else_body,
                ..
            } => Def::If(&then_body.result, &else_body.result),
            _ => return,
        };
        for (k, v) in stmt.pat.iter().enumerate() {
            self.defs.insert(*v, (k, def));
        }
    }
}

/// The second walk, collecting the facts.
struct Facts<'f> {
    f: &'f Function,
    defs: Defs<'f>,
    ranges: Ranges,
}

impl<'f> Visitor<'f> for Facts<'f> {
    fn stmt<H: Form>(&mut self, stmt: &'f Stmt<H>) {
        let (f, below, less) = (self.f, &mut self.ranges.below, &mut self.ranges.less);
        let Defs { iotas, defs } = &self.defs;
        match &stmt.exp {
            Exp::BinOp(op, a, b) if f.subexp_type(*a) == ogham_ir::Type::Prim(PrimType::I64) => {
                let fact = match (op, a, b) {
                    (BinOp::Lt, SubExp::Var(i), d) => Some((*i, *d, true)),
                    (BinOp::Ge, SubExp::Var(i), d) => Some((*i, *d, false)),
                    (BinOp::Gt, d, SubExp::Var(i)) => Some((*i, *d, true)),
                    (BinOp::Le, d, SubExp::Var(i)) => Some((*i, *d, false)),
                    _ => None,
                };
                if let (Some(fact), [c]) = (fact, &stmt.pat[..]) {
                    less.insert(*c, fact);
                }
            }
            Exp::Loop {
                params,
                form: LoopForm::For { index, bound },
                body,
            } => {
                below.insert(*index, *bound);
                for ((p, init), next) in params.iter().zip(&body.result) {
                    let zero = *init == SubExp::Const(ogham_ir::Const::I64(0));
                    if zero && counts(defs, *p, *next) {
                        below.insert(*p, *bound);
                    }
                }
            }
            Exp::Host(host) => {
                if let HostOp::Seg(seg) = host.host() {
                    below.extend(seg.space.iter().copied());
                }
            }
            Exp::Soac(soac) => {
                let (Soac::Screma { inputs, map, .. }
                | Soac::Scatter { inputs, map, .. }
                | Soac::Hist { inputs, map, .. }) = soac;
                for (p, input) in map.params.iter().zip(inputs) {
                    if let Some(n) = iotas.get(input) {
                        below.insert(*p, *n);
                    }
                }
            }
            _ => {}
        }
    }
}
