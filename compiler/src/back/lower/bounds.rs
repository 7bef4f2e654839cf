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
//! - a parameter of a SOAC lambda whose input is an array made by `iota b`, or a slice of one
//!   (the parameter is an element of that array, whatever the SOAC's width: `map (\i -> a[i])
//!   (iota b)`, and the sums `narrow` restricts to `iota_b[lo:+len]`).
//!
//! Beside them it collects *ceilings* `c -> b`, each saying that an index known to lie in
//! `0..c` also lies in `0..b`:
//!
//! - the final value `c` of a counter of a `for i < b` loop is at most `max(b, 0)` (one
//!   increment at most per iteration): a compaction's count of valid observations, then `for j
//!   < c do .. xs[j] ..` with `xs: [b]t`;
//! - an assertion of the function's top-level body that runs before the kernel's statement
//!   (a failed one stops the program) whose `&&` chain has a leaf `c <= b` or `c < b` (either
//!   way round): `assert (n <= N)` on the host, then `for i < n do .. xs[i] ..` with `xs: [N]t`
//!   in the kernel.
//!
//! Last, an *offset* index `x = o + j`, `j` known to lie in `0..b` (a loop's index, an element
//! of an `iota`, ...), lies in `0..c` when
//! `o >= 0` and `o + b` is `c` (or less) as a linear expression of variables that are indices,
//! counters, final counts or the indexed dimension itself (each `>= 0` and far below `2^62`: a
//! loop runs fewer iterations, an array's extent is at most `MAX_ELEMS`; with at most two
//! variables and small constants, the wrapping `i64` arithmetic defining them is exact): the
//! triangular loop `for j < c - i - 1 do .. xs[i + 1 + j] ..` over a count or extent `c`, the
//! next element `xs[i + 1]` of `map (\i -> ..) (iota (n - 1))` over `xs: [n]t`.
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

