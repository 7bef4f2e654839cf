//! Construct counts for `structure core { ... }` / `structure kir { ... }` test lines.
//!
//! Counts every statement of every function, nested bodies included. The map always holds every
//! name of [`CONSTRUCTS`] (zero when absent), so a test naming an unknown construct can be told
//! apart from one expecting zero.

use crate::kir::{SegKind, SegLevel};
use crate::traverse::for_each_stmt;
use crate::{Exp, Program, Soac};
use std::collections::BTreeMap;

/// Every construct name that [`count_constructs`] reports.
pub const CONSTRUCTS: &[&str] = &[
    "screma",
    "map",
    "redomap",
    "scanomap",
    "scatter",
    "hist",
    "loop",
    "if",
    "iota",
    "replicate",
    "index",
    "update",
    "copy",
    "rearrange",
    "reshape",
    "concat",
    "segmap",
    "segred",
    "segscan",
    "seghist",
    "thread",
    "block",
    "threshold",
];

/// How many times each construct occurs in the program. `screma` counts every `Screma`; `map`
/// those without scans or reductions, `redomap` those with reductions and no scans, `scanomap`
/// those with scans; `thread`/`block` count kernels by level.
pub fn count_constructs(program: &Program) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = CONSTRUCTS
        .iter()
        .map(|name| (name.to_string(), 0))
        .collect();
    let mut bump = |name: &str| *counts.entry(name.to_string()).or_default() += 1;
    for function in &program.functions {
        for_each_stmt(&function.body, &mut |stmt| match &stmt.exp {
            Exp::Soac(Soac::Screma { scans, reds, .. }) => {
                bump("screma");
                bump(if !scans.is_empty() {
                    "scanomap"
                } else if !reds.is_empty() {
                    "redomap"
                } else {
                    "map"
                });
            }
            Exp::Soac(Soac::Scatter { .. }) => bump("scatter"),
            Exp::Soac(Soac::Hist { .. }) => bump("hist"),
            Exp::Loop { .. } => bump("loop"),
            Exp::If { .. } => bump("if"),
            Exp::Iota(_) => bump("iota"),
            Exp::Replicate(..) => bump("replicate"),
            Exp::Index(..) => bump("index"),
            Exp::Update(..) => bump("update"),
            Exp::Copy(_) => bump("copy"),
            Exp::Rearrange(..) => bump("rearrange"),
            Exp::Reshape(..) => bump("reshape"),
            Exp::Concat(_) => bump("concat"),
            Exp::Seg(seg) => {
                bump(match seg.kind {
                    SegKind::Map => "segmap",
                    SegKind::Red(_) => "segred",
                    SegKind::Scan(_) => "segscan",
                    SegKind::Hist(_) => "seghist",
                });
                bump(match seg.level {
                    SegLevel::Thread => "thread",
                    SegLevel::Block => "block",
                });
            }
            Exp::Threshold { .. } => bump("threshold"),
            _ => {}
        });
    }
    counts
}
