//! Parser for the text form of the core and kernel IR: reads back exactly what
//! [`super::print`] writes (`ogham dev --print core|kir`, `--dump-after`, the IR snapshots and
//! the filetests of `tests/filetests/`), so that print -> parse -> print is the identity.
//!
//! # What it accepts
//!
//! - A program: `threshold NAME = DEFAULT -- DOC` lines, then `entry` functions. `--` starts a
//!   comment to the end of the line anywhere else (`-- kernel ...` lines of `--print kir`).
//! - A function: `entry NAME [SIZES] (PARAMS) : RESULTS =`, then statements and `in RESULTS`
//!   (a unique parameter is `*x_1: t`; `[SIZES]`, the size parameters, is absent when there
//!   are none).
//! - Variables are written `name_id`: the arena index after the last `_` (`x_12`,
//!   `suff_outer_par_0_381`). Every mention of an index must use the same name. A variable's
//!   type is the one its binder gives (`x_1: [n_0]f32`); variables bound without a type (size
//!   parameters, loop and segment-space indices) are `i64`.
//! - Constants carry their type: `1i64`, `-0.5f32`, `1e-7f32`, `f32.nan`, `-f64.inf`, `true`.
//! - Inside a kernel's body, a statement may be preceded by its plan (`@unswitch(c_3)`,
//!   `@skip_idle`, `@jam`, `@interleave`: [`crate::kir::Plan`]).
//! - Statements and expressions as `print` writes them; see `docs/compiler.md`, "IR text format
//!   and filetests", for the grammar.
//! - One form at a time ([`crate::Form`]): `parse_program::<Core>` reads core IR and rejects a
//!   kernel or a threshold (at its keyword), as core IR's types cannot hold one;
//!   `parse_program::<kir::HostOp>` reads kernel IR, where they may be host statements but not
//!   inside a kernel or a lambda (core IR again).
//!
//! # Invariants
//!
//! - Never panics: every error is a [`ParseError`] located at a line and column.
//! - Parsing checks what printing derives, so text that would print differently is rejected
//!   rather than silently changed: the size parameter list, the header's result types, the
//!   SOAC keyword (`map`, `redomap`, `scanomap`, `screma`) against its operators, a kernel's
//!   keyword against its operators, a conversion's source type.
//! - It does not check the IR's invariants (scoping, typing, uniqueness): run
//!   [`super::verify::verify`] on the result.
//! - What the text does not show is rebuilt with defaults: source locations are empty spans,
//!   the source-level signature is derived from the IR types, the arena slots no variable uses
//!   are unnamed `i64` variables, and `unchecked` (`#[unsafe]` ranges) is empty.

use crate::kir::{Plan, Plans, Threshold, ThresholdId};
use crate::print::size_params;
use crate::source::Span;
use crate::types::{self, PrimType, Size};
use crate::{
    Body, Const, Form, Function, Param, Program, Signature, Stmt, SubExp, Type, VarId, VarInfo,
};
use lex::{DOT, Tok, Token, lex, number};
use std::fmt;

mod exp;
mod lex;

/// A parse error at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses a whole program (thresholds, then functions) in the form `H`: core IR
/// (`parse_program::<Core>`) rejects kernels and thresholds in statements.
pub fn parse_program<H: Form>(text: &str) -> Result<Program<H>, ParseError> {
    let tokens = lex(text)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        vars: Vec::new(),
        plans: None,
    };
    let mut program = Program::default();
    while p.peek_word("threshold") {
        program.thresholds.push(p.threshold()?);
    }
    while !p.at_end() {
        program.functions.push(p.function()?);
    }
    Ok(program)
}

// ---------------------------------------------------------------------------------------------
// Parser (the lexer is in `lex`, the expression forms in `exp`)

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// The arena of the function being parsed: name and type of each index seen so far.
    vars: Vec<Option<Slot>>,
    /// The plans (`@plan` lines) of the kernel whose body is being parsed; `None` outside one.
    plans: Option<Plans>,
}

