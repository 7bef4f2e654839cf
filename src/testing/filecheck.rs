//! A small FileCheck: `check:`-style directives that match a text (generated code) without
//! pinning down all of it, so that a test survives renumbered values and blocks. The IR
//! filetests (`tests/filetests.rs`) and the `filecheck STAGE` directive of test blocks use it.
//!
//! A directive is a line `KIND: PATTERN` (in a filetest `-- KIND: PATTERN`), with `KIND` one
//! of:
//!
//! - `check`: the pattern matches after the previous match (on the same line, after it, or on
//!   a later line);
//! - `nextln`: the pattern matches on the line after the previous match's line;
//! - `sameln`: the pattern matches on the previous match's line, after it;
//! - `not`: the pattern matches nowhere between the previous match and the next positive one
//!   (the end of the text when none follows);
//! - `unordered`: a run of consecutive `unordered` directives each match after the previous
//!   match, in any order, at places that do not overlap; the next directive continues after
//!   the last of them. Each takes the first free match (greedily, in the run's order).
//!
//! A pattern matches within one line. Its text is literal, except that runs of spaces match
//! any run of spaces and tabs, and `$`: `$(NAME=REGEX)` matches the regular expression and
//! binds `NAME` to what it matched; `$NAME` or `$(NAME)` matches the text last bound to `NAME`
//! (a later definition rebinds it), also later in the pattern that binds it (`fadd $(a=v\d+),
//! $a`); `$(=REGEX)` matches the regular expression; `$$` is a `$`.
//! A literal or a variable's text at either end of the pattern that begins (ends) with a word
//! character must begin (end) a word of the line: `v4` does not match in `v42`.
//!
//! Invariants: directives run in file order; a variable is bound only by a positive directive
//! (`not` may only use variables), at most once per pattern. The `regex` crate has no
//! back-references, so a variable used in the pattern that binds it is matched as a second
//! group with the binding's expression, and a match counts only if the two texts are equal
//! (each start on the line is tried in turn).

use regex::Regex;
use std::collections::HashMap;

/// What a directive asks of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Check,
    NextLine,
    SameLine,
    Not,
    Unordered,
}

impl Kind {
    const ALL: [(&'static str, Kind); 5] = [
        ("check", Kind::Check),
        ("nextln", Kind::NextLine),
        ("sameln", Kind::SameLine),
        ("not", Kind::Not),
        ("unordered", Kind::Unordered),
    ];

    fn name(self) -> &'static str {
        Kind::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("", |(n, _)| n)
    }
}

/// A piece of a pattern.
#[derive(Clone, Debug)]
enum Part {
    Literal(String),
    Regex(String),
    Define(String, String),
    Use(String),
    /// A use of a variable bound earlier in the same pattern: it matches the binding's
    /// regular expression, and the match counts only if both texts are equal.
    Same(String),
}

/// One directive: its line in the test file (1-based), its kind, its text and its pieces.
#[derive(Clone, Debug)]
struct Directive {
    line: usize,
    kind: Kind,
    text: String,
    parts: Vec<Part>,
}

/// The directives of a test file, in order.
#[derive(Clone, Debug, Default)]
pub struct Checks {
    directives: Vec<Directive>,
}

