//! The checker's internal types and their unification.
//!
//! [`Ty`] is [`ogham_ir::types::Type`] plus inference variables with constraints and an error type;
//! [`Sz`] adds size variables and rigid (named) sizes identified by the binding that introduced
//! them, so shadowing a size name never confuses two sizes. [`Subst`] owns every variable and
//! unifies types in place (no path compression needed at our program sizes).
//!
//! Invariants: a bound variable is never rebound; `Ty::Error` unifies with everything and binds
//! nothing, which is what stops one error from causing others. Constraints live on unbound type
//! variables only and are checked when the variable is bound (`satisfy`).
//!
//! Size rules (see `mod.rs` for what this means for users): a size variable unifies with
//! anything (and is bound to it); otherwise two sizes unify only if they are the same constant,
//! the same rigid size or the same unknown (existential) size, and every other pair is a size
//! mismatch — except in lenient mode (`:>`, branches, loops), where sizes are not compared.

use ogham_ir::source::Span;
use ogham_ir::types::{PrimType, Size, Type};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// A type during inference.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ty {
    Prim(PrimType),
    Array(Box<Ty>, Sz),
    Tuple(Vec<Ty>),
    /// Fields sorted by name.
    Record(Vec<(String, Ty)>),
    Fun(Box<Ty>, Box<Ty>),
    /// A rigid type parameter (`'a` of the definition being checked, or of a scheme).
    Param(String),
    Var(u32),
    /// The type of an erroneous expression: unifies with everything.
    Error,
}

impl Ty {
    pub(super) fn fun(a: Ty, b: Ty) -> Ty {
        Ty::Fun(Box::new(a), Box::new(b))
    }

    pub(super) fn array(elem: Ty, size: Sz) -> Ty {
        Ty::Array(Box::new(elem), size)
    }

    pub(super) fn unit() -> Ty {
        Ty::Tuple(Vec::new())
    }
}

/// A size during inference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Sz {
    Const(u64),
    /// A size named by a binding (a size parameter or an `i64` variable), by binding id.
    Rigid(u32),
    /// A size variable (index into [`Subst::svars`]).
    Var(u32),
    /// An existential size not known statically (`filter`, `[]t`, `concat`), numbered.
    Unknown(u32),
}

/// A set of primitive types (bit `i` is `PrimType::ALL[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PrimSet(u16);

impl PrimSet {
    pub(super) fn of(pred: impl Fn(PrimType) -> bool) -> PrimSet {
        let mut bits = 0;
        for (i, p) in PrimType::ALL.iter().enumerate() {
            if pred(*p) {
                bits |= 1 << i;
            }
        }
        PrimSet(bits)
    }
    pub(super) fn numeric() -> PrimSet {
        PrimSet::of(|p| p != PrimType::Bool)
    }
    pub(super) fn int() -> PrimSet {
        PrimSet::of(PrimType::is_int)
    }
    pub(super) fn float() -> PrimSet {
        PrimSet::of(PrimType::is_float)
    }
    pub(super) fn any() -> PrimSet {
        PrimSet::of(|_| true)
    }
    pub(super) fn bool_or_int() -> PrimSet {
        PrimSet::of(|p| p == PrimType::Bool || p.is_int())
    }
    pub(super) fn contains(self, p: PrimType) -> bool {
        PrimType::ALL
            .iter()
            .position(|q| *q == p)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }
    fn intersect(self, other: PrimSet) -> PrimSet {
        PrimSet(self.0 & other.0)
    }
    pub(super) fn is_subset(self, other: PrimSet) -> bool {
        self.0 & !other.0 == 0
    }
    /// The class a constrained type parameter names: `('t: num)`, `('t: int)`, `('t: float)`.
    pub(super) fn class(name: &str) -> Option<PrimSet> {
        match name {
            "num" => Some(PrimSet::numeric()),
            "int" => Some(PrimSet::int()),
            "float" => Some(PrimSet::float()),
            _ => None,
        }
    }
    /// The class's name, if the set is one (the inverse of [`PrimSet::class`]).
    pub(super) fn class_name(self) -> Option<&'static str> {
        ["num", "int", "float"]
            .into_iter()
            .find(|c| PrimSet::class(c) == Some(self))
    }
    /// The type a variable with this constraint defaults to: `i32`, else `f64`, else the first.
    pub(super) fn default_type(self) -> PrimType {
        [PrimType::I32, PrimType::F64]
            .into_iter()
            .chain(PrimType::ALL)
            .find(|p| self.contains(*p))
            .unwrap_or(PrimType::I32)
    }
    /// How the set reads in messages: "a numeric type", "an integer type", ...
    pub(super) fn describe(self) -> String {
        let names: Vec<&str> = PrimType::ALL
            .iter()
            .filter(|p| self.contains(**p))
            .map(|p| p.name())
            .collect();
        if self == PrimSet::numeric() {
            "a numeric type".into()
        } else if self == PrimSet::int() {
            "an integer type".into()
        } else if self == PrimSet::float() {
            "a floating-point type".into()
        } else if self == PrimSet::any() {
            "a primitive type".into()
        } else if self == PrimSet::bool_or_int() {
            "`bool` or an integer type".into()
        } else {
            format!("one of {}", names.join(", "))
        }
    }
    /// How an unresolved variable with this set is printed in types: `{integer}`, `{float}`.
    fn placeholder(self) -> &'static str {
        if self == PrimSet::numeric() {
            "{number}"
        } else if self == PrimSet::int() {
            "{integer}"
        } else if self == PrimSet::float() {
            "{float}"
        } else {
            "{primitive}"
        }
    }
}

