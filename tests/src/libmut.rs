//! Structural mutations of compiled libraries (`.ogl`), for the fuzzing harness
//! (`tests/fuzz.rs`): a valid library's decoded JSON is edited at its nodes — numbers (variable
//! ids, sizes, constants, indices, source ranges), strings (enum variants, types, names),
//! lists (statements, parameters, results, dimensions dropped, duplicated or swapped), enum
//! tags, whole subtrees copied over others of the same kind (a type over another type, a
//! statement over another statement), and the unchecked ranges widened to whole files — and
//! the result loaded and run.
//!
//! The oracle ([`check`]): a mutant is refused when it loads, or it loads and each call either
//! fails at its first call (its kernels cannot be compiled) or runs on the CPU backend to the
//! results or the error of the IR evaluator (`ogham_runtime::ireval`, which checks every index
//! and size itself) on the same loaded program. A panic, an internal error (`R0708`) of a run,
//! or compiled code that succeeds where the evaluator fails (an access out of bounds that went
//! unchecked) or computes other results is a failure; a crash kills the harness, whose trace
//! (`OGHAM_FUZZ_TRACE=1`) names the round.

use crate::differential::{Inputs, Rng, value};
use crate::random_programs;
use ogham::Frontend;
use ogham::codegen::cpu::CPU;
use ogham::testing::compare_outputs;
use ogham_compiler::pipeline::Options;
use ogham_runtime::ireval::{self, Thresholds};
use ogham_runtime::library::Library;
use ogham_runtime::value::Value;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Programs every campaign mutates besides random ones: the constructs of the hand-made
/// attacks (an `#[unsafe]` definition, a size coercion, proven indices, a loop, a filter).
pub const FIXED: [&str; 3] = [
    "#[unsafe]\ndef get (xs: []f32) (i: i64) : f32 = xs[i]\n\
     entry main (xs: []f32) (i: i64) : (f32, f32) = (get xs i, xs[i])\n",
    "entry main [n] (xs: [n]f32) (ys: []f32) : [n]f32 = map2 (+) xs (ys :> [n]f32)\n",
    "entry main (xs: []i64) (k: i64) : ([]i64, i64) =\n\
     \x20 let ys = filter (\\x -> x > k) xs\n\
     \x20 let s = loop acc = 0 for i < length ys do acc + ys[i]\n\
     \x20 in (map (\\i -> xs[i] * 2) (iota (length xs)), s)\n",
];

/// A library to mutate: its JSON and the arguments of each of its entry points' calls.
pub struct Base {
    pub json: Json,
    pub calls: Vec<(String, Vec<Value>)>,
}

/// The library of `source` with arguments drawn for its entry points (small arrays and
/// scalars); `None` when the program does not compile to kernel IR.
pub fn base(source: &str, rng: &mut Rng) -> Option<Base> {
    let fe = Frontend::load_source("mutated.og", source).ok()?;
    let program = fe.compile_kernel(Options::KERNEL).ok()?;
    let lib = Library::new(fe.sources.clone(), program, CPU);
    let json = serde_json::from_str(&lib.to_json().ok()?).ok()?;
    let mut calls = Vec::new();
    for (name, signature) in lib.entries() {
        let mut sizes = HashMap::new();
        let args = signature
            .params
            .iter()
            .map(|(_, t)| value(t, rng, &mut sizes, Inputs::default()))
            .collect();
        calls.push((name.to_string(), args));
    }
    Some(Base { json, calls })
}