struct Slot {
    name: String,
    ty: Option<Type>,
}

type Res<T> = Result<T, ParseError>;

impl Parser {
    // --- tokens -------------------------------------------------------------------------------

    /// The index of the next token that is not a comment.
    fn next_index(&self) -> usize {
        let mut k = self.pos;
        while matches!(self.tokens[k].tok, Tok::Comment(_)) {
            k += 1;
        }
        k
    }

    fn peek(&self) -> &Tok {
        &self.tokens[self.next_index()].tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        let mut k = self.next_index();
        for _ in 0..ahead {
            k += 1;
            while matches!(
                self.tokens[k.min(self.tokens.len() - 1)].tok,
                Tok::Comment(_)
            ) {
                k += 1;
            }
        }
        &self.tokens[k.min(self.tokens.len() - 1)].tok
    }

    fn at_end(&self) -> bool {
        *self.peek() == Tok::End
    }

    fn bump(&mut self) -> Tok {
        let k = self.next_index();
        self.pos = (k + 1).min(self.tokens.len() - 1);
        self.tokens[k].tok.clone()
    }

    fn error<T>(&self, message: impl Into<String>) -> Res<T> {
        let t = &self.tokens[self.next_index()];
        Err(ParseError {
            line: t.line,
            col: t.col,
            message: message.into(),
        })
    }

    fn expected<T>(&self, what: &str) -> Res<T> {
        self.error(format!("expected {what}, found {}", self.peek()))
    }

    fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn peek_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Word(x) if x == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let found = self.peek_punct(p);
        if found {
            self.bump();
        }
        found
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let found = self.peek_word(w);
        if found {
            self.bump();
        }
        found
    }

    fn punct(&mut self, p: &str) -> Res<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            self.expected(&format!("`{p}`"))
        }
    }

    fn keyword(&mut self, w: &str) -> Res<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            self.expected(&format!("`{w}`"))
        }
    }

    fn word(&mut self, what: &str) -> Res<String> {
        match self.peek() {
            Tok::Word(w) => {
                let w = w.clone();
                self.bump();
                Ok(w)
            }
            _ => self.expected(what),
        }
    }

    /// `open item (, item)* close`, possibly empty.
    fn list<T>(
        &mut self,
        open: &str,
        close: &str,
        mut item: impl FnMut(&mut Parser) -> Res<T>,
    ) -> Res<Vec<T>> {
        self.punct(open)?;
        let mut items = Vec::new();
        if self.eat_punct(close) {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat_punct(close) {
                return Ok(items);
            }
            self.punct(",")?;
        }
    }

    /// One item, or a parenthesised list of zero or several (as `print`'s `tuple` writes them).
    fn tuple<T>(&mut self, item: impl FnMut(&mut Parser) -> Res<T>) -> Res<Vec<T>> {
        if self.peek_punct("(") {
            self.list("(", ")", item)
        } else {
            let mut item = item;
            Ok(vec![item(self)?])
        }
    }

    // --- variables, constants, types ----------------------------------------------------------

    /// A variable mention `name_id`, checked against the other mentions of `id`.
    fn var(&mut self) -> Res<VarId> {
        let Tok::Word(w) = self.peek().clone() else {
            return self.expected("a variable (`name_id`)");
        };
        let parsed = w
            .rsplit_once('_')
            .and_then(|(name, id)| Some((name, id.parse::<u32>().ok()?)))
            .filter(|(_, id)| (*id as usize) < (1 << 24));
        let Some((name, id)) = parsed else {
            return self.expected("a variable (`name_id`)");
        };
        let name = if name == "v" { "" } else { name };
        let k = id as usize;
        if self.vars.len() <= k {
            self.vars.resize_with(k + 1, || None);
        }
        match &self.vars[k] {
            Some(slot) if slot.name != name => {
                let earlier = if slot.name.is_empty() {
                    "v"
                } else {
                    &slot.name
                };
                return self.error(format!(
                    "variable {id} is `{w}` here but `{earlier}_{id}` elsewhere"
                ));
            }
            Some(_) => {}
            None => {
                self.vars[k] = Some(Slot {
                    name: name.to_string(),
                    ty: None,
                })
            }
        }
        self.bump();
        Ok(VarId(id))
    }

    /// `x_1: t`: a variable and its type.
    fn binder(&mut self) -> Res<VarId> {
        let v = self.var()?;
        self.punct(":")?;
        let ty = self.ty()?;
        self.set_type(v, ty)?;
        Ok(v)
    }

    fn set_type(&mut self, v: VarId, ty: Type) -> Res<()> {
        if let Some(Some(slot)) = self.vars.get_mut(v.index()) {
            match &slot.ty {
                Some(old) if *old != ty => {
                    return self
                        .error(format!("variable {} is bound again with another type", v.0));
                }
                _ => slot.ty = Some(ty),
            }
        }
        Ok(())
    }

    /// A prim type name.
    fn prim(&mut self) -> Res<PrimType> {
        match self.peek() {
            Tok::Word(w) => match PrimType::from_name(w) {
                Some(p) => {
                    self.bump();
                    Ok(p)
                }
                None => self.expected("a scalar type"),
            },
            _ => self.expected("a scalar type"),
        }
    }

    /// `[d]...[d]prim`.
    fn ty(&mut self) -> Res<Type> {
        let mut shape = Vec::new();
        while self.eat_punct("[") {
            shape.push(self.subexp()?);
            self.punct("]")?;
        }
        Ok(Type::with_shape(self.prim()?, shape))
    }

    fn types(&mut self) -> Res<Vec<Type>> {
        self.tuple(Parser::ty)
    }

    /// A constant or a variable.
    fn subexp(&mut self) -> Res<SubExp> {
        match self.peek().clone() {
            Tok::Number(text) => match number(&text) {
                Some(c) => {
                    self.bump();
                    Ok(SubExp::Const(c))
                }
                None => self.error(format!(
                    "`{text}` is not a constant of a scalar type (write a suffix: `1i64`, `0.5f32`)"
                )),
            },
            Tok::Word(w) if w == "true" || w == "false" => {
                self.bump();
                Ok(SubExp::Const(Const::Bool(w == "true")))
            }
            Tok::Word(w) if PrimType::from_name(&w).is_some() => self.special_float(false),
            Tok::Punct("-") => {
                self.bump();
                self.special_float(true)
            }
            Tok::Word(_) => Ok(SubExp::Var(self.var()?)),
            _ => self.expected("a constant or a variable"),
        }
    }

    /// `f32.nan`, `f64.inf` (negated after a `-`).
    fn special_float(&mut self, negative: bool) -> Res<SubExp> {
        let ty = self.prim()?;
        self.punct(DOT)?;
        let member = self.word("`nan` or `inf`")?;
        let x = match member.as_str() {
            "nan" => f64::NAN,
            "inf" if negative => f64::NEG_INFINITY,
            "inf" => f64::INFINITY,
            _ => return self.error(format!("expected `nan` or `inf`, found `{member}`")),
        };
        let c = match ty {
            PrimType::F32 => Const::F32(x as f32),
            PrimType::F64 => Const::F64(x),
            _ => return self.error(format!("`{ty}` has no `{member}`")),
        };
        if negative && member == "nan" {
            return self.error("`-nan` is written `nan`");
        }
        Ok(SubExp::Const(c))
    }

    fn subexps(&mut self, open: &str, close: &str) -> Res<Vec<SubExp>> {
        self.list(open, close, Parser::subexp)
    }

    fn vars_list(&mut self) -> Res<Vec<VarId>> {
        self.list("(", ")", Parser::var)
    }

    // --- program structure --------------------------------------------------------------------

    /// `threshold NAME = DEFAULT -- DOC`.
    fn threshold(&mut self) -> Res<Threshold> {
        self.keyword("threshold")?;
        let id = self.threshold_id()?;
        self.punct("=")?;
        let default = match self.peek().clone() {
            Tok::Number(n) => match n.parse::<i64>() {
                Ok(d) => {
                    self.bump();
                    d
                }
                Err(_) => return self.expected("an integer default"),
            },
            _ => return self.expected("an integer default"),
        };
        // The comment is the documentation: read it directly, not skipped.
        let doc = match &self.tokens[self.pos].tok {
            Tok::Comment(doc) => doc.clone(),
            _ => return self.expected("`-- ` and the threshold's documentation"),
        };
        self.pos += 1;
        Ok(Threshold { id, default, doc })
    }

    fn threshold_id(&mut self) -> Res<ThresholdId> {
        let name = self.word("a threshold name")?;
        match ThresholdId::parse(&name) {
            Some(id) => Ok(id),
            None => self.error(format!(
                "`{name}` is not a threshold name (`suff_outer_par_K`, `suff_intra_par_K`)"
            )),
        }
    }

    fn function<H: Form>(&mut self) -> Res<Function<H>> {
        self.vars.clear();
        self.keyword("entry")?;
        let name = self.word("the entry point's name")?;
        let sizes_at = self.next_index();
        let sizes = if self.peek_punct("[") {
            self.list("[", "]", Parser::var)?
        } else {
            Vec::new()
        };
        let params = self.list("(", ")", |p| {
            let unique = p.eat_punct("*");
            Ok(Param {
                var: p.binder()?,
                unique,
            })
        })?;
        self.punct(":")?;
        let results_at = self.next_index();
        let results = self.types()?;
        self.punct("=")?;
        let body = self.body_lines()?;
        let vars = std::mem::take(&mut self.vars)
            .into_iter()
            .map(|slot| match slot {
                Some(Slot { name, ty }) => VarInfo {
                    name,
                    ty: ty.unwrap_or(Type::Prim(PrimType::I64)),
                },
                None => VarInfo {
                    name: String::new(),
                    ty: Type::Prim(PrimType::I64),
                },
            })
            .collect();
        let mut function = Function {
            name,
            vars,
            params,
            body,
            signature: Signature::default(),
            loc: Span::default(),
        };
        if size_params(&function) != sizes {
            return self.error_at(
                sizes_at,
                "the size parameters must be the variables of the parameters' dimensions that \
                 are not parameters, in order of appearance",
            );
        }
        let actual: Vec<Type> = function
            .body
            .result
            .iter()
            .map(|&se| function.subexp_type(se))
            .collect();
        if actual != results {
            return self.error_at(
                results_at,
                "the result types differ from the types of the body's results",
            );
        }
        function.signature = derived_signature(&function);
        Ok(function)
    }

    fn error_at<T>(&self, index: usize, message: &str) -> Res<T> {
        let t = &self.tokens[index];
        Err(ParseError {
            line: t.line,
            col: t.col,
            message: message.to_string(),
        })
    }

    /// Statements then `in results` (a function's body, or inside braces).
    fn body_lines<H: Form>(&mut self) -> Res<Body<H>> {
        let mut stmts = Vec::new();
        while self.peek_word("let") || self.peek_punct("@") {
            stmts.push(self.stmt()?);
        }
        self.keyword("in")?;
        let result = self.tuple(Parser::subexp)?;
        Ok(Body { stmts, result })
    }

    /// `{ body }`.
    fn block<H: Form>(&mut self) -> Res<Body<H>> {
        self.punct("{")?;
        let body = self.body_lines()?;
        self.punct("}")?;
        Ok(body)
    }

    fn stmt<H: Form>(&mut self) -> Res<Stmt<H>> {
        let at = self.next_index();
        let plan = match self.eat_punct("@") {
            true => Some(self.plan()?),
            false => None,
        };
        self.keyword("let")?;
        let pat = self.tuple(Parser::binder)?;
        if let Some(plan) = plan {
            match (&mut self.plans, pat.first()) {
                (Some(plans), Some(v)) => {
                    plans.insert(*v, plan);
                }
                (None, _) => return self.error_at(at, "a plan outside a kernel's body"),
                (Some(_), None) => {
                    return self.error_at(at, "a plan on a statement that binds nothing");
                }
            }
        }
        self.punct("=")?;
        let exp = self.exp()?;
        Ok(Stmt {
            pat,
            exp,
            loc: Span::default(),
        })
    }
}