/// What an unbound type variable is known to be.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Constraint {
    None,
    /// One of these primitive types (overloaded operators, literals, math functions).
    Prims(PrimSet),
    /// A record or tuple with at least these fields (`e.x`, `e.0`, `r with x = v`).
    Fields(BTreeMap<String, Ty>),
}

#[derive(Clone, Debug)]
pub(super) struct TVar {
    pub(super) bound: Option<Ty>,
    pub(super) constraint: Constraint,
    /// Where the variable was created (for "cannot infer" errors).
    pub(super) origin: Span,
}

#[derive(Clone, Debug)]
enum SVar {
    Unbound,
    Bound(Sz),
    /// Not a variable: the number of an [`Sz::Unknown`].
    Existential,
}

/// Why two types do not unify (the innermost disagreement).
#[derive(Clone, Debug)]
pub(super) enum Mismatch {
    Types(Ty, Ty),
    Sizes(Sz, Sz),
    /// `found` is not in the constrained set (`what` describes the set).
    NotIn {
        found: Ty,
        what: String,
    },
    NoField {
        ty: Ty,
        field: String,
    },
    Infinite,
}

#[derive(Default)]
pub(super) struct Subst {
    pub(super) tvars: Vec<TVar>,
    svars: Vec<SVar>,
    /// Names of rigid sizes, by binding id.
    pub(super) rigid_names: Vec<String>,
    /// Anonymous rigid sizes (generalised `[]`), exported as the unknown size of this number.
    anonymous: HashMap<u32, u32>,
    /// In lenient mode (`e :> t`, branches, loops) sizes are not compared.
    pub(super) lenient_sizes: bool,
    /// The classes of the constrained type parameters of the definition being checked (the
    /// names of a definition's type parameters are distinct, see `Checker::check_function`).
    pub(super) param_classes: HashMap<String, PrimSet>,
    /// While checking `e :> t`, sizes are neither compared nor inferred.
    pub(super) coercing: bool,
}

impl Subst {
    pub(super) fn fresh(&mut self, constraint: Constraint, origin: Span) -> Ty {
        self.tvars.push(TVar {
            bound: None,
            constraint,
            origin,
        });
        Ty::Var(self.tvars.len() as u32 - 1)
    }

    pub(super) fn fresh_size(&mut self) -> Sz {
        self.svars.push(SVar::Unbound);
        Sz::Var(self.svars.len() as u32 - 1)
    }

    pub(super) fn fresh_unknown(&mut self) -> Sz {
        self.svars.push(SVar::Existential);
        Sz::Unknown(self.svars.len() as u32 - 1)
    }

    /// A new binding id (also the id of the rigid size the binding may name).
    pub(super) fn new_binding(&mut self, name: &str) -> u32 {
        self.rigid_names.push(name.to_string());
        self.rigid_names.len() as u32 - 1
    }

