//! Reading the test blocks of `.og` files (`-- ==`) into a [`Spec`]: the directives (see the
//! module documentation of [`super`]), their positions for error messages, and the values of
//! `input`/`output`, inline or from files (read by [`super::data`]).
//!
//! Invariants: positions are positions in the whole file ([`block_texts`] keeps the line
//! structure); a case's inputs and expected outputs are [`Arg`]s whose `origin` names where each
//! value came from (`the input at line 4`, `` `t_in.npy` (the input at line 4) ``), so binding
//! and comparison errors can point at the file.

use super::Stage;
use super::data;
use super::filecheck::Checks;
use crate::args::Arg;
use ogham_runtime::text::{self, Pos, TextError};
use regex::Regex;
use std::path::Path;

/// What a case expects of its run.
#[derive(Clone, Debug)]
pub enum Expected {
    /// The expected outputs, textual or `.npy` data (see [`Case::inputs`]).
    Outputs(Vec<Arg>),
    Error(Regex),
    /// No `output` or `error:`: the run must merely succeed.
    Success,
}

/// One run of an entry point.
#[derive(Clone, Debug)]
pub struct Case {
    pub entry: String,
    /// Line of the `input` directive.
    pub line: u32,
    /// The arguments: textual values, or the data of `.npy` files, each with its origin.
    pub inputs: Vec<Arg>,
    pub expected: Expected,
}

/// Everything the test blocks of one file ask for.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    pub cases: Vec<Case>,
    /// The program must fail to load or type-check with diagnostics matching this.
    pub compile_error: Option<Regex>,
    pub tolerance: Option<f64>,
    pub tags: Vec<String>,
    pub snapshots: Vec<Stage>,
    /// `snapshot { clif kernel = NAME }` (`kernel = ...` may repeat): the `clif` and `cuda`
    /// snapshots hold only these kernels' code.
    pub kernels: Vec<String>,
    /// `structure <stage> { ... }`: the stage and the body's text.
    pub structures: Vec<(Stage, String)>,
    /// `filecheck <stage>` and the `check:`-style lines after it: the stage and its checks.
    pub filechecks: Vec<(Stage, Checks)>,
}

impl Spec {
    /// Whether the tags disable the file's trials (Futhark's `tags { disable }`).
    pub fn disabled(&self) -> bool {
        self.tags.iter().any(|t| t == "disable")
    }
}

/// A malformed test block: its line and column, and what is wrong.
pub type SpecError = TextError;

// ---------------------------------------------------------------------------------------------
// Parsing test blocks

/// Parses the test blocks of a source file; `base` is the directory `@` files are relative to.
/// `Ok(None)` if the file has no `-- ==` line.
pub fn parse_spec(source: &str, base: &Path) -> Result<Option<Spec>, SpecError> {
    let blocks = block_texts(source);
    if blocks.is_empty() {
        return Ok(None);
    }
    let mut spec = Spec::default();
    for block in &blocks {
        BlockParser {
            cur: Cursor::new(block),
            base,
            spec: &mut spec,
            entries: vec!["main".to_string()],
            pending: None,
        }
        .parse()?;
    }
    if let (Some(_), Some(case)) = (&spec.compile_error, spec.cases.first()) {
        return text::error(
            Pos {
                line: case.line,
                col: 1,
            },
            "a program expected to fail to compile (`error:` without `input`) cannot have inputs",
        );
    }
    Ok(Some(spec))
}

/// One text per test block, with the line structure of the whole file: lines outside the block
/// are empty and the block's `--` markers are blanked, so positions are positions in the file.
fn block_texts(source: &str) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "-- ==" {
            i += 1;
            continue;
        }
        let mut text = "\n".repeat(i + 1);
        i += 1;
        while let Some(line) = lines.get(i) {
            let body = line.trim_start();
            let Some(rest) = body.strip_prefix("--") else {
                break;
            };
            if rest.trim() == "==" {
                break;
            }
            text.push_str(&line[..line.len() - body.len()]);
            text.push_str("  ");
            text.push_str(rest);
            text.push('\n');
            i += 1;
        }
        blocks.push(text);
    }
    blocks
}