impl Parser {
    /// A plan's name and operands, after its `@`.
    fn plan(&mut self) -> Res<Plan> {
        let at = self.next_index();
        Ok(match self.word("a plan")?.as_str() {
            "unswitch" => {
                self.punct("(")?;
                let cond = self.var()?;
                self.punct(")")?;
                Plan::Unswitch { cond }
            }
            "skip_idle" => Plan::SkipIdle,
            "jam" => Plan::Jam,
            "interleave" => Plan::Interleave,
            other => return self.error_at(at, &format!("unknown plan `{other}`")),
        })
    }
}

/// A source-level signature for a parsed function, from its IR types: parameters named as
/// printed, sizes named after their variables.
fn derived_signature<H: Form>(function: &Function<H>) -> Signature {
    let source_type = |ty: &Type| {
        let mut t = types::Type::Prim(ty.elem());
        for dim in ty.shape().iter().rev() {
            let size = match dim {
                SubExp::Const(c) => Size::Const(c.bits()),
                SubExp::Var(v) => Size::Var(crate::print::var_name(function, *v)),
            };
            t = types::Type::array(t, size);
        }
        t
    };
    Signature {
        params: function
            .params
            .iter()
            .map(|p| {
                (
                    crate::print::var_name(function, p.var),
                    source_type(function.ty(p.var)),
                )
            })
            .collect(),
        results: function
            .body
            .result
            .iter()
            .map(|&se| source_type(&function.subexp_type(se)))
            .collect(),
        fields: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kir::HostOp;
    use crate::print::print_program;

    fn round_trip(text: &str) {
        let program = parse_program::<HostOp>(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(print_program(&program), text);
    }

    fn error(text: &str) -> String {
        match parse_program::<HostOp>(text) {
            Ok(_) => panic!("parsed: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn scalars_and_constants() {
        round_trip(
            "entry main (x_0: i64, y_1: f32) : (i64, f32, bool, f64) =\n  \
             let a_2: i64 = x_0 + -1i64\n  \
             let b_3: f32 = y_1 * 1e-7f32\n  \
             let c_4: bool = f32.isnan(b_3)\n  \
             let d_5: f64 = f64.f32(b_3)\n  \
             let e_6: f64 = -f64.inf\n  \
             let n_7: i64 = -(3i64)\n  \
             let m_8: i64 = -n_7\n  \
             let t_9: bool = !c_4\n  \
             let u_10: f32 = f32.nan\n  \
             let v_11: f32 = f32.max(u_10, -0.0f32)\n  \
             let () = assert(t_9, \"a \\\"quoted\\\" message\\n\")\n  \
             in (a_2, v_11, true, d_5)\n",
        );
    }

    #[test]
    fn arrays_soacs_and_kernels() {
        round_trip(
            "threshold suff_outer_par_0 = 32768 -- main: map 0\n\n\
             entry main [n_0] (xs_1: [n_0]f32, *ys_2: [n_0]i64) : ([n_0]f32, f32, [2i64]i64) =\n  \
             let c_3: bool = threshold(suff_outer_par_0, n_0)\n  \
             let r_4: [n_0]f32 = segmap thread (gtid_5 < n_0) : f32\n    \
             do {\n      \
             let x_6: f32 = xs_1[gtid_5]\n      \
             in x_6\n    \
             }\n  \
             let s_7: f32 = redomap n_0 (r_4)\n    \
             reduce_comm \\(a_8: f32, b_9: f32) : f32 -> {\n      \
             let x_10: f32 = a_8 + b_9\n      \
             in x_10\n    \
             } (0.0f32)\n    \
             map \\(x_11: f32) : f32 -> x_11\n  \
             let l_12: [2i64]i64 = [1i64, 2i64] : i64\n  \
             let z_13: [n_0]i64 = ys_2 with [0i64:+1i64*1i64] = l_12\n  \
             in (r_4, s_7, l_12)\n",
        );
    }

    #[test]
    fn plans_of_kernel_statements() {
        let text = "entry main [n_0, m_1] (xs_2: [n_0][m_1]f32, c_3: bool) : [n_0][m_1]f32 =\n  \
             let r_4: [n_0][m_1]f32 = segmap thread (gtid_5 < n_0) : [m_1]f32\n    \
             do {\n      \
             let row_6: [m_1]f32 = xs_2[gtid_5]\n      \
             @unswitch(c_3)\n      \
             let y_7: [m_1]f32 = map m_1 (row_6) \\(x_8: f32) : f32 -> {\n        \
             let z_9: f32 = if c_3 : f32 then {\n          \
             in x_8\n        \
             } else {\n          \
             let w_10: f32 = x_8 + 1.0f32\n          \
             in w_10\n        \
             }\n        \
             in z_9\n      \
             }\n      \
             in y_7\n    \
             }\n  \
             in r_4\n";
        round_trip(text);
        let program = parse_program::<HostOp>(text).unwrap_or_else(|e| panic!("{e}"));
        crate::verify::verify(&program).unwrap_or_else(|e| panic!("{}", e.join("\n")));
        let mut program = program;
        let crate::Exp::Host(HostOp::Seg(seg)) = &mut program.functions[0].body.stmts[0].exp else {
            panic!("the first statement is the kernel");
        };
        seg.plans.insert(VarId(5), Plan::Jam);
        let errors = crate::verify::verify(&program).expect_err("a plan on a space index verifies");
        assert!(errors[0].contains("plan @jam on gtid_5"), "{errors:?}");
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  @jam\n  let y_1: i64 = x_0\n  in y_1\n"),
            "2:3: a plan outside a kernel's body"
        );
        assert!(error(&text.replace("@unswitch(c_3)", "@fuse")).contains("unknown plan `fuse`"));
    }

    #[test]
    fn comments_are_skipped() {
        let text = "-- kernel main: a.og:1:1\nentry main (x_0: i64) : i64 = -- header\n  in x_0\n";
        let program = parse_program::<crate::Core>(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            print_program(&program),
            "entry main (x_0: i64) : i64 =\n  in x_0\n"
        );
    }

    #[test]
    fn errors_are_located() {
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  in y\n"),
            "2:6: expected a variable (`name_id`), found `y`"
        );
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  let y_1: i64 = x_0 $ 1i64\n  in y_1\n"),
            "2:22: unexpected character `$`"
        );
        assert_eq!(
            error("entry main (x_0: i64) : f32 =\n  in x_0\n"),
            "1:25: the result types differ from the types of the body's results"
        );
        assert_eq!(
            error("entry main (x_0: i64) : i64 =\n  in y_0\n"),
            "2:6: variable 0 is `y_0` here but `x_0` elsewhere"
        );
        assert!(
            error("entry main (x_0: i64) : i64 =\n  let y_1: i64 = 1\n  in y_1\n")
                .starts_with("2:18: `1` is not a constant")
        );
        assert!(error("entry main (x_0: i64) : i64 =\n  let").starts_with("2:6: expected"));
        assert!(error("entry m (x_0: i64) : i64 =\n let s_1: i64 = \"ab").contains("unterminated"));
    }
}