    /// A rigid size without a name: a generalised `[]` of a definition's type.
    pub(super) fn fresh_anonymous(&mut self) -> u32 {
        let id = self.new_binding("");
        self.svars.push(SVar::Existential);
        self.anonymous.insert(id, self.svars.len() as u32 - 1);
        id
    }

    pub(super) fn set_size(&mut self, v: u32, s: Sz) {
        self.svars[v as usize] = SVar::Bound(s);
    }

    /// Unbound size variables in `t`, in order of first occurrence.
    pub(super) fn free_size_vars(&self, t: &Ty, out: &mut Vec<u32>) {
        match self.shallow(t) {
            Ty::Array(e, s) => {
                if let Sz::Var(v) = self.shallow_size(s)
                    && !out.contains(&v)
                {
                    out.push(v);
                }
                self.free_size_vars(&e, out);
            }
            Ty::Tuple(ts) => ts.iter().for_each(|t| self.free_size_vars(t, out)),
            Ty::Record(fs) => fs.iter().for_each(|(_, t)| self.free_size_vars(t, out)),
            Ty::Fun(a, b) => {
                self.free_size_vars(&a, out);
                self.free_size_vars(&b, out);
            }
            Ty::Prim(_) | Ty::Param(_) | Ty::Var(_) | Ty::Error => {}
        }
    }

    /// Follows bound variables at the top of `t`.
    pub(super) fn shallow(&self, t: &Ty) -> Ty {
        let mut t = t.clone();
        while let Ty::Var(v) = t {
            match &self.tvars[v as usize].bound {
                Some(b) => t = b.clone(),
                None => break,
            }
        }
        t
    }

    pub(super) fn shallow_size(&self, s: Sz) -> Sz {
        let mut s = s;
        while let Sz::Var(v) = s {
            match self.svars[v as usize] {
                SVar::Bound(b) => s = b,
                _ => break,
            }
        }
        s
    }