impl Checks {
    /// The directives among the lines of `file` (`-- KIND: PATTERN`, as in IR filetests), or
    /// the first malformed one's error (`line N: ...`).
    pub fn parse(file: &str) -> Result<Checks, String> {
        let mut checks = Checks::default();
        for (i, line) in file.lines().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("--") else {
                continue;
            };
            let rest = rest.trim_start();
            if let Some((kind, pattern)) = rest.split_once(':')
                && Checks::is_kind(kind)
            {
                checks.push(i + 1, kind, pattern)?;
            }
        }
        Ok(checks)
    }

    /// Whether `word` names a kind of directive (`check`, `nextln`, ...).
    pub fn is_kind(word: &str) -> bool {
        Kind::ALL.iter().any(|(name, _)| *name == word)
    }

    /// Appends the directive `KIND: PATTERN` of line `line` (1-based), or says what is wrong
    /// with it (`line N: ...`).
    pub fn push(&mut self, line: usize, kind: &str, pattern: &str) -> Result<(), String> {
        let Some(&(_, kind)) = Kind::ALL.iter().find(|(name, _)| *name == kind) else {
            return Err(format!("line {line}: `{kind}` is not a kind of check"));
        };
        let pattern = pattern.trim();
        let parts = parse_pattern(pattern).map_err(|e| format!("line {line}: {e}"))?;
        if parts.is_empty() {
            return Err(format!(
                "line {line}: `{}:` has an empty pattern",
                kind.name()
            ));
        }
        let defines = parts.iter().any(|p| matches!(p, Part::Define(..)));
        if kind == Kind::Not && defines {
            return Err(format!(
                "line {line}: a `not:` pattern cannot bind a variable"
            ));
        }
        self.directives.push(Directive {
            line,
            kind,
            text: pattern.to_string(),
            parts,
        });
        Ok(())
    }

    /// Whether the file has no directives.
    pub fn is_empty(&self) -> bool {
        self.directives.is_empty()
    }

    /// Matches the directives against `text`; the error names the failing directive's line,
    /// the regular expression it searched for and the lines it scanned.
    pub fn check(&self, text: &str) -> Result<(), String> {
        Matcher::new(text).run(&self.directives)
    }
}

/// The pieces of a pattern.
fn parse_pattern(pattern: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut defined: Vec<String> = Vec::new();
    let mut chars = pattern.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            literal.push(c);
            continue;
        }
        let part = match chars.peek().map(|&(_, c)| c) {
            Some('$') => {
                chars.next();
                literal.push('$');
                continue;
            }
            Some('(') => {
                let body_start = i + 2;
                let close = matching_paren(&pattern[body_start..])
                    .ok_or_else(|| format!("`$(` at column {} is not closed", i + 1))?;
                let body = &pattern[body_start..body_start + close];
                while chars.peek().is_some_and(|&(j, _)| j <= body_start + close) {
                    chars.next();
                }
                match body.split_once('=') {
                    Some((name, re)) => {
                        check_regex(re)?;
                        if name.is_empty() {
                            Part::Regex(re.to_string())
                        } else {
                            check_name(name)?;
                            if defined.iter().any(|d| d == name) {
                                return Err(format!("`{name}` is bound twice in one pattern"));
                            }
                            defined.push(name.to_string());
                            Part::Define(name.to_string(), re.to_string())
                        }
                    }
                    None => {
                        check_name(body)?;
                        Part::Use(body.to_string())
                    }
                }
            }
            _ => {
                let rest = &pattern[i + 1..];
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let name = &rest[..len];
                check_name(name).map_err(|_| {
                    format!("`$` at column {} names no variable (`$$` is a `$`)", i + 1)
                })?;
                for _ in 0..len {
                    chars.next();
                }
                Part::Use(name.to_string())
            }
        };
        let part = match part {
            Part::Use(name) if defined.contains(&name) => Part::Same(name),
            part => part,
        };
        if !literal.is_empty() {
            parts.push(Part::Literal(std::mem::take(&mut literal)));
        }
        parts.push(part);
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(parts)
}

/// The length of `s` up to the `)` that closes an already opened parenthesis.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!("`{name}` is not a variable name"))
    }
}

fn check_regex(re: &str) -> Result<(), String> {
    Regex::new(re)
        .map(|_| ())
        .map_err(|e| format!("bad regular expression `{re}`: {e}"))
}

/// `text` as a regular expression: literal, with runs of spaces matching runs of blanks.
fn literal_regex(text: &str) -> String {
    let mut out = String::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 && !out.ends_with("[ \\t]+") {
            out.push_str("[ \\t]+");
        }
        out.push_str(&regex::escape(word));
    }
    out
}

/// The prefix of the capture groups of `Part::Same` (`__same<part>_<name>`).
const SAME: &str = "__same";

/// Whether every `Part::Same` group of a match matched the same text as its binding.
fn same_texts(re: &Regex, caps: &regex::Captures<'_>) -> bool {
    re.capture_names().flatten().all(|group| {
        let Some(rest) = group.strip_prefix(SAME) else {
            return true;
        };
        let name = rest.split_once('_').map_or(rest, |(_, name)| name);
        caps.name(group).map(|m| m.as_str()) == caps.name(name).map(|m| m.as_str())
    })
}

