//! Property tests of the type checker: randomly generated well-typed programs are accepted,
//! and random or mutated programs never make it panic. 10,000 cases per property when `CI` is
//! set, 300 otherwise.
//!
//! The generator builds an expression of a requested type from arithmetic, comparisons, `let`,
//! `if`, lambdas, `map`/`map2`/`reduce`/`scan` over `iota 10` (so every array has size 10),
//! tuples, records, loops and local functions, drawing its choices from a seeded RNG (proptest
//! shrinks the seed).

use ogham_compiler::loader::load_source;
use ogham_compiler::typeck::check;
use ogham_ir::diag::render;
use ogham_ir::source::SourceMap;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if std::env::var_os("CI").is_some() {
            10_000
        } else {
            300
        },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    I32,
    F32,
    Bool,
    ArrI32,
    ArrF32,
    Pair,
    Rec,
}

impl Ty {
    const ALL: [Ty; 7] = [
        Ty::I32,
        Ty::F32,
        Ty::Bool,
        Ty::ArrI32,
        Ty::ArrF32,
        Ty::Pair,
        Ty::Rec,
    ];

    fn text(self) -> &'static str {
        match self {
            Ty::I32 => "i32",
            Ty::F32 => "f32",
            Ty::Bool => "bool",
            Ty::ArrI32 => "[10]i32",
            Ty::ArrF32 => "[10]f32",
            Ty::Pair => "(i32, f32)",
            Ty::Rec => "{x: i32, y: bool}",
        }
    }
}

/// A small deterministic RNG (xorshift), seeded by proptest.
struct Gen {
    state: u64,
    vars: Vec<(String, Ty)>,
    fresh: usize,
}

impl Gen {
    fn next(&mut self, n: usize) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    fn name(&mut self) -> String {
        self.fresh += 1;
        format!("v{}", self.fresh)
    }

