//! The lexer of the IR text form: splits the text into words, numbers, strings, comments and
//! punctuation, each with its 1-based line and column, ending with one [`Tok::End`].
//!
//! Invariants: never panics; a character it cannot place is a [`ParseError`] at its position.
//! Numbers keep their sign and type suffix as text (`-1i64`); [`number`] reads them into
//! constants once the parser knows they are one.

use super::ParseError;
use crate::Const;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// An identifier, keyword or variable (`[A-Za-z_][A-Za-z0-9_']*`).
    Word(String),
    /// A number with its suffix, sign included (`-1i64`, `0.5f32`).
    Number(String),
    Str(String),
    /// A comment: the text after `--` and one space, to the end of the line.
    Comment(String),
    /// Punctuation and operators.
    Punct(&'static str),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) | Tok::Number(w) => write!(f, "`{w}`"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::Comment(_) => f.write_str("a comment"),
            Tok::Punct(p) => write!(f, "`{p}`"),
            Tok::End => f.write_str("the end of the text"),
        }
    }
}

pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
    pub(super) col: usize,
}

/// Operators and punctuation, longest first.
const PUNCT: [&str; 32] = [
    "**", "//", "%%", "==", "!=", "<=", ">=", "<<", ">>", "->", "(", ")", "[", "]", "{", "}", ",",
    ":", "=", "<", ">", "|", "^", "&", "+", "-", "*", "/", "%", "!", "\\", "@",
];

/// The punctuation `.` (in `f32.sqrt`) is separate: it is not an operator.
pub(super) const DOT: &str = ".";

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

pub(super) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let err = |line, col, message: String| ParseError { line, col, message };
    while i < chars.len() {
        let c = chars[i];
        let (start_line, start_col) = (line, col);
        let start = i;
        let tok = if c == '\n' {
            line += 1;
            col = 1;
            i += 1;
            continue;
        } else if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            let comment: String = chars[start + 2..i].iter().collect();
            let comment = comment.strip_prefix(' ').unwrap_or(&comment).to_string();
            Tok::Comment(comment)
        } else if is_word_start(c) {
            while i < chars.len() && is_word_char(chars[i]) {
                i += 1;
            }
            Tok::Word(chars[start..i].iter().collect())
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i += 1;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign =
                    (d == '+' || d == '-') && matches!(chars[i - 1], 'e' | 'E') && {
                        // Only after digits: `1e-7`, not a suffix ending in `e`.
                        chars[start..i - 1].iter().all(|x| !x.is_ascii_alphabetic())
                    };
                if d.is_ascii_alphanumeric() || d == '.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Number(chars[start..i].iter().collect())
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(err(start_line, start_col, "unterminated string".into()));
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        let (ch, used) = unescape(&chars[i + 1..]).ok_or_else(|| {
                            err(line, col + (i - start), "invalid escape in a string".into())
                        })?;
                        s.push(ch);
                        i += 1 + used;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            Tok::Str(s)
        } else if c == '.' {
            i += 1;
            Tok::Punct(DOT)
        } else {
            let rest: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) else {
                return Err(err(line, col, format!("unexpected character `{c}`")));
            };
            i += p.len();
            Tok::Punct(p)
        };
        col += i - start;
        tokens.push(Token {
            tok,
            line: start_line,
            col: start_col,
        });
    }
    tokens.push(Token {
        tok: Tok::End,
        line,
        col,
    });
    Ok(tokens)
}

/// The character an escape (after its `\`) denotes, as Rust's `{:?}` writes strings, and the
/// number of characters it used.
fn unescape(rest: &[char]) -> Option<(char, usize)> {
    let simple = match rest.first()? {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        '\\' => '\\',
        '"' => '"',
        '\'' => '\'',
        'u' => {
            if rest.get(1) != Some(&'{') {
                return None;
            }
            let close = rest.iter().position(|&c| c == '}')?;
            let hex: String = rest[2..close].iter().collect();
            let ch = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
            return Some((ch, close + 1));
        }
        _ => return None,
    };
    Some((simple, 1))
}

/// A constant from a number token (`-1i64`, `0.5f32`, `1e-7f64`).
pub(super) fn number(text: &str) -> Option<Const> {
    let split = text
        .char_indices()
        .find(|&(_, c)| matches!(c, 'i' | 'u' | 'f'))
        .map(|(k, _)| k)?;
    let (digits, suffix) = text.split_at(split);
    Some(match suffix {
        "i8" => Const::I8(digits.parse().ok()?),
        "i16" => Const::I16(digits.parse().ok()?),
        "i32" => Const::I32(digits.parse().ok()?),
        "i64" => Const::I64(digits.parse().ok()?),
        "u8" => Const::U8(digits.parse().ok()?),
        "f32" => Const::F32(digits.parse().ok()?),
        "f64" => Const::F64(digits.parse().ok()?),
        _ => return None,
    })
}
