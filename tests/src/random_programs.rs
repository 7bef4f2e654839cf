//! A generator of random well-typed Ogham programs for differential fuzzing (`tests/fuzz.rs`).
//!
//! Every program is one entry point over the same parameters,
//! `entry main [n][m] (xs: [n]f32) (ys: [n]i32) (a: [m][n]f32) (k: i64) (x: f32) (i: i32)`,
//! whose body is an expression of a randomly chosen type built from scalar arithmetic (integer
//! division and remainder included), comparisons, `if`, `let`, sequential loops, and the array
//! constructs: `map`/`map2` with lambdas, `reduce`/`scan` with associative operators (integer
//! `+`, float `+`, `max`, `min`), `filter`, `hist`, `scatter`, `iota`, `replicate`, `concat`,
//! `reverse`, `transpose`, indexing, slicing and in-place updates. Indices, slice bounds and sizes
//! come from the program's values, so runs also fail (out of bounds, negative or huge sizes,
//! division by zero): the backends must then fail alike. Array types track their size: `[n]`,
//! `[m][n]`, or unknown (`filter`, slices, `iota k`), which only size-agnostic constructs take.
//!
//! The same seed always gives the same program (choices come from [`Rng`]).

use crate::differential::Rng;

/// The type of a generated expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    F32,
    I32,
    I64,
    Bool,
    /// `[n]f32`, `[n]i32`
    VecF,
    VecI,
    /// `[]f32` of a size not known statically.
    AnyF,
    /// `[m][n]f32`
    Mat,
}

const RESULTS: [Ty; 7] = [
    Ty::F32,
    Ty::I32,
    Ty::I64,
    Ty::VecF,
    Ty::VecI,
    Ty::AnyF,
    Ty::Mat,
];

struct Gen<'r> {
    rng: &'r mut Rng,
    /// Variables in scope and their types.
    vars: Vec<(String, Ty)>,
    fresh: usize,
}

/// The source of a random program drawn from `rng`.
pub fn program(rng: &mut Rng) -> String {
    let mut g = Gen {
        rng,
        vars: vec![
            ("xs".into(), Ty::VecF),
            ("ys".into(), Ty::VecI),
            ("a".into(), Ty::Mat),
            ("k".into(), Ty::I64),
            ("n".into(), Ty::I64),
            ("m".into(), Ty::I64),
            ("x".into(), Ty::F32),
            ("i".into(), Ty::I32),
        ],
        fresh: 0,
    };
    let result = RESULTS[g.pick(RESULTS.len())];
    let body = if g.pick(3) == 0 {
        let second = RESULTS[g.pick(RESULTS.len())];
        format!("({}, {})", g.expr(result, 4), g.expr(second, 3))
    } else {
        g.expr(result, 5)
    };
    format!(
        "entry main [n][m] (xs: [n]f32) (ys: [n]i32) (a: [m][n]f32) (k: i64) (x: f32) (i: i32) =\n  {body}\n"
    )
}