use ogham_ir::conjunction::Conjunction;
use ogham_ir::kir::{Function, HostOp, SegOp};
use ogham_ir::op::BinOp;
use ogham_ir::traverse::{Nested, Visitor, nested_scopes, walk};
use ogham_ir::types::PrimType;
use ogham_ir::{DimIndex, Exp, Form, LoopForm, Soac, Stmt, SubExp, VarId};
use std::collections::{HashMap, HashSet};

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
    /// The proofs for code of kernel `seg` of `f` outside any branch.
    pub fn of(f: &Function, seg: &SegOp) -> Proofs {
        let mut ranges = Ranges::of(f);
        ranges.asserted(f, seg);
        Proofs {
            ranges,
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
    /// `c -> b`: every `i` in `0..c` also lies in `0..b` (`c <= b`, or `c` is 0: the final
    /// counts of counting loops, bounds asserted before the kernel).
    ceilings: HashMap<VarId, SubExp>,
    /// Conditions on `i64` variables: `c` bound to a comparison such that `c == holds` implies
    /// `i < d`, as `c -> (i, d, holds)`.
    less: HashMap<VarId, (VarId, SubExp, bool)>,
    /// The final counts of counting loops (`0 <= c`, at most the number of iterations run).
    counts: HashSet<VarId>,
    /// `i64` sums and differences: `x -> (a, b, subtracts)` for `x = a + b` or `x = a - b`.
    sums: HashMap<VarId, (SubExp, SubExp, bool)>,
}

/// A linear expression of small non-negative variables (see [`Ranges::linear`]).
#[derive(Clone, PartialEq, Debug, Default)]
struct Linear {
    constant: i64,
    /// Coefficients, by variable; never 0.
    terms: Vec<(VarId, i64)>,
}

impl Linear {
    /// `self + sign * other`, if it stays within [`Ranges::linear`]'s limits.
    fn add(mut self, other: &Linear, sign: i64) -> Option<Linear> {
        self.constant = self.constant.checked_add(sign * other.constant)?;
        for &(v, k) in &other.terms {
            match self.terms.iter().position(|t| t.0 == v) {
                Some(t) => {
                    self.terms[t].1 += sign * k;
                    if self.terms[t].1 == 0 {
                        self.terms.remove(t);
                    }
                }
                None => self.terms.push((v, sign * k)),
            }
        }
        let small = self.constant.abs() <= LINEAR_CONSTANT
            && self.terms.len() <= 2
            && self.terms.iter().all(|t| t.1.abs() == 1);
        small.then_some(self)
    }
}

/// The largest constant a [`Linear`] may hold: with at most two variables of magnitude below
/// `2^62` and coefficients ±1, every value it and its parts take fits an `i64`.
const LINEAR_CONSTANT: i64 = 1 << 20;

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

    /// The ceilings the assertions of `f`'s top-level body before the statement holding `seg`
    /// put on `i64` variables (`c <= b` and `c < b` leaves of their `&&` chains).
    fn asserted(&mut self, f: &Function, seg: &SegOp) {
        for stmt in &f.body.stmts {
            if holds(&stmt.exp, seg) {
                break;
            }
            let Exp::Assert {
                cond: SubExp::Var(c),
                ..
            } = &stmt.exp
            else {
                continue;
            };
            for (_, exp) in Conjunction::of(*c, &f.body.stmts).leaves {
                let Some(Exp::BinOp(op, a, b)) = exp else {
                    continue;
                };
                if f.subexp_type(*a) != ogham_ir::Type::Prim(PrimType::I64) {
                    continue;
                }
                let fact = match (op, a, b) {
                    (BinOp::Le | BinOp::Lt, SubExp::Var(c), b) => Some((*c, *b)),
                    (BinOp::Ge | BinOp::Gt, b, SubExp::Var(c)) => Some((*c, *b)),
                    _ => None,
                };
                if let Some((c, b)) = fact {
                    self.ceilings.entry(c).or_insert(b);
                }
            }
        }
    }

    /// Whether `i` is proven to lie in `0..dim` in code under the branch conditions `guards`.
    fn within(&self, i: SubExp, dim: SubExp, guards: &[Guard]) -> bool {
        let SubExp::Var(i) = i else {
            return false;
        };
        let Some(b) = self.below.get(&i) else {
            return self.offset_within(i, dim);
        };
        self.at_most(*b, dim)
            || guards.iter().any(|(c, taken)| {
                matches!(self.less.get(c), Some((v, d, holds)) if *v == i && holds == taken && self.at_most(*d, dim))
            })
    }

    /// Whether `0..b` lies in `0..dim`: `b` is `dim` (or a smaller constant), or a count whose
    /// ceiling is (following ceilings: a count's loop may itself run to a count).
    fn at_most(&self, mut b: SubExp, dim: SubExp) -> bool {
        for _ in 0..=self.ceilings.len() {
            match (b, dim) {
                (b, d) if b == d => return true,
                (
                    SubExp::Const(ogham_ir::Const::I64(b)),
                    SubExp::Const(ogham_ir::Const::I64(d)),
                ) => {
                    return b <= d;
                }
                (SubExp::Var(c), _) => match self.ceilings.get(&c) {
                    Some(ceiling) => b = *ceiling,
                    None => return false,
                },
                _ => return false,
            }
        }
        false
    }

    /// Whether `x = o + j` (`j` known to lie in some `0..b`) lies in `0..dim`: `o >= 0`
    /// and `o + b <= c` for a `c` whose `0..c` lies in `0..dim` (see the module's header).
    fn offset_within(&self, x: VarId, dim: SubExp) -> bool {
        let Some(&(a, b, false)) = self.sums.get(&x) else {
            return false;
        };
        [(a, b), (b, a)].into_iter().any(|(j, o)| {
            let SubExp::Var(j) = j else {
                return false;
            };
            let (Some(bound), Some(o)) = (self.below.get(&j), self.linear(o, dim, 0)) else {
                return false;
            };
            let non_negative = o.constant >= 0 && o.terms.iter().all(|t| t.1 > 0);
            let end = self.linear(*bound, dim, 0).and_then(|b| o.add(&b, 1));
            non_negative
                && match end {
                    Some(Linear { constant, terms }) => match terms[..] {
                        [] => self.at_most(SubExp::i64(constant), dim),
                        [(c, 1)] => constant <= 0 && self.at_most(SubExp::Var(c), dim),
                        _ => false,
                    },
                    None => false,
                }
        })
    }

    /// `e` as a linear expression of indices, counters, final counts and `dim` (the extent of
    /// an array that exists: all non-negative, and far below `2^62`), through the sums and
    /// differences defining it; `None` if it is not one, or exceeds the limits of
    /// [`Linear::add`].
    fn linear(&self, e: SubExp, dim: SubExp, depth: usize) -> Option<Linear> {
        match e {
            SubExp::Const(ogham_ir::Const::I64(k)) if k.abs() <= LINEAR_CONSTANT => Some(Linear {
                constant: k,
                terms: Vec::new(),
            }),
            SubExp::Const(_) => None,
            SubExp::Var(v) => match self.sums.get(&v) {
                Some(&(a, b, subtracts)) if depth < 8 => {
                    let a = self.linear(a, dim, depth + 1)?;
                    let b = self.linear(b, dim, depth + 1)?;
                    a.add(&b, if subtracts { -1 } else { 1 })
                }
                _ if self.below.contains_key(&v) || self.counts.contains(&v) || e == dim => {
                    Some(Linear {
                        constant: 0,
                        terms: vec![(v, 1)],
                    })
                }
                _ => None,
            },
        }
    }
}