struct Cursor<'a> {
    src: &'a str,
    offset: usize,
    pos: Pos,
}

impl<'a> Cursor<'a> {
    fn new(src: &'a str) -> Cursor<'a> {
        Cursor {
            src,
            offset: 0,
            pos: Pos::START,
        }
    }

    fn peek(&self) -> Option<char> {
        self.src[self.offset..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.offset += c.len_utf8();
        if c == '\n' {
            self.pos = Pos {
                line: self.pos.line + 1,
                col: 1,
            };
        } else {
            self.pos.col += 1;
        }
        Some(c)
    }

    fn skip_while(&mut self, pred: impl Fn(char) -> bool) -> &'a str {
        let start = self.offset;
        while self.peek().is_some_and(&pred) {
            self.bump();
        }
        &self.src[start..self.offset]
    }

    fn word(&mut self) -> &'a str {
        self.skip_while(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    fn rest_of_line(&mut self) -> &'a str {
        self.skip_while(|c| c != '\n').trim()
    }

    fn skip_spaces(&mut self) {
        self.skip_while(|c| c.is_whitespace() && c != '\n');
    }

    fn expect(&mut self, c: char, after: &str) -> Result<(), SpecError> {
        self.skip_spaces();
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            text::error(self.pos, format!("expected `{c}` after `{after}`"))
        }
    }

    /// A `{ ... }` body (braces may nest): its text and the position where the text starts.
    /// The stage named after `directive` (`structure`, `filecheck`): one of compiled code, not
    /// `diag`.
    fn code_stage(&mut self, directive: &str) -> Result<Stage, SpecError> {
        self.skip_spaces();
        let pos = self.pos;
        match stage(self.word(), pos)? {
            Stage::Diag => text::error(pos, format!("`diag` has no {directive}")),
            s => Ok(s),
        }
    }

    fn braced(&mut self, after: &str) -> Result<(&'a str, Pos), SpecError> {
        self.skip_while(char::is_whitespace);
        let open = self.pos;
        if self.peek() != Some('{') {
            return text::error(open, format!("expected `{{` after `{after}`"));
        }
        self.bump();
        let (start, start_pos) = (self.offset, self.pos);
        let mut depth = 1;
        while let Some(c) = self.bump() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => return Ok((&self.src[start..self.offset - 1], start_pos)),
                '}' => depth -= 1,
                _ => {}
            }
        }
        text::error(open, "this `{` is never closed")
    }
}

struct BlockParser<'a, 's> {
    cur: Cursor<'a>,
    base: &'s Path,
    spec: &'s mut Spec,
    /// Entry points of the cases that follow.
    entries: Vec<String>,
    /// An `input` waiting for its `output` or `error:`: its values and line.
    pending: Option<(Vec<Arg>, u32)>,
}

