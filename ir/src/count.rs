//! Construct counts for `structure core { ... }` / `structure kir { ... }` test lines.
//!
//! Counts every statement of every function, nested bodies included. The map always holds every
//! name of [`CONSTRUCTS`] (zero when absent), so a test naming an unknown construct can be told
//! apart from one expecting zero.

use crate::kir::{HostOp, SegKind, SegLevel};
use crate::traverse::{Visitor, walk};
use crate::{Exp, Form, Program, Soac, Stmt};
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
    "trace",
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
pub fn count_constructs<H: Form>(program: &Program<H>) -> BTreeMap<String, usize> {
    let mut counts = Counts(
        CONSTRUCTS
            .iter()
            .map(|name| (name.to_string(), 0))
            .collect(),
    );
    for function in &program.functions {
        walk(&function.body, &mut counts);
    }
    counts.0
}

/// The counts so far, by construct name.
struct Counts(BTreeMap<String, usize>);

impl Counts {
    fn bump(&mut self, name: &str) {
        *self.0.entry(name.to_string()).or_default() += 1;
    }
}

impl Visitor<'_> for Counts {
    fn stmt<H: Form>(&mut self, stmt: &Stmt<H>) {
        match &stmt.exp {
            Exp::Soac(Soac::Screma { scans, reds, .. }) => {
                self.bump("screma");
                self.bump(if !scans.is_empty() {
                    "scanomap"
                } else if !reds.is_empty() {
                    "redomap"
                } else {
                    "map"
                });
            }
            Exp::Soac(Soac::Scatter { .. }) => self.bump("scatter"),
            Exp::Soac(Soac::Hist { .. }) => self.bump("hist"),
            Exp::Loop { .. } => self.bump("loop"),
            Exp::If { .. } => self.bump("if"),
            Exp::Iota(_) => self.bump("iota"),
            Exp::Replicate(..) => self.bump("replicate"),
            Exp::Index(..) => self.bump("index"),
            Exp::Update(..) => self.bump("update"),
            Exp::Copy(_) => self.bump("copy"),
            Exp::Rearrange(..) => self.bump("rearrange"),
            Exp::Reshape(..) => self.bump("reshape"),
            Exp::Concat(_) => self.bump("concat"),
            Exp::Trace { .. } => self.bump("trace"),
            Exp::Host(host) => match host.host() {
                HostOp::Seg(seg) => {
                    self.bump(match seg.kind {
                        SegKind::Map => "segmap",
                        SegKind::Red(_) => "segred",
                        SegKind::Scan(_) => "segscan",
                        SegKind::Hist(_) => "seghist",
                    });
                    self.bump(match seg.level {
                        SegLevel::Thread => "thread",
                        SegLevel::Block => "block",
                    });
                }
                HostOp::Threshold { .. } => self.bump("threshold"),
            },
            _ => {}
        }
    }
}