/// Whether `exp` is the kernel `seg` or holds it in a nested host body.
fn holds(exp: &Exp<HostOp>, seg: &SegOp) -> bool {
    if let Exp::Host(HostOp::Seg(s)) = exp {
        return std::ptr::eq(&**s, seg);
    }
    nested_scopes(exp).into_iter().any(|(_, body)| match body {
        Nested::Host(b) => b.stmts.iter().any(|s| holds(&s.exp, seg)),
        Nested::Core(_) => false,
    })
}

/// The arrays made by `iota` (and their slices) and the definitions [`counts`] reads, from a
/// first walk.
#[derive(Default)]
struct Defs<'f> {
    /// `a -> n`: every element of `a` lies in `0..n` (`a` is `iota n` or a slice of it).
    iotas: HashMap<VarId, SubExp>,
    defs: HashMap<VarId, (usize, Def<'f>)>,
}

impl<'f> Visitor<'f> for Defs<'f> {
    fn stmt<H: Form>(&mut self, stmt: &'f Stmt<H>) {
        match (&stmt.pat[..], &stmt.exp) {
            ([v], Exp::Iota(n)) => {
                self.iotas.insert(*v, *n);
            }
            ([v], Exp::Index(a, idx))
                if idx.iter().all(|d| matches!(d, DimIndex::Slice { .. })) =>
            {
                if let Some(n) = self.iotas.get(a).copied() {
                    self.iotas.insert(*v, n);
                }
            }
            _ => {}
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
        let Ranges {
            below,
            ceilings,
            less,
            counts: finals,
            sums,
        } = &mut self.ranges;
        let f = self.f;
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
                if let (BinOp::Add | BinOp::Sub, [x]) = (op, &stmt.pat[..]) {
                    sums.insert(*x, (*a, *b, *op == BinOp::Sub));
                }
            }
            Exp::Loop {
                params,
                form: LoopForm::For { index, bound },
                body,
            } => {
                below.insert(*index, *bound);
                for (((p, init), next), result) in params.iter().zip(&body.result).zip(&stmt.pat) {
                    let zero = *init == SubExp::Const(ogham_ir::Const::I64(0));
                    if zero && counts(defs, *p, *next) {
                        below.insert(*p, *bound);
                        ceilings.insert(*result, *bound);
                        finals.insert(*result);
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

#[cfg(test)]
mod tests {
    use super::Proofs;
    use ogham_ir::kir::HostOp;
    use ogham_ir::{Exp, SubExp, VarId};

    /// Whether `p_3[idx]` (a row of extent `n_1`) is proven in range in the IR `text`, whose
    /// variable named `idx` is the index.
    fn proven(text: &str, idx: &str) -> bool {
        let program = ogham_ir::parse::parse_program(text).expect("an IR program");
        let f = &program.functions[0];
        let var = |name: &str| {
            let k = f.vars.iter().position(|v| v.name == name).expect(name);
            SubExp::Var(VarId(k as u32))
        };
        let seg = f
            .body
            .stmts
            .iter()
            .find_map(|s| match &s.exp {
                Exp::Host(HostOp::Seg(seg)) => Some(seg),
                _ => None,
            })
            .expect("a kernel");
        Proofs::of(f, seg).within(var(idx), var("n"))
    }

    /// A compaction's count `acc_10` (at most `n_1`), then a loop over it reading the row.
    fn counted(bound: &str, step: &str) -> String {
        format!(
            "entry main [m_0, n_1] (xss_2: [m_0][n_1]f32) : [m_0]f32 =
  let r_16: [m_0]f32 = segmap thread (gtid_17 < m_0) : f32
    do {{
      let p_3: [n_1]f32 = xss_2[gtid_17]
      let acc_10: i64 = loop (acc_4: i64 = 0i64) for i_5 < {bound} do {{
        let x_6: f32 = p_3[i_5]
        let x_7: bool = f32.isnan(x_6)
        let r_9: i64 = if x_7 : i64 then {{
          in acc_4
        }} else {{
          let x_8: i64 = acc_4 + {step}
          in x_8
        }}
        in r_9
      }}
      let acc_15: f32 = loop (acc_11: f32 = 0.0f32) for j_12 < acc_10 do {{
        let x_13: f32 = p_3[j_12]
        let x_14: f32 = acc_11 + x_13
        in x_14
      }}
      in acc_15
    }}
  in r_16
"
        )
    }

    #[test]
    fn a_loop_over_a_count_stays_below_the_counting_loops_bound() {
        assert!(proven(&counted("n_1", "1i64"), "j"));
    }

    #[test]
    fn near_misses_of_counts_keep_their_checks() {
        // A count that may grow by 2 per iteration; a counting loop one longer than the row.
        assert!(!proven(&counted("n_1", "2i64"), "j"));
        let longer = counted("n1_30", "1i64").replace(
            "      let acc_10",
            "      let n1_30: i64 = n_1 + 1i64\n      let acc_10",
        );
        assert!(!proven(&longer, "j"));
    }

    /// A sum over a slice of `iota(n_1)` (`iota_20`) (or of another array) reading the row.
    fn sliced(array: &str) -> String {
        format!(
            "entry main [m_0, n_1] (xss_2: [m_0][n_1]f32, lo_4: i64, len_5: i64, ks_6: [n_1]i64) : [m_0]f32 =
  let iota_20: [n_1]i64 = iota(n_1)
  let r_16: [m_0]f32 = segmap thread (gtid_17 < m_0) : f32
    do {{
      let p_3: [n_1]f32 = xss_2[gtid_17]
      let s_7: [len_5]i64 = {array}[lo_4:+len_5*1i64]
      let r_8: f32 = redomap len_5 (s_7)
        reduce \\(a_9: f32, b_10: f32) : f32 -> {{
          let c_11: f32 = a_9 + b_10
          in c_11
        }} (0.0f32)
        map \\(j_12: i64) : f32 -> {{
          let x_13: f32 = p_3[j_12]
          in x_13
        }}
      in r_8
    }}
  in r_16
"
        )
    }

    #[test]
    fn elements_of_a_slice_of_an_iota_lie_in_its_range() {
        assert!(proven(&sliced("iota_20"), "j"));
        assert!(!proven(&sliced("ks_6"), "j"));
    }

    /// A loop `for i < k_4` reading the row, in a kernel after (or before) the assertion of
    /// `k_4 <= n_1` (the second leaf of `1 <= k_4 && k_4 <= n_1`, or `n_1 >= k_4`).
    fn asserted(leaf: &str, kernel_first: bool) -> String {
        let assertion = format!(
            "  let x_5: bool = 1i64 <= k_4
  let b_6: bool = if x_5 : bool then {{
    let x_7: bool = {leaf}
    in x_7
  }} else {{
    in false
  }}
  let () = assert_user(b_6, \"k\")
"
        );
        let kernel = "  let r_16: [m_0]f32 = segmap thread (gtid_17 < m_0) : f32
    do {
      let p_3: [n_1]f32 = xss_2[gtid_17]
      let acc_15: f32 = loop (acc_11: f32 = 0.0f32) for j_12 < k_4 do {
        let x_13: f32 = p_3[j_12]
        let x_14: f32 = acc_11 + x_13
        in x_14
      }
      in acc_15
    }
";
        let (first, second) = if kernel_first {
            (kernel.to_string(), assertion)
        } else {
            (assertion, kernel.to_string())
        };
        format!(
            "entry main [m_0, n_1] (xss_2: [m_0][n_1]f32, k_4: i64) : [m_0]f32 =\n{first}{second}  in r_16\n"
        )
    }

    #[test]
    fn an_assertion_before_the_kernel_bounds_a_loop() {
        assert!(proven(&asserted("k_4 <= n_1", false), "j"));
        assert!(proven(&asserted("n_1 >= k_4", false), "j"));
    }

    #[test]
    fn near_misses_of_assertions_keep_their_checks() {
        // After the kernel (the kernel runs first, and may fail first); a bound one too large.
        assert!(!proven(&asserted("k_4 <= n_1", true), "j"));
        assert!(!proven(&asserted("k_4 <= m_0", false), "j"));
    }

    /// The triangular loop `for i < n_1: for j < n_1 - i + {extra}: p_3[{offset} + j]`.
    fn triangular(offset: &str, extra: &str) -> String {
        format!(
            "entry main [m_0, n_1] (xss_2: [m_0][n_1]f32) : [m_0]f32 =
  let r_16: [m_0]f32 = segmap thread (gtid_17 < m_0) : f32
    do {{
      let p_3: [n_1]f32 = xss_2[gtid_17]
      let acc_10: f32 = loop (acc_4: f32 = 0.0f32) for i_5 < n_1 do {{
        let x_6: i64 = n_1 - i_5
        let x_7: i64 = x_6 + {extra}
        let o_8: i64 = {offset}
        let acc_15: f32 = loop (acc_11: f32 = acc_4) for j_12 < x_7 do {{
          let idx_9: i64 = o_8 + j_12
          let x_13: f32 = p_3[idx_9]
          let x_14: f32 = acc_11 + x_13
          in x_14
        }}
        in acc_15
      }}
      in acc_10
    }}
  in r_16
"
        )
    }

    #[test]
    fn an_offset_index_of_a_triangular_loop_stays_below_the_end() {
        assert!(proven(&triangular("i_5 + 1i64", "-1i64"), "idx"));
        assert!(proven(&triangular("i_5 + 0i64", "0i64"), "idx"));
    }

    #[test]
    fn near_misses_of_offsets_keep_their_checks() {
        // One past the end; an offset that may be negative; a constant too large for the
        // exact-arithmetic argument.
        assert!(!proven(&triangular("i_5 + 1i64", "0i64"), "idx"));
        assert!(!proven(&triangular("i_5 - 1i64", "1i64"), "idx"));
        assert!(!proven(
            &triangular("i_5 + 4611686018427387904i64", "-4611686018427387904i64"),
            "idx"
        ));
    }
}
