//! The comments of a file, handed to the formatter in source order.
//!
//! The parser drops comments; the lexer keeps their byte ranges ([`Lexed::comments`]). The
//! formatter prints the AST in source order and, before printing a node (or a line break
//! between two nodes), takes every comment that starts before it: so every comment is printed
//! exactly once, in its original order, next to the code it was next to. A comment that
//! follows code on its line (a *trailing* comment) stays at the end of a line
//! ([`Doc::Suffix`]); any other comment stays on a line of its own ([`Doc::OwnLine`]), after a
//! blank line if it had one. Doc comments (`-- |`) and test blocks (`-- ==`) are ordinary
//! comments here: they are written back verbatim (without trailing whitespace), so the parser
//! attaches the same doc comments and `ogham test` reads the same blocks.
//!
//! [`Lexed::comments`]: crate::syntax::lexer::Lexed::comments

use super::doc::Doc;
use std::cell::Cell;

struct Comment {
    start: usize,
    text: String,
    trailing: bool,
    blank_before: bool,
}

/// The comments not printed yet.
pub struct Comments<'a> {
    text: &'a str,
    list: Vec<Comment>,
    next: Cell<usize>,
}

impl<'a> Comments<'a> {
    /// The comments at `ranges` (byte ranges in `text`, in order).
    pub fn new(text: &'a str, ranges: &[(usize, usize)]) -> Comments<'a> {
        let list = ranges
            .iter()
            .map(|&(start, end)| {
                let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
                Comment {
                    start,
                    text: text[start..end].trim_end().to_string(),
                    trailing: !text[line_start..start].trim().is_empty(),
                    blank_before: blank_before(text, start),
                }
            })
            .collect();
        Comments {
            text,
            list,
            next: Cell::new(0),
        }
    }

    /// Every comment not printed yet that starts before `pos`.
    pub fn before(&self, pos: usize) -> Doc {
        self.take(pos, false)
    }

    /// The trailing comments not printed yet that start before `pos`, up to the first comment
    /// on a line of its own: those belong at the end of the line before `pos`.
    pub fn trailing_before(&self, pos: usize) -> Doc {
        self.take(pos, true)
    }

    /// Whether a comment on a line of its own, not printed yet, starts before `pos`.
    pub fn own_line_before(&self, pos: usize) -> bool {
        self.list[self.next.get()..]
            .iter()
            .take_while(|c| c.start < pos)
            .any(|c| !c.trailing)
    }

    /// Whether a comment not printed yet starts before `pos`.
    pub fn any_before(&self, pos: usize) -> bool {
        self.list
            .get(self.next.get())
            .is_some_and(|c| c.start < pos)
    }

    fn take(&self, pos: usize, only_trailing: bool) -> Doc {
        let mut docs = Vec::new();
        let mut i = self.next.get();
        while let Some(c) = self.list.get(i).filter(|c| c.start < pos) {
            if only_trailing && !c.trailing {
                break;
            }
            // A second trailing comment in a row (after `then`, say) gets a line of its own:
            // two on one line would read as one.
            let after_trailing = matches!(docs.last(), Some(Doc::Suffix(_)));
            docs.push(if c.trailing && !after_trailing {
                Doc::Suffix(c.text.clone())
            } else {
                Doc::OwnLine(c.text.clone(), c.blank_before)
            });
            i += 1;
        }
        self.next.set(i);
        Doc::concat(docs)
    }

    /// A line break before the node at `pos`: the trailing comments before it end the current
    /// line, then `line`, then the other comments before it, then a blank line if the source
    /// had one right before the node.
    pub fn separator(&self, pos: usize, line: Doc) -> Doc {
        let mut parts = vec![self.trailing_before(pos), line, self.before(pos)];
        if blank_before(self.text, pos) {
            parts.push(Doc::Blank);
        }
        Doc::concat(parts)
    }
}

/// Whether the whitespace right before `pos` in `text` holds an empty line.
pub fn blank_before(text: &str, pos: usize) -> bool {
    let before = &text[..pos];
    let code = before.trim_end().len();
    code > 0 && before[code..].matches('\n').count() >= 2
}

/// The text of every comment in `ranges`, as the formatter writes it (for checks).
pub fn texts(text: &str, ranges: &[(usize, usize)]) -> Vec<String> {
    ranges
        .iter()
        .map(|&(s, e)| text[s..e].trim_end().to_string())
        .collect()
}
