//! Type schemes of the array built-ins, written in the notation of the language reference
//! (`(a -> a -> a) -> a -> [n]a -> a`) and read into a [`Scheme`] that the type checker
//! instantiates at every use and from which arity, consumption and freshness are read.
//!
//! The notation: `i64` and `bool` are themselves; any other name is a type variable; `[n]t` is an
//! array of size `n`, where `[]t` is a fresh unknown size at every use (the size of `filter`'s
//! result); `(t, u)` is a tuple and `(t)` grouping; `->` is right-associative. At the top level
//! only, `*t` marks a consumed parameter or a fresh result, and a parameter `(n: i64)` is an
//! `i64` whose value is the size `n` (`iota`'s count).
//!
//! Invariant: the variables are numbered in order of first appearance, with the size `n` and the
//! type variable `a` numbered 0 whether they appear or not; the type checker creates them in
//! that order (`n`, `a`, then the others as it meets them), the order unknown sizes of typed
//! programs have always been numbered in.

use ogham_ir::types::PrimType;

/// A type of a scheme, over the scheme's numbered variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigTy {
    Prim(PrimType),
    /// A type variable (`a`), numbered.
    Var(usize),
    Array(Box<SigTy>, SigSize),
    Tuple(Vec<SigTy>),
    Fun(Box<SigTy>, Box<SigTy>),
}

/// The size of an array of a scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigSize {
    /// A size variable (`[n]`), numbered.
    Var(usize),
    /// `[]`: a fresh unknown size at each occurrence.
    Unknown,
}

/// One parameter of a scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub ty: SigTy,
    /// `*t`: the argument is consumed.
    pub consumed: bool,
    /// `(n: i64)`: the argument's value is size variable `n`.
    pub size: Option<usize>,
}

/// A built-in's type: `p1 -> ... -> pk -> result`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheme {
    pub params: Vec<Param>,
    pub result: SigTy,
    /// `*result`: the result is a new value, aliasing no argument.
    pub fresh: bool,
    /// How many type variables and size variables the scheme has (each at least 1: `a`, `n`).
    pub type_vars: usize,
    pub sizes: usize,
}

impl Scheme {
    /// Reads a scheme; `Err` says what is wrong with the text.
    pub fn parse(text: &str) -> Result<Scheme, String> {
        let mut p = Parser {
            toks: tokens(text)?,
            pos: 0,
            type_vars: vec!["a"],
            sizes: vec!["n"],
        };
        let mut items = vec![p.top_item()?];
        while p.eat("->") {
            items.push(p.top_item()?);
        }
        if let Some(t) = p.toks.get(p.pos) {
            return Err(format!("unexpected `{t}`"));
        }
        let last = items.pop().ok_or("an empty scheme")?;
        if last.size.is_some() {
            return Err("a result cannot name a size".to_string());
        }
        Ok(Scheme {
            params: items,
            result: last.ty,
            fresh: last.consumed,
            type_vars: p.type_vars.len(),
            sizes: p.sizes.len(),
        })
    }

    /// Whether the result is a new value: marked `*`, or a primitive (which aliases nothing).
    pub fn result_is_fresh(&self) -> bool {
        self.fresh || matches!(self.result, SigTy::Prim(_))
    }
}

fn tokens(text: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while let Some(c) = rest.chars().next() {
        let len = if rest.starts_with("->") {
            2
        } else if "()[]*,:".contains(c) {
            1
        } else if c.is_ascii_alphanumeric() {
            rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(rest.len())
        } else {
            return Err(format!("unexpected character `{c}`"));
        };
        out.push(&rest[..len]);
        rest = rest[len..].trim_start();
    }
    Ok(out)
}

struct Parser<'t> {
    toks: Vec<&'t str>,
    pos: usize,
    /// The names of the variables, in order of first appearance.
    type_vars: Vec<&'t str>,
    sizes: Vec<&'t str>,
}

