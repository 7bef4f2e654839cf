//! The lexer of textual values: numbers (sign, digits, suffix kept as text until the parser
//! types them), words (`true`, `f32.nan`, `empty`), strings of punctuation.
//!
//! Invariants: every token carries the line and column where it starts; a character no token
//! starts with is a [`TextError`] at its position.

use super::{Pos, TextError, error};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Punct(char),
    /// A number: sign, digits (no underscores), whether it has a fraction or exponent, radix
    /// and suffix.
    Number {
        negative: bool,
        digits: String,
        radix: u32,
        is_float: bool,
        suffix: String,
    },
    /// A word (`true`, `nan`, `empty`, `f32`) or qualified name (`f32.nan`), possibly negated.
    Word {
        negative: bool,
        word: String,
    },
}

struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    pos: Pos,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.col = 1;
        } else {
            self.pos.col += 1;
        }
        Some(c)
    }

    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek().filter(|&c| pred(c)) {
            s.push(c);
            self.bump();
        }
        s
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

pub(super) fn lex(src: &str, start: Pos) -> Result<Vec<(Pos, Tok)>, TextError> {
    let mut cur = Cursor {
        chars: src.chars().peekable(),
        pos: start,
    };
    let mut tokens = Vec::new();
    while let Some(c) = cur.peek() {
        let pos = cur.pos;
        if c.is_whitespace() {
            cur.bump();
            continue;
        }
        if "[](),".contains(c) {
            cur.bump();
            tokens.push((pos, Tok::Punct(c)));
            continue;
        }
        let negative = c == '-';
        if negative {
            cur.bump();
        }
        let tok = match cur.peek() {
            Some(d) if d.is_ascii_digit() => lex_number(&mut cur, negative),
            Some(a) if a.is_ascii_alphabetic() => {
                let mut word = cur.take_while(is_word_char);
                if cur.peek() == Some('.') {
                    cur.bump();
                    word.push('.');
                    word.push_str(&cur.take_while(is_word_char));
                }
                Tok::Word { negative, word }
            }
            Some(other) if !negative => {
                return error(pos, format!("unexpected character `{other}`"));
            }
            _ => return error(pos, "`-` must be followed by a number"),
        };
        if let Some(c) = cur
            .peek()
            .filter(|c| !c.is_whitespace() && !"[](),".contains(*c))
        {
            return error(cur.pos, format!("unexpected character `{c}` after a value"));
        }
        tokens.push((pos, tok));
    }
    Ok(tokens)
}

fn lex_number(cur: &mut Cursor, negative: bool) -> Tok {
    let mut radix = 10;
    let mut digits = cur.take_while(|c| c.is_ascii_digit() || c == '_');
    if digits == "0" && matches!(cur.peek(), Some('x' | 'X' | 'b' | 'B')) {
        radix = if matches!(cur.bump(), Some('x' | 'X')) {
            16
        } else {
            2
        };
        digits = cur.take_while(|c| c.is_digit(radix) || c == '_');
    }
    let mut is_float = false;
    if radix == 10 {
        // A fraction needs a digit after the point; an exponent a digit after `e`/`e-`/`e+`.
        let mut ahead = cur.chars.clone();
        if ahead.next() == Some('.') && ahead.next().is_some_and(|c| c.is_ascii_digit()) {
            cur.bump();
            digits.push('.');
            digits.push_str(&cur.take_while(|c| c.is_ascii_digit() || c == '_'));
            is_float = true;
        }
        let mut ahead = cur.chars.clone();
        if matches!(ahead.next(), Some('e' | 'E')) {
            let mut sign = ahead.next();
            if matches!(sign, Some('+' | '-')) {
                sign = ahead.next();
            }
            if sign.is_some_and(|c| c.is_ascii_digit()) {
                digits.push(cur.bump().unwrap_or('e'));
                if let Some(s) = cur.peek().filter(|c| matches!(c, '+' | '-')) {
                    digits.push(s);
                    cur.bump();
                }
                digits.push_str(&cur.take_while(|c| c.is_ascii_digit()));
                is_float = true;
            }
        }
    }
    let suffix = cur.take_while(is_word_char);
    Tok::Number {
        negative,
        digits: digits.replace('_', ""),
        radix,
        is_float,
        suffix,
    }
}