    /// `t` with every bound variable replaced by its value.
    pub(super) fn resolve(&self, t: &Ty) -> Ty {
        match self.shallow(t) {
            Ty::Array(e, s) => Ty::array(self.resolve(&e), self.shallow_size(s)),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.resolve(t)).collect()),
            Ty::Record(fs) => Ty::Record(
                fs.iter()
                    .map(|(n, t)| (n.clone(), self.resolve(t)))
                    .collect(),
            ),
            Ty::Fun(a, b) => Ty::fun(self.resolve(&a), self.resolve(&b)),
            t => t,
        }
    }

    /// Unbound type variables in `t`, in order of first occurrence.
    pub(super) fn free_vars(&self, t: &Ty, out: &mut Vec<u32>) {
        match self.shallow(t) {
            Ty::Var(v) => {
                if !out.contains(&v) {
                    out.push(v);
                    if let Constraint::Fields(fs) = &self.tvars[v as usize].constraint {
                        for t in fs.values() {
                            self.free_vars(t, out);
                        }
                    }
                }
            }
            Ty::Array(e, _) => self.free_vars(&e, out),
            Ty::Tuple(ts) => ts.iter().for_each(|t| self.free_vars(t, out)),
            Ty::Record(fs) => fs.iter().for_each(|(_, t)| self.free_vars(t, out)),
            Ty::Fun(a, b) => {
                self.free_vars(&a, out);
                self.free_vars(&b, out);
            }
            Ty::Prim(_) | Ty::Param(_) | Ty::Error => {}
        }
    }

    /// Binds an unbound variable without any check (generalisation and defaulting).
    pub(super) fn set(&mut self, v: u32, t: Ty) {
        self.tvars[v as usize].bound = Some(t);
    }

    pub(super) fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), Mismatch> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (&a, &b) {
            (Ty::Error, _) | (_, Ty::Error) => Ok(()),
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            (Ty::Var(x), _) => self.bind(*x, &b),
            (_, Ty::Var(y)) => self.bind(*y, &a),
            (Ty::Prim(p), Ty::Prim(q)) if p == q => Ok(()),
            (Ty::Param(p), Ty::Param(q)) if p == q => Ok(()),
            (Ty::Array(e1, s1), Ty::Array(e2, s2)) => {
                self.unify(e1, e2)?;
                self.unify_size(*s1, *s2)
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (Ty::Record(xs), Ty::Record(ys))
                if xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| x.0 == y.0) =>
            {
                for (x, y) in xs.iter().zip(ys) {
                    self.unify(&x.1, &y.1)?;
                }
                Ok(())
            }
            (Ty::Fun(a1, r1), Ty::Fun(a2, r2)) => {
                self.unify(a1, a2)?;
                self.unify(r1, r2)
            }
            _ => Err(Mismatch::Types(a, b)),
        }
    }

    pub(super) fn unify_size(&mut self, a: Sz, b: Sz) -> Result<(), Mismatch> {
        let (a, b) = (self.shallow_size(a), self.shallow_size(b));
        match (a, b) {
            _ if a == b => Ok(()),
            // A coercion constrains no size: `xs :> [n]t` must not make `xs`'s own (still
            // unknown) size `n`, which would drop the run-time check of the coercion.
            _ if self.coercing => Ok(()),
            (Sz::Var(x), s) | (s, Sz::Var(x)) => {
                self.svars[x as usize] = SVar::Bound(s);
                Ok(())
            }
            _ if self.lenient_sizes => Ok(()),
            _ => Err(Mismatch::Sizes(a, b)),
        }
    }

    fn occurs(&self, v: u32, t: &Ty) -> bool {
        let mut vars = Vec::new();
        self.free_vars(t, &mut vars);
        vars.contains(&v)
    }

    fn bind(&mut self, v: u32, t: &Ty) -> Result<(), Mismatch> {
        if self.occurs(v, t) {
            return Err(Mismatch::Infinite);
        }
        let constraint =
            std::mem::replace(&mut self.tvars[v as usize].constraint, Constraint::None);
        self.tvars[v as usize].bound = Some(t.clone());
        let result = self.satisfy(t, constraint.clone());
        if result.is_err() {
            // Leave the variable as it was, so the failed use does not spread.
            self.tvars[v as usize].bound = None;
            self.tvars[v as usize].constraint = constraint;
        }
        result
    }

    /// Checks that `t` meets `c`, moving the constraint onto `t` if it is a variable.
    fn satisfy(&mut self, t: &Ty, c: Constraint) -> Result<(), Mismatch> {
        let t = self.shallow(t);
        match (c, &t) {
            (Constraint::None, _) | (_, Ty::Error) => Ok(()),
            (c, Ty::Var(y)) => self.constrain(*y, c),
            (Constraint::Prims(set), Ty::Prim(p)) if set.contains(*p) => Ok(()),
            // A constrained type parameter stands for each type of its class.
            (Constraint::Prims(set), Ty::Param(p))
                if self.param_classes.get(p).is_some_and(|c| c.is_subset(set)) =>
            {
                Ok(())
            }
            (Constraint::Prims(set), _) => Err(Mismatch::NotIn {
                found: t.clone(),
                what: set.describe(),
            }),
            (Constraint::Fields(fs), _) => {
                for (name, ft) in fs {
                    let actual = match &t {
                        Ty::Record(rfs) => {
                            rfs.iter().find(|(n, _)| *n == name).map(|f| f.1.clone())
                        }
                        Ty::Tuple(ts) => {
                            name.parse::<usize>().ok().and_then(|i| ts.get(i).cloned())
                        }
                        _ => None,
                    };
                    match actual {
                        Some(actual) => self.unify(&ft, &actual)?,
                        None => {
                            return Err(Mismatch::NoField {
                                ty: t.clone(),
                                field: name,
                            });
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// Adds constraint `c` to the unbound variable `v`.
    fn constrain(&mut self, v: u32, c: Constraint) -> Result<(), Mismatch> {
        let old = std::mem::replace(&mut self.tvars[v as usize].constraint, Constraint::None);
        let merged = match (old, c) {
            (Constraint::None, c) | (c, Constraint::None) => c,
            (Constraint::Prims(a), Constraint::Prims(b)) => {
                let both = a.intersect(b);
                if both.0 == 0 {
                    self.tvars[v as usize].constraint = Constraint::Prims(a);
                    return Err(Mismatch::NotIn {
                        found: Ty::Var(v),
                        what: b.describe(),
                    });
                }
                Constraint::Prims(both)
            }
            (Constraint::Fields(mut a), Constraint::Fields(b)) => {
                for (name, t) in b {
                    match a.get(&name).cloned() {
                        Some(old) => self.unify(&old, &t)?,
                        None => {
                            a.insert(name, t);
                        }
                    }
                }
                Constraint::Fields(a)
            }
            (Constraint::Prims(a), Constraint::Fields(fs)) => {
                self.tvars[v as usize].constraint = Constraint::Prims(a);
                let field = fs.into_keys().next().unwrap_or_default();
                return Err(Mismatch::NoField {
                    ty: Ty::Var(v),
                    field,
                });
            }
            (Constraint::Fields(fs), Constraint::Prims(b)) => {
                self.tvars[v as usize].constraint = Constraint::Fields(fs);
                return Err(Mismatch::NotIn {
                    found: Ty::Var(v),
                    what: b.describe(),
                });
            }
        };
        self.tvars[v as usize].constraint = merged;
        Ok(())
    }

    /// The user-facing text of a type: unresolved variables print as `{number}`, `{float}`,
    /// `{record with x}` or `_`; unknown sizes as `[]`.
    pub(super) fn show(&self, t: &Ty) -> String {
        let mut out = String::new();
        self.write_ty(&mut out, t);
        out
    }

    pub(super) fn show_size(&self, s: Sz) -> String {
        match self.shallow_size(s) {
            Sz::Const(n) => n.to_string(),
            Sz::Rigid(id) => self.rigid_names[id as usize].clone(),
            Sz::Var(_) | Sz::Unknown(_) => String::new(),
        }
    }

    fn write_ty(&self, out: &mut String, t: &Ty) {
        match self.shallow(t) {
            Ty::Prim(p) => out.push_str(p.name()),
            Ty::Array(e, s) => {
                let _ = write!(out, "[{}]", self.show_size(s));
                self.write_ty(out, &e);
            }
            Ty::Tuple(ts) => {
                out.push('(');
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write_ty(out, t);
                }
                out.push(')');
            }
            Ty::Record(fs) => {
                out.push('{');
                for (i, (n, t)) in fs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    let _ = write!(out, "{n}: ");
                    self.write_ty(out, t);
                }
                out.push('}');
            }
            Ty::Fun(a, b) => {
                let paren = matches!(self.shallow(&a), Ty::Fun(..));
                if paren {
                    out.push('(');
                }
                self.write_ty(out, &a);
                if paren {
                    out.push(')');
                }
                out.push_str(" -> ");
                self.write_ty(out, &b);
            }
            Ty::Param(p) => out.push_str(&p),
            Ty::Var(v) => match &self.tvars[v as usize].constraint {
                Constraint::None => out.push('_'),
                Constraint::Prims(set) => out.push_str(set.placeholder()),
                Constraint::Fields(fs) => {
                    let names: Vec<&str> = fs.keys().map(String::as_str).collect();
                    let _ = write!(out, "{{record with {}}}", names.join(", "));
                }
            },
            Ty::Error => out.push_str("{error}"),
        }
    }

    /// Converts a fully inferred type to the public [`Type`] (unbound sizes become unknown,
    /// leftover variables, which only erroneous programs have, become the unit type).
    pub(super) fn export(&self, t: &Ty) -> Type {
        match self.shallow(t) {
            Ty::Prim(p) => Type::Prim(p),
            Ty::Array(e, s) => Type::array(self.export(&e), self.export_size(s)),
            Ty::Tuple(ts) => Type::Tuple(ts.iter().map(|t| self.export(t)).collect()),
            Ty::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(n, t)| (n.clone(), self.export(t)))
                    .collect(),
            ),
            Ty::Fun(a, b) => Type::Fun(Box::new(self.export(&a)), Box::new(self.export(&b))),
            Ty::Param(p) => Type::Param(p),
            Ty::Var(_) | Ty::Error => Type::Tuple(Vec::new()),
        }
    }

    pub(super) fn export_size(&self, s: Sz) -> Size {
        match self.shallow_size(s) {
            Sz::Const(n) => Size::Const(n),
            Sz::Rigid(id) => match self.anonymous.get(&id) {
                Some(n) => Size::Unknown(*n),
                None => Size::Var(self.rigid_names[id as usize].clone()),
            },
            Sz::Var(v) | Sz::Unknown(v) => Size::Unknown(v),
        }
    }
}