/// The offset of the character after the one at `at` in `text` (past the end at its end).
fn next_char(text: &str, at: usize) -> usize {
    at + text[at..].chars().next().map_or(1, char::len_utf8)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where a positive match is: its line (0-based) and byte range in the whole text.
#[derive(Clone, Copy, Debug)]
struct Match {
    line: usize,
    start: usize,
    end: usize,
}

/// The state of a run: the text's lines, the bound variables, where the last match ended.
struct Matcher<'t> {
    text: &'t str,
    /// Byte offset where each line starts (and one past the end).
    starts: Vec<usize>,
    vars: HashMap<String, String>,
    last: Option<Match>,
}

impl<'t> Matcher<'t> {
    fn new(text: &'t str) -> Matcher<'t> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if starts.last() != Some(&text.len()) {
            starts.push(text.len());
        }
        Matcher {
            text,
            starts,
            vars: HashMap::new(),
            last: None,
        }
    }

    fn lines(&self) -> usize {
        self.starts.len() - 1
    }

    /// Line `i` without its newline, and its start offset.
    fn line(&self, i: usize) -> (&'t str, usize) {
        let (start, end) = (self.starts[i], self.starts[i + 1]);
        (self.text[start..end].trim_end_matches('\n'), start)
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Where searching resumes: after the last match (the start of the text at first).
    fn position(&self) -> usize {
        self.last.map_or(0, |m| m.end)
    }

    fn run(mut self, directives: &[Directive]) -> Result<(), String> {
        let mut nots: Vec<&Directive> = Vec::new();
        let mut i = 0;
        while i < directives.len() {
            let d = &directives[i];
            if d.kind == Kind::Not {
                nots.push(d);
                i += 1;
                continue;
            }
            let from = self.position();
            let group = if d.kind == Kind::Unordered {
                directives[i..]
                    .iter()
                    .take_while(|d| d.kind == Kind::Unordered)
                    .count()
            } else {
                1
            };
            let matches = if d.kind == Kind::Unordered {
                self.unordered(&directives[i..i + group])?
            } else {
                vec![self.positive(d)?]
            };
            let until = matches.iter().map(|m| m.start).min().unwrap_or(from);
            self.forbid(&nots, from, until)?;
            nots.clear();
            self.last = matches.iter().copied().max_by_key(|m| m.end);
            i += group;
        }
        self.forbid(&nots, self.position(), self.text.len())
    }

    /// The regular expression of `d` with the current variables, and its capture names.
    fn regex(&self, d: &Directive) -> Result<Regex, String> {
        let mut re = String::new();
        let last = d.parts.len() - 1;
        for (i, part) in d.parts.iter().enumerate() {
            let text = match part {
                Part::Literal(s) => s.clone(),
                Part::Use(name) => self.vars.get(name).cloned().ok_or_else(|| {
                    format!(
                        "line {}: `{}: {}` uses `${name}`, which no earlier directive binds",
                        d.line,
                        d.kind.name(),
                        d.text
                    )
                })?,
                Part::Regex(r) => {
                    re.push_str(&format!("(?:{r})"));
                    continue;
                }
                Part::Define(name, r) => {
                    re.push_str(&format!("(?P<{name}>{r})"));
                    continue;
                }
                Part::Same(name) => {
                    let r = d.parts.iter().find_map(|p| match p {
                        Part::Define(n, r) if n == name => Some(r),
                        _ => None,
                    });
                    re.push_str(&format!("(?P<{SAME}{i}_{name}>{})", r.map_or("", |r| r)));
                    continue;
                }
            };
            let body = literal_regex(&text);
            if i == 0 && text.starts_with(is_word) {
                re.push_str("\\b");
            }
            re.push_str(&body);
            if i == last && text.ends_with(is_word) {
                re.push_str("\\b");
            }
        }
        Regex::new(&re).map_err(|e| format!("line {}: {e}", d.line))
    }

    /// The first match of `re` in lines `lines`, starting at byte `from` or later.
    fn find(
        &self,
        re: &Regex,
        lines: std::ops::Range<usize>,
        from: usize,
    ) -> Option<(Match, regex::Captures<'t>)> {
        for l in lines {
            let (line, start) = self.line(l);
            let mut at = from.saturating_sub(start);
            while at <= line.len()
                && let Some(caps) = re.captures_at(line, at)
            {
                let m = caps.get(0)?;
                if !same_texts(re, &caps) {
                    at = next_char(line, m.start());
                    continue;
                }
                let found = Match {
                    line: l,
                    start: start + m.start(),
                    end: start + m.end(),
                };
                return Some((found, caps));
            }
        }
        None
    }

    /// Matches a `check`, `nextln` or `sameln` directive and binds its variables.
    fn positive(&mut self, d: &Directive) -> Result<Match, String> {
        let re = self.regex(d)?;
        let from = self.position();
        let here = self.line_of(from);
        let lines = match (d.kind, self.last) {
            (Kind::NextLine, Some(m)) => m.line + 1..(m.line + 2).min(self.lines()),
            (Kind::SameLine, Some(m)) => m.line..m.line + 1,
            (Kind::NextLine | Kind::SameLine, None) => {
                return Err(format!(
                    "line {}: `{}:` needs an earlier match",
                    d.line,
                    d.kind.name()
                ));
            }
            _ => here..self.lines(),
        };
        match self.find(&re, lines.clone(), from) {
            Some((m, caps)) => {
                self.bind(&re, &caps);
                Ok(m)
            }
            None => Err(self.failure(d, &re, lines, "does not match")),
        }
    }

    fn bind(&mut self, re: &Regex, caps: &regex::Captures<'_>) {
        for name in re
            .capture_names()
            .flatten()
            .filter(|n| !n.starts_with(SAME))
        {
            if let Some(v) = caps.name(name) {
                self.vars.insert(name.to_string(), v.as_str().to_string());
            }
        }
    }

    /// Matches a run of `unordered` directives, each at its first place after the last match
    /// that overlaps none of the others'.
    fn unordered(&mut self, group: &[Directive]) -> Result<Vec<Match>, String> {
        let from = self.position();
        let lines = self.line_of(from)..self.lines();
        let mut found: Vec<Match> = Vec::new();
        for d in group {
            let re = self.regex(d)?;
            let mut at = from;
            let hit = loop {
                let Some((m, caps)) = self.find(&re, self.line_of(at)..self.lines(), at) else {
                    break None;
                };
                match found
                    .iter()
                    .find(|f| f.start < m.end.max(m.start + 1) && m.start < f.end)
                {
                    Some(f) => at = f.end.max(next_char(self.text, m.start)),
                    None => break Some((m, caps)),
                }
            };
            let Some((m, caps)) = hit else {
                return Err(self.failure(
                    d,
                    &re,
                    lines,
                    "has no match apart from the other `unordered:` directives'",
                ));
            };
            self.bind(&re, &caps);
            found.push(m);
        }
        Ok(found)
    }

    /// Fails if a `not` directive matches between bytes `from` and `until`.
    fn forbid(&self, nots: &[&Directive], from: usize, until: usize) -> Result<(), String> {
        let lines = self.line_of(from)..(self.line_of(until) + 1).min(self.lines());
        for d in nots {
            let re = self.regex(d)?;
            if let Some((m, _)) = self.find(&re, lines.clone(), from)
                && m.end <= until
            {
                let (line, _) = self.line(m.line);
                return Err(format!(
                    "line {}: `not: {}` (regex `{}`) matches output line {}: {}\n{}",
                    d.line,
                    d.text,
                    re.as_str(),
                    m.line + 1,
                    line,
                    self.region(lines.clone())
                ));
            }
        }
        Ok(())
    }

    fn failure(
        &self,
        d: &Directive,
        re: &Regex,
        lines: std::ops::Range<usize>,
        what: &str,
    ) -> String {
        format!(
            "line {}: `{}: {}` (regex `{}`) {what} in output lines {}-{}\n{}",
            d.line,
            d.kind.name(),
            d.text,
            re.as_str(),
            lines.start + 1,
            lines.end,
            self.region(lines.clone())
        )
    }

    /// The lines scanned, numbered (at most 40 of them).
    fn region(&self, lines: std::ops::Range<usize>) -> String {
        const SHOWN: usize = 40;
        let mut out = String::from("scanned:\n");
        for l in lines.clone().take(SHOWN) {
            out.push_str(&format!("{:>5} | {}\n", l + 1, self.line(l).0));
        }
        if lines.len() > SHOWN {
            out.push_str(&format!(
                "      ... and {} more lines\n",
                lines.len() - SHOWN
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests;
