//! A small Wadler-style layout algebra and its renderer, for the formatter.
//!
//! A [`Doc`] is text with optional line breaks: a [`Doc::group`] is printed on one line when it
//! fits in the width that is left, else its [`Doc::line`]s become newlines. Besides the usual
//! `nest` (indent by a number of columns) there is `align` (indent to the current column), and
//! two kinds of comments:
//!
//! - [`Doc::OwnLine`]: a comment on a line of its own: it starts a new line if the current one
//!   has text, optionally after a blank line, and ends its line;
//! - [`Doc::Suffix`]: a comment at the end of a line: it is held back and written just before
//!   the next newline, so the code after it on the same line goes before it.
//!
//! Invariants: a group that contains a hard break (a [`Doc::Hard`] line, a comment, a blank
//! line) is never flat (the flag is computed when the group is made); a `--` comment is
//! always followed by a newline before any other text, because suffixes are written only at a
//! newline or at the end and own-line comments end their line; lines never end with spaces
//! (indentation is written lazily, before the first text of a line, and spaces before a
//! newline are dropped).

/// A document to lay out.
#[derive(Clone, Debug)]
pub enum Doc {
    Text(String),
    /// A space when flat, a newline when broken.
    Line,
    /// Always a newline.
    Hard,
    /// An empty line here (at most one in a row; none at the start of the output).
    Blank,
    Concat(Vec<Doc>),
    Nest(usize, Box<Doc>),
    Align(Box<Doc>),
    /// The contents and whether they contain a hard break (then the group always breaks).
    Group(Box<Doc>, bool),
    /// Items separated by spaces, a line broken before an item when it does not fit flat on
    /// the current one (or cannot be flat) or the item before it took more than one line.
    Fill(Vec<Doc>),
    /// A comment on its own line, and whether a blank line comes before it.
    OwnLine(String, bool),
    /// A comment written at the end of the current line.
    Suffix(String),
}

impl Doc {
    pub fn text(s: impl Into<String>) -> Doc {
        Doc::Text(s.into())
    }

    pub fn concat(parts: Vec<Doc>) -> Doc {
        Doc::Concat(parts)
    }

    pub fn nest(indent: usize, d: Doc) -> Doc {
        Doc::Nest(indent, Box::new(d))
    }

    pub fn align(d: Doc) -> Doc {
        Doc::Align(Box::new(d))
    }

    pub fn group(d: Doc) -> Doc {
        let hard = d.has_hard();
        Doc::Group(Box::new(d), hard)
    }

    /// Whether the document contains a hard break outside of nested groups' flags.
    fn has_hard(&self) -> bool {
        match self {
            Doc::Hard | Doc::Blank | Doc::OwnLine(..) | Doc::Suffix(_) => true,
            Doc::Text(_) | Doc::Line => false,
            Doc::Group(_, hard) => *hard,
            Doc::Nest(_, d) | Doc::Align(d) => d.has_hard(),
            Doc::Concat(ds) | Doc::Fill(ds) => ds.iter().any(Doc::has_hard),
        }
    }

    /// Items that fill their lines when every separator (`seps[i]` goes before `items[i + 1]`)
    /// is a plain [`Doc::Line`]; otherwise each item after its separator (there is a comment
    /// between some), with `plain` applied to every separator.
    pub fn fill_or_separated(items: Vec<Doc>, seps: Vec<Doc>, plain: impl Fn(Doc) -> Doc) -> Doc {
        if seps.iter().all(Doc::is_line) {
            return Doc::Fill(items);
        }
        let mut parts = Vec::new();
        for (item, sep) in items
            .into_iter()
            .zip(std::iter::once(Doc::text("")).chain(seps))
        {
            parts.extend([plain(sep), item]);
        }
        Doc::group(Doc::concat(parts))
    }

    /// Whether the document is a plain [`Doc::Line`] (with nothing around it, such as comments).
    pub fn is_line(&self) -> bool {
        match self {
            Doc::Line => true,
            Doc::Concat(ds) => {
                let mut rest = ds.iter().filter(|d| !d.is_empty());
                rest.next().is_some_and(Doc::is_line) && rest.next().is_none()
            }
            _ => false,
        }
    }

    /// Whether the document is empty (prints nothing at all).
    pub fn is_empty(&self) -> bool {
        match self {
            Doc::Text(s) => s.is_empty(),
            Doc::Concat(ds) | Doc::Fill(ds) => ds.iter().all(Doc::is_empty),
            Doc::Nest(_, d) | Doc::Align(d) | Doc::Group(d, _) => d.is_empty(),
            _ => false,
        }
    }
}

/// Lays `doc` out in `width` columns.
pub fn render(doc: &Doc, width: usize) -> String {
    let mut r = Renderer {
        out: String::new(),
        width,
        col: 0,
        pending_indent: None,
        suffixes: Vec::new(),
    };
    r.run(0, Mode::Break, doc);
    r.flush_suffixes();
    let trimmed = r.out.trim_end_matches('\n').len();
    r.out.truncate(trimmed);
    r.out.push('\n');
    r.out
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Flat,
    Break,
}