    /// An expression of type `ty`; `depth` bounds the nesting.
    fn expr(&mut self, ty: Ty, depth: usize) -> String {
        let candidates: Vec<String> = self
            .vars
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n.clone())
            .collect();
        if depth == 0 || self.next(5) == 0 {
            if !candidates.is_empty() && self.next(2) == 0 {
                return candidates[self.next(candidates.len())].clone();
            }
            return self.leaf(ty);
        }
        let d = depth - 1;
        match self.next(4) {
            0 => {
                let t = Ty::ALL[self.next(Ty::ALL.len())];
                let v = self.name();
                let value = self.expr(t, d);
                self.vars.push((v.clone(), t));
                let body = self.expr(ty, d);
                self.vars.pop();
                format!("(let {v} = {value} in {body})")
            }
            1 => {
                let c = self.expr(Ty::Bool, d);
                let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                format!("(if {c} then {a} else {b})")
            }
            2 => {
                // A local function applied to an argument, or an immediately applied lambda.
                let t = Ty::ALL[self.next(Ty::ALL.len())];
                let (f, x) = (self.name(), self.name());
                self.vars.push((x.clone(), t));
                let body = self.expr(ty, d);
                self.vars.pop();
                let arg = self.atom(t, d);
                if self.next(2) == 0 {
                    format!("(let {f} ({x}: {}) = {body} in {f} {arg})", t.text())
                } else {
                    format!("((\\{x} -> {body}) {arg})")
                }
            }
            _ => self.specific(ty, d),
        }
    }

    fn leaf(&mut self, ty: Ty) -> String {
        match ty {
            Ty::I32 => format!("{}", self.next(100)),
            Ty::F32 => format!("{}.5f32", self.next(100)),
            Ty::Bool => ["true", "false"][self.next(2)].to_string(),
            Ty::ArrI32 => "(map i32.i64 (iota 10))".to_string(),
            Ty::ArrF32 => "(replicate 10 1f32)".to_string(),
            Ty::Pair => "(1, 2f32)".to_string(),
            Ty::Rec => "{x = 1, y = true}".to_string(),
        }
    }

    /// Type-specific constructs.
    fn specific(&mut self, ty: Ty, d: usize) -> String {
        match (ty, self.next(6)) {
            (Ty::I32, 0) => format!(
                "({} + {} * {})",
                self.expr(Ty::I32, d),
                self.expr(Ty::I32, d),
                self.expr(Ty::I32, d)
            ),
            (Ty::I32, 1) => format!("reduce (+) 0 {}", self.atom(Ty::ArrI32, d)),
            (Ty::I32, 2) => format!("({}).0", self.expr(Ty::Pair, d)),
            (Ty::I32, 3) => format!("({}).x", self.expr(Ty::Rec, d)),
            (Ty::I32, 4) => format!(
                "(loop acc = {} for i < 4 do acc + i32.i64 i)",
                self.expr(Ty::I32, d)
            ),
            (Ty::I32, _) => format!("{}[3]", self.atom(Ty::ArrI32, d)),
            (Ty::F32, 0) => format!(
                "({} - {} / 2)",
                self.expr(Ty::F32, d),
                self.expr(Ty::F32, d)
            ),
            (Ty::F32, 1) => format!("f32.i32 {}", self.atom(Ty::I32, d)),
            (Ty::F32, 2) => format!("f32.sqrt (f32.abs {})", self.atom(Ty::F32, d)),
            (Ty::F32, 3) => format!("({}).1", self.expr(Ty::Pair, d)),
            (Ty::F32, 4) => format!("reduce max (-f32.inf) {}", self.atom(Ty::ArrF32, d)),
            (Ty::F32, _) => format!(
                "((loop (a, b) = ({}, 0f32) while a < 3 do (a + 1, b + 1.5))).1",
                self.expr(Ty::I32, d)
            ),
            (Ty::Bool, 0) => format!("({} < {})", self.expr(Ty::I32, d), self.expr(Ty::I32, d)),
            (Ty::Bool, 1) => format!(
                "({} && !{})",
                self.expr(Ty::Bool, d),
                self.atom(Ty::Bool, d)
            ),
            (Ty::Bool, 2) => format!("({} == {})", self.expr(Ty::F32, d), self.expr(Ty::F32, d)),
            (Ty::Bool, 3) => format!("({}).y", self.expr(Ty::Rec, d)),
            (Ty::Bool, 4) => format!(
                "(length (filter (\\x -> x > 2) {}) > 3)",
                self.atom(Ty::ArrI32, d)
            ),
            (Ty::Bool, _) => format!("isnan {}", self.atom(Ty::F32, d)),
            (Ty::ArrI32, 0) => {
                let x = self.name();
                self.vars.push((x.clone(), Ty::I32));
                let body = self.expr(Ty::I32, d);
                self.vars.pop();
                format!("map (\\{x} -> {body}) {}", self.atom(Ty::ArrI32, d))
            }
            (Ty::ArrI32, 1) => format!("scan (+) 0 {}", self.atom(Ty::ArrI32, d)),
            (Ty::ArrI32, 2) => format!(
                "map2 (*) {} {}",
                self.atom(Ty::ArrI32, d),
                self.atom(Ty::ArrI32, d)
            ),
            (Ty::ArrI32, 3) => format!("replicate 10 {}", self.atom(Ty::I32, d)),
            (Ty::ArrI32, 4) => format!(
                "(copy {} with [2] = {})",
                self.atom(Ty::ArrI32, d),
                self.expr(Ty::I32, d)
            ),
            (Ty::ArrI32, _) => format!("({} |> map (\\x -> x * 2))", self.atom(Ty::ArrI32, d)),
            (Ty::ArrF32, 0 | 1) => format!("map f32.i32 {}", self.atom(Ty::ArrI32, d)),
            (Ty::ArrF32, 2) => format!(
                "map2 (\\a b -> a + f32.i32 b) {} {}",
                self.atom(Ty::ArrF32, d),
                self.atom(Ty::ArrI32, d)
            ),
            (Ty::ArrF32, 3) => format!(
                "(unzip (zip {} {})).0",
                self.atom(Ty::ArrF32, d),
                self.atom(Ty::ArrI32, d)
            ),
            (Ty::ArrF32, _) => format!(
                "map (\\p -> p.0 * p.1) (zip {0} {0})",
                self.atom(Ty::ArrF32, d)
            ),
            (Ty::Pair, 0..=2) => format!("({}, {})", self.expr(Ty::I32, d), self.expr(Ty::F32, d)),
            (Ty::Pair, _) => format!(
                "({} with 0 = {})",
                self.atom(Ty::Pair, d),
                self.expr(Ty::I32, d)
            ),
            (Ty::Rec, 0..=2) => format!(
                "{{y = {}, x = {}}}",
                self.expr(Ty::Bool, d),
                self.expr(Ty::I32, d)
            ),
            (Ty::Rec, _) => format!(
                "({} with x = {})",
                self.atom(Ty::Rec, d),
                self.expr(Ty::I32, d)
            ),
        }
    }

    /// An expression in parentheses, usable as an argument.
    fn atom(&mut self, ty: Ty, d: usize) -> String {
        format!("({})", self.expr(ty, d))
    }
}