impl Gen<'_> {
    fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }

    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    /// A variable of type `t` in scope, if any.
    fn var(&mut self, t: Ty) -> Option<String> {
        let names: Vec<String> = self
            .vars
            .iter()
            .filter(|(_, vt)| *vt == t)
            .map(|(n, _)| n.clone())
            .collect();
        (!names.is_empty()).then(|| names[self.pick(names.len())].clone())
    }

    /// `body` generated with `name: t` in scope.
    fn with_var(&mut self, name: &str, t: Ty, body: impl FnOnce(&mut Self) -> String) -> String {
        self.vars.push((name.to_string(), t));
        let s = body(self);
        self.vars.pop();
        s
    }

    /// A lambda `\v -> e` from `from` to `to`.
    fn lambda(&mut self, from: Ty, to: Ty, depth: usize) -> String {
        let v = self.name("v");
        let body = self.with_var(&v, from, |g| g.expr(to, depth));
        format!("(\\{v} -> {body})")
    }

    fn leaf(&mut self, t: Ty) -> String {
        if let Some(v) = self.var(t)
            && self.pick(3) != 0
        {
            return v;
        }
        match t {
            // Negative literals in parentheses: `f -2f32` would be a subtraction.
            Ty::F32 => ["0f32", "1.5f32", "(-2f32)", "0.25f32", "f32.nan", "f32.inf"][self.pick(6)]
                .to_string(),
            Ty::I32 => ["0i32", "1i32", "(-3i32)", "7i32", "i32.highest"][self.pick(5)].to_string(),
            Ty::I64 => ["0i64", "1i64", "2i64", "(-1i64)", "3i64"][self.pick(5)].to_string(),
            Ty::Bool => ["true", "false"][self.pick(2)].to_string(),
            Ty::VecF => "xs".to_string(),
            Ty::VecI => "ys".to_string(),
            Ty::AnyF => "(filter (\\q -> q > 0f32) xs)".to_string(),
            Ty::Mat => "a".to_string(),
        }
    }

    fn expr(&mut self, t: Ty, depth: usize) -> String {
        if depth == 0 {
            return self.leaf(t);
        }
        let d = depth - 1;
        // Constructs common to every type.
        match self.pick(12) {
            0 => return self.leaf(t),
            1 => {
                let c = self.expr(Ty::Bool, d);
                let (p, q) = (self.expr(t, d), self.expr(t, d));
                if !matches!(t, Ty::AnyF) {
                    return format!("(if {c} then {p} else {q})");
                }
            }
            2 => {
                let vt = [Ty::F32, Ty::I32, Ty::I64, Ty::VecF][self.pick(4)];
                let v = self.name("l");
                let e = self.expr(vt, d);
                let body = self.with_var(&v, vt, |g| g.expr(t, d));
                return format!("(let {v} = {e} in {body})");
            }
            _ => {}
        }
        match t {
            Ty::F32 => self.f32_expr(d),
            Ty::I32 => self.i32_expr(d),
            Ty::I64 => self.i64_expr(d),
            Ty::Bool => self.bool_expr(d),
            Ty::VecF => self.vec_f_expr(d),
            Ty::VecI => self.vec_i_expr(d),
            Ty::AnyF => self.any_f_expr(d),
            Ty::Mat => self.mat_expr(d),
        }
    }

    /// An `f32` expression (`d`: the depth left).
    fn f32_expr(&mut self, d: usize) -> String {
        match self.pick(9) {
            0 | 1 => {
                let op = ["+", "-", "*", "/"][self.pick(4)];
                format!("({} {op} {})", self.expr(Ty::F32, d), self.expr(Ty::F32, d))
            }
            2 => format!("(f32.i32 {})", self.expr(Ty::I32, d)),
            3 => format!("(reduce (+) 0f32 {})", self.array_f(d)),
            4 => format!("(reduce f32.max (-f32.inf) {})", self.array_f(d)),
            5 => format!("({})[{}]", self.array_f(d), self.expr(Ty::I64, d)),
            6 => format!("(f32.sqrt {})", self.expr(Ty::F32, d)),
            7 => {
                let acc = self.name("s");
                let j = self.name("j");
                let init = self.expr(Ty::F32, d);
                let bound = self.small_i64(d);
                let step = self.with_var(&acc, Ty::F32, |g| {
                    let jv = j.clone();
                    g.with_var(&jv, Ty::I64, |g| g.expr(Ty::F32, d))
                });
                format!("(loop {acc} = {init} for {j} < {bound} do {step})")
            }
            _ => format!(
                "{}[{}, {}]",
                "a",
                self.expr(Ty::I64, d),
                self.expr(Ty::I64, d)
            ),
        }
    }

    /// An `i32` expression (`d`: the depth left).
    fn i32_expr(&mut self, d: usize) -> String {
        match self.pick(7) {
            0 | 1 => {
                let op = ["+", "-", "*", "/", "%", "&"][self.pick(6)];
                format!("({} {op} {})", self.expr(Ty::I32, d), self.expr(Ty::I32, d))
            }
            2 => format!("(i32.f32 {})", self.expr(Ty::F32, d)),
            3 => format!("(reduce (+) 0i32 {})", self.expr(Ty::VecI, d)),
            4 => format!("({})[{}]", self.expr(Ty::VecI, d), self.expr(Ty::I64, d)),
            5 => format!("(i32.i64 {})", self.expr(Ty::I64, d)),
            _ => format!("(reduce i32.min i32.highest {})", self.expr(Ty::VecI, d)),
        }
    }

    /// An `i64` expression (`d`: the depth left).
    fn i64_expr(&mut self, d: usize) -> String {
        match self.pick(6) {
            0 => format!("(length {})", self.array_f(d)),
            1 => {
                let op = ["+", "-", "*", "/"][self.pick(4)];
                format!("({} {op} {})", self.expr(Ty::I64, d), self.expr(Ty::I64, d))
            }
            2 => format!("(i64.i32 {})", self.expr(Ty::I32, d)),
            3 => "k".to_string(),
            4 => format!("(length (iota {}))", self.expr(Ty::I64, d)),
            _ => format!("(reduce (+) 0i64 (map i64.i32 {}))", self.expr(Ty::VecI, d)),
        }
    }

    /// A `bool` expression (`d`: the depth left).
    fn bool_expr(&mut self, d: usize) -> String {
        match self.pick(5) {
            0 => format!("({} < {})", self.expr(Ty::F32, d), self.expr(Ty::F32, d)),
            1 => format!("({} == {})", self.expr(Ty::I32, d), self.expr(Ty::I32, d)),
            2 => format!("(f32.isnan {})", self.expr(Ty::F32, d)),
            3 => format!("({} && {})", self.expr(Ty::Bool, d), self.expr(Ty::Bool, d)),
            _ => format!("({} <= {})", self.expr(Ty::I64, d), self.expr(Ty::I64, d)),
        }
    }

    /// An `[n]f32` expression (`d`: the depth left).
    fn vec_f_expr(&mut self, d: usize) -> String {
        match self.pick(9) {
            0 | 1 => {
                let f = self.lambda(Ty::F32, Ty::F32, d);
                format!("(map {f} {})", self.expr(Ty::VecF, d))
            }
            2 => {
                let (p, q) = (self.name("p"), self.name("q"));
                let body = self.with_var(&p, Ty::F32, |g| {
                    let q = q.clone();
                    g.with_var(&q, Ty::I32, |g| g.expr(Ty::F32, d))
                });
                let (u, w) = (self.expr(Ty::VecF, d), self.expr(Ty::VecI, d));
                format!("(map2 (\\{p} {q} -> {body}) {u} {w})")
            }
            3 => format!("(scan (+) 0f32 {})", self.expr(Ty::VecF, d)),
            4 => format!("(reverse {})", self.expr(Ty::VecF, d)),
            5 => format!("({})[{}]", self.expr(Ty::Mat, d), self.expr(Ty::I64, d)),
            6 => {
                let r = self.name("r");
                format!(
                    "(map (\\{r} -> reduce (+) 0f32 {r}) (transpose {}))",
                    self.expr(Ty::Mat, d)
                )
            }
            7 => {
                let t = self.name("t");
                format!(
                    "(let {t} = copy {} in {t} with [{}] = {})",
                    self.expr(Ty::VecF, d),
                    self.expr(Ty::I64, d),
                    self.expr(Ty::F32, d)
                )
            }
            _ => format!(
                "(scatter (copy {}) (map i64.i32 {}) {})",
                self.expr(Ty::VecF, d),
                self.expr(Ty::VecI, d),
                self.expr(Ty::VecF, d)
            ),
        }
    }

    /// An `[n]i32` expression (`d`: the depth left).
    fn vec_i_expr(&mut self, d: usize) -> String {
        match self.pick(5) {
            0 | 1 => {
                let f = self.lambda(Ty::F32, Ty::I32, d);
                format!("(map {f} {})", self.expr(Ty::VecF, d))
            }
            2 => format!("(scan (+) 0i32 {})", self.expr(Ty::VecI, d)),
            3 => {
                let f = self.lambda(Ty::I32, Ty::I32, d);
                format!("(map {f} {})", self.expr(Ty::VecI, d))
            }
            _ => format!("(map (\\z -> z * 2i32) {})", self.expr(Ty::VecI, d)),
        }
    }

    /// An `f32` array of a size known only at run time (`d`: the depth left).
    fn any_f_expr(&mut self, d: usize) -> String {
        match self.pick(8) {
            0 => {
                let f = self.lambda(Ty::F32, Ty::Bool, d);
                format!("(filter {f} {})", self.array_f(d))
            }
            1 => format!(
                "({})[{}:{}]",
                self.array_f(d),
                self.expr(Ty::I64, d),
                self.expr(Ty::I64, d)
            ),
            2 => format!("(concat {} {})", self.array_f(d), self.array_f(d)),
            3 => format!("(map f32.i64 (iota {}))", self.expr(Ty::I64, d)),
            4 => format!(
                "(replicate {} {})",
                self.expr(Ty::I64, d),
                self.expr(Ty::F32, d)
            ),
            5 => format!(
                "(hist (+) 0f32 {} (map i64.i32 {}) {})",
                self.small_i64(d),
                self.expr(Ty::VecI, d),
                self.expr(Ty::VecF, d)
            ),
            6 => format!(
                "({})[{}:{}:{}]",
                self.array_f(d),
                self.expr(Ty::I64, d),
                self.expr(Ty::I64, d),
                self.expr(Ty::I64, d)
            ),
            _ => {
                let f = self.lambda(Ty::F32, Ty::F32, d);
                format!("(map {f} {})", self.array_f(d))
            }
        }
    }

    /// An `[n][m]f32` expression (`d`: the depth left).
    fn mat_expr(&mut self, d: usize) -> String {
        match self.pick(5) {
            0 | 1 => {
                let f = self.lambda(Ty::F32, Ty::F32, d);
                let r = self.name("r");
                format!("(map (\\{r} -> map {f} {r}) {})", self.expr(Ty::Mat, d))
            }
            2 => format!("(replicate m {})", self.expr(Ty::VecF, d)),
            3 => {
                let r = self.name("r");
                format!(
                    "(map (\\{r} -> scan (+) 0f32 {r}) {})",
                    self.expr(Ty::Mat, d)
                )
            }
            _ => {
                let r = self.name("r");
                let v = self.expr(Ty::VecF, d);
                format!(
                    "(map (\\{r} -> map2 (+) {r} {v}) {})",
                    self.expr(Ty::Mat, d)
                )
            }
        }
    }

    /// An `f32` array of any size (`[n]` arrays included).
    fn array_f(&mut self, d: usize) -> String {
        match self.pick(3) {
            0 => self.expr(Ty::AnyF, d),
            _ => self.expr(Ty::VecF, d),
        }
    }

    /// An `i64` that is small whatever the inputs (loop counts, numbers of bins).
    fn small_i64(&mut self, _d: usize) -> String {
        format!("{}i64", self.pick(4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_type_check() {
        for seed in 1..200u64 {
            let source = program(&mut Rng((seed * 0x9e37_79b9) | 1));
            if let Err(e) = ogham::Frontend::load_source("gen.og", &source) {
                panic!("seed {seed}:\n{source}\n{}", e.render());
            }
        }
    }
}
