//! The interpreter's function values (closures over the AST) and environments, and its names
//! for the values of `crate::val` with those function values.

use crate::value::Scalar;
use ogham_compiler::builtins::Builtin;
use ogham_compiler::syntax::ast::{BinOp, Expr, Pattern, TypeParam};
use ogham_ir::types::{Type, TypeArgs};
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

pub use crate::val::BuildError;

/// A value during interpretation; `'a` is the lifetime of the program being run.
pub type Val<'a> = crate::val::Val<'a, Closure<'a>>;
pub type Array<'a> = crate::val::Array<'a, Closure<'a>>;
pub type Store<'a> = crate::val::Store<'a, Closure<'a>>;
pub type Builder<'a> = crate::val::Builder<'a, Closure<'a>>;

/// An empty array of type `ty` (`[0]...` with the inner sizes of the type: constants, and
/// named sizes bound in `env` to a valid size; 0 for the others; element kind from the type,
/// boxed when unknown).
pub fn empty_array<'a>(ty: &Type, env: &Env<'_>) -> Array<'a> {
    use ogham_ir::types::Size;
    let mut shape = vec![0];
    let mut t = match ty {
        Type::Array(elem, _) => &**elem,
        other => other,
    };
    while let Type::Array(elem, size) = t {
        let named = |name: &str| match *env.frame(name)?.val.borrow() {
            Some(Val::Prim(Scalar::I64(n))) => ogham_ir::sizes::count(n).ok(),
            _ => None,
        };
        shape.push(match size {
            Size::Const(n) => usize::try_from(*n).unwrap_or(0),
            Size::Var(name) => named(name).unwrap_or(0),
            Size::Unknown(_) => 0,
        });
        t = elem;
    }
    Array::new(shape, Store::empty_for(t))
}

/// A variable binding: one frame of a persistent linked-list environment. The value sits in a
/// `RefCell` so a consuming use (`a with [i] = v`, a unique argument) can move it out, leaving
/// `None`, which makes the in-place update O(1) when nothing else shares the array.
#[derive(Debug)]
pub struct Frame<'a> {
    pub name: &'a str,
    pub val: RefCell<Option<Val<'a>>>,
    next: Frames<'a>,
}

/// A chain of frames, innermost first.
#[derive(Clone, Debug, Default)]
struct Frames<'a>(Option<Rc<Frame<'a>>>);

/// The local variables in scope (top-level definitions are not in it), and the values of the
/// type parameters of the polymorphic definitions being evaluated (which give the expressions
/// of a polymorphic body their types in this instance, see `Checked::type_of`).
#[derive(Clone, Debug, Default)]
pub struct Env<'a> {
    frames: Frames<'a>,
    pub types: Rc<TypeArgs>,
}

impl<'a> Env<'a> {
    pub fn bind(&self, name: &'a str, val: Val<'a>) -> Env<'a> {
        Env {
            frames: Frames(Some(Rc::new(Frame {
                name,
                val: RefCell::new(Some(val)),
                next: self.frames.clone(),
            }))),
            types: self.types.clone(),
        }
    }

    /// The environment with the type arguments `types` instead of its own.
    pub fn with_types(&self, types: Rc<TypeArgs>) -> Env<'a> {
        Env {
            frames: self.frames.clone(),
            types,
        }
    }

    /// The innermost binding of `name`.
    pub fn frame(&self, name: &str) -> Option<&Frame<'a>> {
        let mut cur = self.frames.0.as_deref();
        while let Some(f) = cur {
            if f.name == name {
                return Some(f);
            }
            cur = f.next.0.as_deref();
        }
        None
    }
}

impl Drop for Frames<'_> {
    /// Drops long chains iteratively (a recursive drop could overflow the stack).
    fn drop(&mut self) {
        let mut cur = self.0.take();
        while let Some(rc) = cur {
            match Rc::try_unwrap(rc) {
                Ok(mut frame) => cur = frame.next.0.take(),
                Err(_) => break,
            }
        }
    }
}

/// A function value: something callable plus the arguments given so far.
#[derive(Clone, Debug)]
pub struct Closure<'a> {
    pub callee: Callee<'a>,
    pub args: Vec<Val<'a>>,
}

#[derive(Clone, Debug)]
pub enum Callee<'a> {
    /// A definition, local function or lambda: its parameters and body, evaluated in `env`
    /// (empty for top-level definitions) after binding the size parameters in `type_params`.
    Code {
        type_params: &'a [TypeParam],
        params: &'a [Pattern],
        body: &'a Expr,
        /// The module the code is in (to look up type aliases in parameter types).
        module: usize,
        env: Env<'a>,
    },
    /// A built-in; `ty` is the type of this use of its name (instantiated), which gives the
    /// types of empty results, and the environment of the use gives the values of the sizes
    /// named in it.
    Builtin(Builtin, Cow<'a, Type>, Env<'a>),
    /// `(+)`
    Op(BinOp),
    /// `(x +)`
    LeftSection(BinOp, Val<'a>),
    /// `(+ y)`
    RightSection(BinOp, Val<'a>),
}

impl Callee<'_> {
    /// Number of arguments that saturate the callee.
    pub fn arity(&self) -> usize {
        match self {
            Callee::Code { params, .. } => params.len(),
            Callee::Builtin(b, ..) => b.arity(),
            Callee::Op(_) => 2,
            Callee::LeftSection(..) | Callee::RightSection(..) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_environments_drop_without_recursion() {
        let mut env = Env::default();
        for _ in 0..1_000_000 {
            env = env.bind("x", Val::Prim(Scalar::Bool(true)));
        }
        drop(env);
    }
}