impl BlockParser<'_, '_> {
    fn parse(mut self) -> Result<(), SpecError> {
        loop {
            self.cur.skip_while(char::is_whitespace);
            let pos = self.cur.pos;
            let word = self.cur.word();
            match word {
                "" if self.cur.peek().is_none() => break,
                "" => {
                    let c = self.cur.peek().unwrap_or(' ');
                    return text::error(pos, format!("unexpected `{c}` in a test block"));
                }
                "input" => {
                    let values = self.values("input", pos.line)?;
                    self.flush();
                    self.pending = Some((values, pos.line));
                }
                "output" => {
                    let values = self.values("output", pos.line)?;
                    let Some((inputs, line)) = self.pending.take() else {
                        return text::error(pos, "`output` without an `input` before it");
                    };
                    self.push(inputs, line, Expected::Outputs(values));
                }
                "error" => {
                    self.cur.expect(':', "error")?;
                    let text = self.cur.rest_of_line();
                    let re = Regex::new(text).map_err(|e| SpecError {
                        pos,
                        message: format!("bad regex: {e}"),
                    })?;
                    match self.pending.take() {
                        Some((inputs, line)) => self.push(inputs, line, Expected::Error(re)),
                        None if self.spec.compile_error.is_some() => {
                            return text::error(pos, "a second compile-time `error:`");
                        }
                        None => self.spec.compile_error = Some(re),
                    }
                }
                "entry" => {
                    self.cur.expect(':', "entry")?;
                    let names: Vec<String> = self
                        .cur
                        .rest_of_line()
                        .split_whitespace()
                        .map(str::to_string)
                        .collect();
                    if names.is_empty() {
                        return text::error(pos, "`entry:` needs at least one entry point name");
                    }
                    self.flush();
                    self.entries = names;
                }
                "tolerance" => {
                    self.cur.expect(':', "tolerance")?;
                    let text = self.cur.rest_of_line();
                    match text.parse::<f64>() {
                        Ok(t) if t >= 0.0 => self.spec.tolerance = Some(t),
                        _ => return text::error(pos, format!("bad tolerance `{text}`")),
                    }
                }
                "tags" => {
                    let (body, _) = self.cur.braced("tags")?;
                    self.spec
                        .tags
                        .extend(body.split_whitespace().map(str::to_string));
                }
                "snapshot" => {
                    let (body, body_pos) = self.cur.braced("snapshot")?;
                    // `kernel=NAME` reads as `kernel = NAME`.
                    let body = body.replace('=', " = ");
                    let mut ws = words(&body, body_pos).into_iter();
                    while let Some((pos, name)) = ws.next() {
                        if name == "kernel" {
                            match (ws.next(), ws.next()) {
                                (Some((_, "=")), Some((_, kernel))) => {
                                    self.spec.kernels.push(kernel.to_string());
                                    continue;
                                }
                                _ => return text::error(pos, "expected `kernel = NAME`"),
                            }
                        }
                        let stage = stage(name, pos)?;
                        if !self.spec.snapshots.contains(&stage) {
                            self.spec.snapshots.push(stage);
                        }
                    }
                }
                "structure" => {
                    let stage = self.cur.code_stage("structure")?;
                    let (body, _) = self.cur.braced("structure")?;
                    self.spec.structures.push((stage, body.trim().to_string()));
                }
                "filecheck" => {
                    let stage = self.cur.code_stage("filecheck")?;
                    self.spec.filechecks.push((stage, Checks::default()));
                }
                kind if Checks::is_kind(kind) => {
                    self.cur.expect(':', kind)?;
                    let pattern = self.cur.rest_of_line();
                    let Some((_, checks)) = self.spec.filechecks.last_mut() else {
                        return text::error(pos, format!("`{kind}:` before any `filecheck STAGE`"));
                    };
                    checks
                        .push(pos.line as usize, kind, pattern)
                        .map_err(|message| SpecError { pos, message })?;
                }
                other => {
                    return text::error(
                        pos,
                        format!(
                            "unknown test directive `{other}` (known: input output error: entry: \
                             tolerance: tags snapshot structure filecheck check: nextln: \
                             sameln: not: unordered:)"
                        ),
                    );
                }
            }
        }
        self.flush();
        Ok(())
    }

    /// An `input` with neither `output` nor `error:` only has to run.
    fn flush(&mut self) {
        if let Some((inputs, line)) = self.pending.take() {
            self.push(inputs, line, Expected::Success);
        }
    }

    fn push(&mut self, inputs: Vec<Arg>, line: u32, expected: Expected) {
        for entry in &self.entries {
            self.spec.cases.push(Case {
                entry: entry.clone(),
                line,
                inputs: inputs.clone(),
                expected: expected.clone(),
            });
        }
    }

    /// `{ values }` or `@ file` after `input`/`output` (on line `line`). A `{ }` body may mix
    /// textual values with `@ file` items, each standing for the values of that file
    /// (`{ 3 @ xs.npy [1, 2] }`); `@ file` alone names one file, up to the end of the line.
    fn values(&mut self, after: &str, line: u32) -> Result<Vec<Arg>, SpecError> {
        let what = format!("the {after} at line {line}");
        self.cur.skip_spaces();
        if self.cur.peek() == Some('@') {
            let pos = self.cur.pos;
            self.cur.bump();
            let file = self.cur.rest_of_line();
            return data::read(self.base, file, pos, &what);
        }
        let (body, start) = self.cur.braced(after)?;
        let mut cur = Cursor::new(body);
        cur.pos = start;
        let mut values = Vec::new();
        loop {
            let pos = cur.pos;
            let text = cur.skip_while(|c| c != '@');
            values.extend(data::text_args(text::parse_from(text, pos)?, &what));
            let at = cur.pos;
            if cur.bump().is_none() {
                return Ok(values);
            }
            cur.skip_while(char::is_whitespace);
            let file = cur.skip_while(|c| !c.is_whitespace() && c != '@');
            if file.is_empty() {
                return text::error(at, "expected a file name after `@`");
            }
            values.extend(data::read(self.base, file, at, &what)?);
        }
    }
}