/// Base library `k` of a campaign: one of [`FIXED`], or a random program.
pub fn base_of_round(k: u64) -> Option<Base> {
    let mut rng = Rng(k.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    match k % 4 {
        f @ 0..3 => base(FIXED[f as usize], &mut rng),
        _ => base(&random_programs::program(&mut rng), &mut rng),
    }
}

/// The JSON pointers of every node of `v` (below `at`).
fn nodes(v: &Json, at: String, out: &mut Vec<String>) {
    match v {
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                nodes(item, format!("{at}/{i}"), out);
            }
        }
        Json::Object(fields) => {
            for (k, item) in fields {
                let key = k.replace('~', "~0").replace('/', "~1");
                nodes(item, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// What kind of node `v` is: subtrees of one kind replace each other (an object by its keys,
/// a list by its first element's kind, a scalar by its JSON type).
fn kind(v: &Json) -> String {
    match v {
        Json::Object(fields) => {
            let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
            format!("{{{}}}", keys.join(","))
        }
        Json::Array(items) => format!("[{}]", items.first().map_or(String::new(), kind)),
        Json::Number(_) => "number".to_string(),
        Json::String(_) => "string".to_string(),
        Json::Bool(_) => "bool".to_string(),
        Json::Null => "null".to_string(),
    }
}

/// One structural mutation of library `lib`, in place.
fn mutate_once(lib: &mut Json, rng: &mut Rng) {
    let mut all = Vec::new();
    nodes(lib, String::new(), &mut all);
    let in_program: Vec<&String> = all.iter().filter(|p| p.starts_with("/program/")).collect();
    let pick =
        |rng: &mut Rng, among: &[&String]| among[rng.below(among.len() as u64) as usize].clone();
    let at = pick(rng, &in_program);
    let node = lib.pointer(&at).cloned().unwrap_or(Json::Null);
    match rng.below(10) {
        // Whole files unchecked, or a range of a file that is no `#[unsafe]` definition.
        0 => {
            let files = lib["sources"]["files"].as_array().map_or(0, Vec::len) as u64;
            let file = rng.below(files.max(1));
            let len = lib["sources"]["files"][file as usize]["text"]
                .as_str()
                .map_or(0, str::len);
            let end = [len, len / 2, len + 1][rng.below(3) as usize];
            let range = serde_json::json!({ "file": file, "start": 0, "end": end });
            if let Some(list) = lib["program"]["unchecked"].as_array_mut() {
                list.push(range);
            }
        }
        // A subtree copied over another of the same kind (types, statements, operands, sizes).
        1..=3 => {
            let same: Vec<&String> = in_program
                .iter()
                .copied()
                .filter(|p| *p != &at && lib.pointer(p).is_some_and(|v| kind(v) == kind(&node)))
                .collect();
            if !same.is_empty() {
                let from = pick(rng, &same);
                let copy = lib.pointer(&from).cloned();
                if let (Some(copy), Some(to)) = (copy, lib.pointer_mut(&at)) {
                    *to = copy;
                }
            }
        }
        // A list's element dropped, duplicated or two swapped.
        4 | 5 => {
            let lists: Vec<&String> = in_program
                .iter()
                .copied()
                .filter(|p| {
                    lib.pointer(p)
                        .and_then(Json::as_array)
                        .is_some_and(|a| !a.is_empty())
                })
                .collect();
            if lists.is_empty() {
                return;
            }
            let list = pick(rng, &lists);
            if let Some(items) = lib.pointer_mut(&list).and_then(Json::as_array_mut) {
                let (i, j) = (
                    rng.below(items.len() as u64) as usize,
                    rng.below(items.len() as u64) as usize,
                );
                match rng.below(3) {
                    0 => {
                        items.remove(i);
                    }
                    1 => {
                        let copy = items[i].clone();
                        items.insert(j, copy);
                    }
                    _ => items.swap(i, j),
                }
            }
        }
        // A number changed: near its value, small, or large.
        6 | 7 => {
            let numbers: Vec<&String> = in_program
                .iter()
                .copied()
                .filter(|p| lib.pointer(p).is_some_and(Json::is_number))
                .collect();
            if numbers.is_empty() {
                return;
            }
            let at = pick(rng, &numbers);
            if let Some(n) = lib.pointer_mut(&at) {
                let old = n.as_i64().unwrap_or(0);
                let new = match rng.below(6) {
                    0 => old + 1,
                    1 => old - 1,
                    2 => rng.below(4) as i64,
                    3 => 1000,
                    4 => 100_000,
                    _ => rng.below(64) as i64,
                };
                *n = Json::from(new.max(0));
            }
        }
        // A string (an enum variant, a type, a name) or an enum's tag replaced by another seen
        // in the library.
        _ => {
            let mut strings = Vec::new();
            let mut tags = Vec::new();
            for p in &in_program {
                match lib.pointer(p) {
                    Some(Json::String(s)) => strings.push(s.clone()),
                    Some(Json::Object(o)) if o.len() == 1 => tags.extend(o.keys().cloned()),
                    _ => {}
                }
            }
            match lib.pointer_mut(&at) {
                Some(Json::String(s)) if !strings.is_empty() => {
                    *s = strings[rng.below(strings.len() as u64) as usize].clone();
                }
                Some(Json::Object(o)) if o.len() == 1 && !tags.is_empty() => {
                    let tag = tags[rng.below(tags.len() as u64) as usize].clone();
                    let inner = o.values().next().cloned().unwrap_or(Json::Null);
                    o.clear();
                    o.insert(tag, inner);
                }
                _ => {}
            }
        }
    }
}

/// A structurally mutated copy of `lib` (one to three mutations).
pub fn mutate(lib: &Json, rng: &mut Rng) -> Json {
    let mut out = lib.clone();
    for _ in 0..1 + rng.below(3) {
        mutate_once(&mut out, rng);
    }
    out
}

/// What a mutant did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Refused at load.
    Refused,
    /// Loaded; a call failed before running (its kernels could not be compiled).
    RefusedAtCall,
    /// Loaded; every call gave the IR evaluator's results or failed as it did.
    Ran,
}

/// Loads mutant `text` and runs its calls (see the module header); `Err` describes a failure.
pub fn check(text: &str, calls: &[(String, Vec<Value>)]) -> Result<Outcome, String> {
    let lib = match catch_unwind(|| Library::from_json(text, "mutant.ogl", CPU)) {
        Err(_) => return Err("loading panicked".to_string()),
        Ok(Err(_)) => return Ok(Outcome::Refused),
        Ok(Ok(lib)) => lib,
    };
    let Some(program) = lib.program() else {
        return Err("a loaded library without its program".to_string());
    };
    let mut outcome = Outcome::Ran;
    for (entry, args) in calls {
        let compiled = catch_unwind(AssertUnwindSafe(|| lib.call(entry, args.clone())))
            .map_err(|_| format!("calling `{entry}` panicked"))?;
        let evaluated = catch_unwind(AssertUnwindSafe(|| {
            ireval::run(program, entry, args.clone(), &Thresholds::default())
        }))
        .map_err(|_| format!("the IR evaluator panicked on `{entry}`"))?;
        match (compiled, evaluated) {
            (Ok(c), Ok(e)) => compare_outputs(&e, &c, Some(1e-5))
                .map_err(|d| format!("`{entry}`: other results than the evaluator's: {d}"))?,
            (Err(c), _) if c.code == "R0708" && c.message.contains("compil") => {
                outcome = Outcome::RefusedAtCall;
            }
            (Err(c), _) if c.code == "R0708" => {
                return Err(format!("`{entry}`: internal error {}", c.message));
            }
            (Err(_), Err(_)) => {}
            (Ok(_), Err(e)) => {
                return Err(format!(
                    "`{entry}` ran where the evaluator failed with {}: {}",
                    e.code, e.message
                ));
            }
            (Err(c), Ok(_)) => {
                return Err(format!(
                    "`{entry}` failed with {} where the evaluator ran: {}",
                    c.code, c.message
                ));
            }
        }
    }
    Ok(outcome)
}