struct Renderer {
    out: String,
    width: usize,
    col: usize,
    /// The indentation to write before the next text of the current line (a line that has had
    /// no text yet).
    pending_indent: Option<usize>,
    suffixes: Vec<String>,
}

impl Renderer {
    fn run(&mut self, indent: usize, mode: Mode, doc: &Doc) {
        // The work list, in reverse: (indentation, mode, document).
        let mut stack: Vec<(usize, Mode, &Doc)> = vec![(indent, mode, doc)];
        while let Some((indent, mode, d)) = stack.pop() {
            match d {
                Doc::Text(s) => self.write(s),
                Doc::Line if mode == Mode::Flat => self.write(" "),
                Doc::Line | Doc::Hard => self.newline(indent),
                Doc::Blank => self.blank(indent),
                Doc::Concat(ds) => stack.extend(ds.iter().rev().map(|d| (indent, mode, d))),
                Doc::Nest(n, d) => stack.push((indent + n, mode, d)),
                Doc::Align(d) => stack.push((self.col.max(indent), mode, d)),
                Doc::Group(d, hard) => {
                    let flat = mode == Mode::Flat
                        || (!hard && fits(self.width.saturating_sub(self.col), d, &stack));
                    stack.push((indent, if flat { Mode::Flat } else { Mode::Break }, d));
                }
                Doc::OwnLine(text, blank) => {
                    if self.pending_indent.is_none() && !self.out.is_empty() {
                        self.newline(indent);
                    }
                    if *blank {
                        self.blank(indent);
                    }
                    self.write(text);
                    self.newline(indent);
                }
                Doc::Suffix(text) => self.suffixes.push(text.clone()),
                Doc::Fill(items) => self.fill(indent, items),
            }
        }
    }

    /// The items of a [`Doc::Fill`]: each after a space if it fits flat there and the one
    /// before took a single line, else on a new line (so is an item that cannot be flat).
    fn fill(&mut self, indent: usize, items: &[Doc]) {
        let mut multi_line = false;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                let left = self.width.saturating_sub(self.col + 1);
                // An item with a hard break starts a line: whether it would fit after a space
                // must not depend on where the source broke lines (formatting is idempotent).
                if !multi_line && !item.has_hard() && fits(left, item, &[]) {
                    self.write(" ");
                } else {
                    self.newline(indent);
                }
            }
            let lines = self.out.matches('\n').count();
            self.run(indent, Mode::Break, item);
            multi_line = self.out.matches('\n').count() > lines;
        }
    }

    fn write(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(indent) = self.pending_indent.take() {
            self.out.extend(std::iter::repeat_n(' ', indent));
            self.col = indent;
        }
        self.out.push_str(s);
        self.col += s.chars().count();
    }

    fn flush_suffixes(&mut self) {
        for s in std::mem::take(&mut self.suffixes) {
            self.out.push(' ');
            self.out.push_str(&s);
        }
    }

    /// Ends the current line; on a line without text yet (after an own-line comment, say) it
    /// only sets the indentation: empty lines come from [`Doc::Blank`] alone.
    fn newline(&mut self, indent: usize) {
        self.flush_suffixes();
        if self.out.is_empty() {
            return;
        }
        if self.pending_indent.is_some() {
            self.pending_indent = Some(indent);
            return;
        }
        let end = self.out.trim_end_matches(' ').len();
        self.out.truncate(end);
        self.out.push('\n');
        self.pending_indent = Some(indent);
        self.col = indent;
    }

    /// An empty line, unless the output is empty or already ends with one.
    fn blank(&mut self, indent: usize) {
        if self.pending_indent.is_none() {
            self.newline(indent);
        }
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }
}

/// Whether `d` fits flat in `width` columns, followed by the rest of the line (the text of
/// `rest`, in its own modes, up to its first newline).
fn fits(width: usize, d: &Doc, rest: &[(usize, Mode, &Doc)]) -> bool {
    let mut left = width as isize;
    let mut stack: Vec<(Mode, &Doc)> = vec![(Mode::Flat, d)];
    let mut rest = rest.iter().rev();
    loop {
        let Some((mode, d)) = stack.pop().or_else(|| rest.next().map(|&(_, m, d)| (m, d))) else {
            return true;
        };
        match d {
            Doc::Text(s) => left -= s.chars().count() as isize,
            Doc::Line if mode == Mode::Flat => left -= 1,
            Doc::Line | Doc::Hard | Doc::Blank | Doc::OwnLine(..) => return true,
            Doc::Suffix(_) => {}
            Doc::Concat(ds) => stack.extend(ds.iter().rev().map(|d| (mode, d))),
            Doc::Fill(ds) => {
                left -= ds.len().saturating_sub(1) as isize;
                stack.extend(ds.iter().rev().map(|d| (mode, d)));
            }
            Doc::Nest(_, d) | Doc::Align(d) => stack.push((mode, d)),
            Doc::Group(d, hard) => stack.push((if *hard { Mode::Break } else { mode }, d)),
        }
        if left < 0 {
            return false;
        }
    }
}