impl<'t> Parser<'t> {
    fn peek(&self, k: usize) -> Option<&'t str> {
        self.toks.get(self.pos + k).copied()
    }

    fn eat(&mut self, tok: &str) -> bool {
        let hit = self.peek(0) == Some(tok);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, tok: &str) -> Result<(), String> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(format!("expected `{tok}`"))
        }
    }

    fn name(&mut self) -> Result<&'t str, String> {
        match self.peek(0) {
            Some(t) if t.starts_with(|c: char| c.is_ascii_alphanumeric()) => {
                self.pos += 1;
                Ok(t)
            }
            _ => Err("expected a name".to_string()),
        }
    }

    /// A parameter or the result: `(n: i64)`, `*t` or `t` (no top-level arrow).
    fn top_item(&mut self) -> Result<Param, String> {
        if self.peek(0) == Some("(") && self.peek(2) == Some(":") {
            self.pos += 1;
            let n = self.name()?;
            self.expect(":")?;
            self.expect("i64")?;
            self.expect(")")?;
            return Ok(Param {
                ty: SigTy::Prim(PrimType::I64),
                consumed: false,
                size: Some(number(&mut self.sizes, n)),
            });
        }
        let consumed = self.eat("*");
        Ok(Param {
            ty: self.atom()?,
            consumed,
            size: None,
        })
    }

    fn fun(&mut self) -> Result<SigTy, String> {
        let t = self.atom()?;
        if self.eat("->") {
            return Ok(SigTy::Fun(Box::new(t), Box::new(self.fun()?)));
        }
        Ok(t)
    }

    fn atom(&mut self) -> Result<SigTy, String> {
        if self.eat("[") {
            let size = if self.eat("]") {
                SigSize::Unknown
            } else {
                let n = self.name()?;
                self.expect("]")?;
                SigSize::Var(number(&mut self.sizes, n))
            };
            return Ok(SigTy::Array(Box::new(self.atom()?), size));
        }
        if self.eat("(") {
            let mut parts = vec![self.fun()?];
            while self.eat(",") {
                parts.push(self.fun()?);
            }
            self.expect(")")?;
            return Ok(match parts.len() {
                1 => parts.remove(0),
                _ => SigTy::Tuple(parts),
            });
        }
        Ok(match self.name()? {
            "i64" => SigTy::Prim(PrimType::I64),
            "bool" => SigTy::Prim(PrimType::Bool),
            v => SigTy::Var(number(&mut self.type_vars, v)),
        })
    }
}

/// The number of variable `name`, numbering it if it is new.
fn number<'t>(names: &mut Vec<&'t str>, name: &'t str) -> usize {
    names.iter().position(|n| *n == name).unwrap_or_else(|| {
        names.push(name);
        names.len() - 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(i: usize) -> SigTy {
        SigTy::Var(i)
    }

    fn arr(t: SigTy, s: SigSize) -> SigTy {
        SigTy::Array(Box::new(t), s)
    }

    #[test]
    fn reads_sizes_consumption_and_functions() {
        let s = Scheme::parse("*[k]a -> (a -> a -> a) -> (m: i64) -> [n]i64 -> *[k]a").unwrap();
        assert_eq!(s.params.len(), 4);
        assert!(s.params[0].consumed && !s.params[1].consumed);
        assert_eq!(s.params[0].ty, arr(var(0), SigSize::Var(1)));
        let op = SigTy::Fun(
            Box::new(var(0)),
            Box::new(SigTy::Fun(Box::new(var(0)), Box::new(var(0)))),
        );
        assert_eq!(s.params[1].ty, op);
        assert_eq!(s.params[2].size, Some(2));
        assert_eq!(
            s.params[3].ty,
            arr(SigTy::Prim(PrimType::I64), SigSize::Var(0))
        );
        assert!(s.fresh && s.result_is_fresh());
        assert_eq!((s.type_vars, s.sizes), (1, 3));
    }

    #[test]
    fn numbers_new_variables_after_n_and_a() {
        let s = Scheme::parse("[n](b, c) -> ([]b, [n]c)").unwrap();
        let pair = SigTy::Tuple(vec![var(1), var(2)]);
        assert_eq!(s.params[0].ty, arr(pair, SigSize::Var(0)));
        let out = SigTy::Tuple(vec![
            arr(var(1), SigSize::Unknown),
            arr(var(2), SigSize::Var(0)),
        ]);
        assert_eq!(s.result, out);
        assert_eq!((s.type_vars, s.sizes), (3, 1));
        assert!(!s.result_is_fresh());
        assert!(Scheme::parse("[n]a -> i64").unwrap().result_is_fresh());
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in ["[n]a ->", "(a, b", "a -> (n: i64)", "a ? b", "[n a", "a b"] {
            assert!(Scheme::parse(bad).is_err(), "{bad}");
        }
    }
}