/// The whitespace-separated words of `text` (which starts at `start`) with their positions.
fn words(text: &str, start: Pos) -> Vec<(Pos, &str)> {
    let mut cur = Cursor::new(text);
    cur.pos = start;
    let mut words = Vec::new();
    loop {
        cur.skip_while(char::is_whitespace);
        let pos = cur.pos;
        match cur.skip_while(|c| !c.is_whitespace()) {
            "" => return words,
            word => words.push((pos, word)),
        }
    }
}

fn stage(name: &str, pos: Pos) -> Result<Stage, SpecError> {
    Stage::from_name(name).ok_or_else(|| SpecError {
        pos,
        message: format!("unknown stage `{name}` (known: diag core kir cuda clif)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(src: &str) -> Spec {
        parse_spec(src, Path::new(".")).unwrap().unwrap()
    }

    fn spec_err(src: &str) -> String {
        parse_spec(src, Path::new(".")).unwrap_err().to_string()
    }

    #[test]
    fn no_block_means_no_spec() {
        assert!(
            parse_spec("-- just a comment\ndef f = 1\n", Path::new("."))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn cases_and_directives() {
        let s = spec(
            "-- Doubles.\n-- ==\n-- input { [1, 2] }\n-- output { [2, 4] }\n-- input {\n--   3\n-- }\n\
             -- error: out of\n-- entry: a b\n-- input { } output { 1 }\n-- input { 5 }\n\
             -- tolerance: 1e-3\n-- tags { slow big }\n-- snapshot { diag core }\n\
             -- structure core { map 1 }\ndef main (xs: []i32) = xs\n",
        );
        let entries: Vec<&str> = s.cases.iter().map(|c| c.entry.as_str()).collect();
        assert_eq!(entries, ["main", "main", "a", "b", "a", "b"]);
        assert_eq!(s.cases[1].line, 5);
        assert!(matches!(&s.cases[1].expected, Expected::Error(re) if re.as_str() == "out of"));
        assert!(matches!(s.cases[4].expected, Expected::Success));
        assert_eq!(s.tolerance, Some(1e-3));
        assert_eq!(s.tags, ["slow", "big"]);
        assert_eq!(s.snapshots, [Stage::Diag, Stage::Core]);
        assert_eq!(s.structures, [(Stage::Core, "map 1".to_string())]);
        assert!(s.compile_error.is_none());
    }

    #[test]
    fn disable_tag() {
        assert!(spec("-- ==\n-- tags { slow disable }\n").disabled());
        assert!(!spec("-- ==\n-- tags { slow }\n").disabled());
    }

    #[test]
    fn several_blocks_reset_the_entry() {
        let s = spec("-- ==\n-- entry: f\n-- input { 1 }\n\n-- ==\n-- input { 2 }\n");
        let entries: Vec<&str> = s.cases.iter().map(|c| c.entry.as_str()).collect();
        assert_eq!(entries, ["f", "main"]);
    }

    #[test]
    fn filechecks_collect_the_lines_after_them() {
        let s = spec(
            "-- ==\n-- filecheck clif\n-- check: fadd $(a=v\\d+)\n-- not: fsub\n\
             -- filecheck cuda\n-- nextln: x\n-- input { 1 }\n",
        );
        let stages: Vec<Stage> = s.filechecks.iter().map(|(st, _)| *st).collect();
        assert_eq!(stages, [Stage::Clif, Stage::Cuda]);
        assert!(s.filechecks[0].1.check("v1 = fadd v2\n").is_ok());
        let e = s.filechecks[0].1.check("v1 = fadd v2\nfsub\n").unwrap_err();
        assert!(e.starts_with("line 4: `not: fsub`"), "{e}");
        assert_eq!(s.cases.len(), 1);
        assert!(spec_err("-- ==\n-- check: x\n").starts_with("2:4: `check:` before any"));
        assert!(spec_err("-- ==\n-- filecheck diag\n").contains("no filecheck"));
        assert!(spec_err("-- ==\n-- filecheck clif\n-- check: $(x=\n").contains("not closed"));
    }

    #[test]
    fn compile_errors() {
        let s = spec("-- ==\n-- error: E0301\ndef main = 1 + true\n");
        assert_eq!(s.compile_error.unwrap().as_str(), "E0301");
        assert!(s.cases.is_empty());
    }

    #[test]
    fn errors_have_file_positions() {
        assert_eq!(
            spec_err("def x = 1\n-- ==\n-- input { [1,\n--   x] }\n"),
            "4:6: `x` is not a value"
        );
        assert_eq!(
            spec_err("-- ==\n-- output { 1 }\n"),
            "2:4: `output` without an `input` before it"
        );
        assert_eq!(
            spec_err("-- ==\n-- snapshot { diag llvm }\n"),
            "2:20: unknown stage `llvm` (known: diag core kir cuda clif)"
        );
        assert_eq!(
            spec_err("-- ==\n-- input { 1 \n"),
            "2:10: this `{` is never closed"
        );
        assert!(
            spec_err("-- ==\n-- frobnicate\n")
                .starts_with("2:4: unknown test directive `frobnicate`")
        );
        assert!(spec_err("-- ==\n-- error: (\n").starts_with("2:4: bad regex"));
        assert!(spec_err("-- ==\n-- error: x\n-- input { 1 }\n").contains("cannot have inputs"));
    }

    #[test]
    fn values_from_files() {
        let dir = std::env::temp_dir().join(format!("ogham-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.in"), "[1, 2]\n3").unwrap();
        let s = parse_spec("-- ==\n-- input @ a.in\n-- output @ a.in\n", &dir)
            .unwrap()
            .unwrap();
        assert_eq!(s.cases[0].inputs.len(), 2);
        let e = parse_spec("-- ==\n-- input @ missing.in\n", &dir).unwrap_err();
        assert!(e.message.contains("cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn npy_files_and_mixed_values() {
        use crate::args::ArgValue;
        use ogham_runtime::value::{Array, Value};
        let dir = std::env::temp_dir().join(format!("ogham-spec-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let xs = Value::Array(Array::from_f32(vec![2], vec![1.0, 2.0]).unwrap());
        ogham_runtime::npy::write(&dir.join("xs.npy"), &xs).unwrap();
        let s = parse_spec(
            "-- ==\n-- input { 1 @ xs.npy\n--   [2] @xs.npy }\n-- output @ xs.npy\n",
            &dir,
        )
        .unwrap()
        .unwrap();
        let case = &s.cases[0];
        let kinds: Vec<bool> = case
            .inputs
            .iter()
            .map(|a| matches!(a.value, ArgValue::Data(_)))
            .collect();
        assert_eq!(kinds, [false, true, false, true]);
        assert_eq!(case.inputs[0].origin, "the input at line 2");
        assert_eq!(case.inputs[1].origin, "`xs.npy` (the input at line 2)");
        assert!(matches!(&case.inputs[3].value, ArgValue::Data(v) if *v == xs));
        let Expected::Outputs(outputs) = &case.expected else {
            panic!("expected outputs");
        };
        assert_eq!(outputs[0].origin, "`xs.npy` (the output at line 4)");
        // A textual value cut by `@` is an error at its position; so is a missing file name.
        let e = parse_spec("-- ==\n-- input { [1, @ xs.npy] }\n", &dir).unwrap_err();
        assert_eq!(e.pos.line, 2, "{e}");
        let e = parse_spec("-- ==\n-- input { @ missing.npy }\n", &dir).unwrap_err();
        assert!(e.to_string().starts_with("2:12: cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