/// A well-typed program with one entry point.
fn program(seed: u64) -> String {
    let mut g = Gen {
        state: seed | 1,
        vars: vec![
            ("p".into(), Ty::I32),
            ("q".into(), Ty::F32),
            ("xs".into(), Ty::ArrI32),
        ],
        fresh: 0,
    };
    let ty = Ty::ALL[g.next(Ty::ALL.len())];
    let helper = g.expr(Ty::I32, 3);
    let body = g.expr(ty, 4);
    format!(
        "def helper (p: i32) (q: f32) (xs: [10]i32) : i32 = {helper}\n\
         entry main (p: i32) (q: f32) (xs: [10]i32) : {} = {body}\n",
        ty.text()
    )
}

/// Loads and checks `text`; `Some(Ok/Err)` when it parses.
fn run(text: &str) -> Option<Result<(), String>> {
    let mut sources = SourceMap::new();
    let program = load_source(&mut sources, "fuzz.og", text).ok()?;
    Some(
        check(&sources, &program)
            .map(|_| ())
            .map_err(|d| render(&sources, &d)),
    )
}

const TOKENS: &[&str] = &[
    "def", "let", "in", "if", "then", "else", "loop", "for", "while", "do", "with", "=", "(", ")",
    "[", "]", "{", "}", ",", ":", ":>", "->", "\\", "+", "*", "-", "<", "==", "&&", "|>", ".0",
    ".x", "x", "y", "f", "map", "reduce", "scatter", "iota", "copy", "filter", "1", "2.5", "3i64",
    "true", "i32", "f32", "[]f32", "[n]", "'a", "*[]i32", "f32.sqrt", "x.0",
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn well_typed_programs_are_accepted(seed in any::<u64>()) {
        let text = program(seed);
        match run(&text) {
            Some(Ok(())) => {}
            Some(Err(diags)) => panic!("rejected:\n{text}\n{diags}"),
            None => panic!("the generator wrote a syntax error:\n{text}"),
        }
    }

    #[test]
    fn mutated_programs_do_not_panic(seed in any::<u64>(), edits in prop::collection::vec((any::<usize>(), 0..TOKENS.len()), 1..4)) {
        let text = program(seed);
        let mut words: Vec<&str> = text.split(' ').collect();
        for (at, token) in edits {
            let at = at % words.len();
            words[at] = TOKENS[token];
        }
        let _ = run(&words.join(" "));
    }

    #[test]
    fn token_soup_does_not_panic(tokens in prop::collection::vec(0..TOKENS.len(), 1..40)) {
        let body: Vec<&str> = tokens.into_iter().map(|t| TOKENS[t]).collect();
        let _ = run(&format!("def main (x: i32) (xs: []f32) = {}", body.join(" ")));
        let _ = run(&body.join(" "));
    }
}
