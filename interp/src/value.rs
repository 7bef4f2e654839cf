//! The interpreter's function values (closures over the AST) and environments, its names for
//! the values of `ogham_runtime::val` with those function values, and the building of arrays
//! from rows ([`Builder`]: stacked rows must all have the first one's shape and kind).

use ogham_compiler::builtins::Builtin;
use ogham_compiler::syntax::ast::{BinOp, Expr, Pattern, TypeParam};
use ogham_ir::types::{Type, TypeArgs};
use ogham_runtime::value::{ArrayData, Scalar};
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

/// A value during interpretation; `'a` is the lifetime of the program being run.
pub type Val<'a> = ogham_runtime::val::Val<'a, Closure<'a>>;
pub type Array<'a> = ogham_runtime::val::Array<'a, Closure<'a>>;
pub type Store<'a> = ogham_runtime::val::Store<'a, Closure<'a>>;

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

/// Collects rows (scalars, arrays of equal shape, or boxed values) into a new array.
pub struct Builder<'a> {
    rows: usize,
    /// The shape of every row so far (empty for scalar or boxed rows); `None` before the first.
    row_shape: Option<Vec<usize>>,
    store: Store<'a>,
}

/// Why a row could not be added to a [`Builder`].
pub enum BuildError {
    /// A row's shape differs from the first row's.
    Irregular {
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    /// A row of another kind than the first (an interpreter or type checker bug).
    IllTyped,
}

impl<'a> Builder<'a> {
    pub fn new(capacity: usize) -> Builder<'a> {
        Builder {
            rows: 0,
            row_shape: None,
            store: Store::Boxed(Vec::with_capacity(capacity.min(1 << 20))),
        }
    }

    pub fn push(&mut self, row: Val<'a>) -> Result<(), BuildError> {
        let shape: &[usize] = match &row {
            Val::Array(a) => a.shape(),
            _ => &[],
        };
        match &self.row_shape {
            Some(expected) if expected != shape => {
                return Err(BuildError::Irregular {
                    expected: expected.clone(),
                    found: shape.to_vec(),
                });
            }
            Some(_) => {}
            None => {
                self.row_shape = Some(shape.to_vec());
                if let (Val::Prim(s), Store::Boxed(v)) = (&row, &self.store) {
                    let cap = v.capacity();
                    self.store = Store::Prim(ArrayData::with_capacity(s.prim_type(), cap));
                }
            }
        }
        self.rows += 1;
        match (&mut self.store, row) {
            (Store::Prim(d), Val::Prim(s)) => d.push(s).ok_or(BuildError::IllTyped),
            (store, Val::Array(a)) => store
                .extend_from(a.store(), a.range())
                .map_err(|()| BuildError::IllTyped),
            (Store::Boxed(v), row @ (Val::Tuple(_) | Val::Record(_) | Val::Fun(_))) => {
                v.push(row);
                Ok(())
            }
            _ => Err(BuildError::IllTyped),
        }
    }

    /// The array of the rows pushed. With no rows, `empty` gives the row shape and the store
    /// (see [`empty_array`]).
    pub fn finish(self, empty: impl FnOnce() -> Array<'a>) -> Array<'a> {
        match self.row_shape {
            None => empty(),
            Some(row_shape) => {
                let mut shape = Vec::with_capacity(row_shape.len() + 1);
                shape.push(self.rows);
                shape.extend(row_shape);
                Array::new(shape, self.store)
            }
        }
    }
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

    fn ints(xs: &[i64]) -> Val<'static> {
        Val::Array(Array::from_data(ArrayData::I64(xs.to_vec().into())))
    }

    #[test]
    fn builder_stacks_rows_and_rejects_irregular_ones() {
        let mut b = Builder::new(2);
        assert!(b.push(ints(&[1, 2])).is_ok());
        assert!(b.push(ints(&[3, 4])).is_ok());
        assert!(matches!(
            b.push(ints(&[5])),
            Err(BuildError::Irregular { .. })
        ));
        let a = b.finish(|| unreachable!());
        assert_eq!(a.shape(), [2, 2]);
        let mut b = Builder::new(1);
        assert!(b.push(Val::Prim(Scalar::I32(1))).is_ok());
        assert!(matches!(
            b.push(Val::Prim(Scalar::F32(1.0))),
            Err(BuildError::IllTyped)
        ));
    }

    #[test]
    fn long_environments_drop_without_recursion() {
        let mut env = Env::default();
        for _ in 0..1_000_000 {
            env = env.bind("x", Val::Prim(Scalar::Bool(true)));
        }
        drop(env);
    }
}
