//! The values executors compute with (the reference interpreter, the IR evaluator, the CPU and
//! CUDA executors' host code), as opposed to the values crossing the boundary (`crate::value`).
//!
//! Representation (chosen for O(1) sharing and O(n) bulk operations):
//! - scalars are [`Scalar`]s;
//! - every array is one flat, row-major [`Store`] behind an `Rc` plus a shape and an offset, so
//!   `a[i]` of a multi-dimensional array, `flatten` and contiguous slices are views that copy
//!   nothing. The store holds scalars typed and unboxed ([`ArrayData`]) or, for arrays of tuples,
//!   records and functions, boxed element values (arrays of structures; the entry boundary turns
//!   them into tuples of arrays). Arrays of arrays never appear as elements: a `[n][m]t` array is
//!   one store of shape `[n, m]`.
//! - in-place updates call [`Array::make_mut`], which writes into the store when this view is its
//!   only owner and covers all of it, and copies the view first otherwise (copy on write);
//! - records keep their field names (sorted), tuples are plain sequences, both `Rc`-shared;
//! - a function value is an `F`, which only the reference interpreter has (its closures over
//!   the AST, in the `ogham-interp` crate, which builds on this module: hence public); compiled
//!   code has none and uses `F = Infallible` (`ireval::eval::Val`).
//!
//! Invariants: `offset + shape.product() <= store.len()`; an array's shape is never empty; a
//! boxed store never holds scalars or arrays. An empty array whose element type the interpreter
//! could not know (a polymorphic function mapped over nothing) has an empty boxed store; every
//! operation accepts it, and the entry boundary gives it the declared element type.

use crate::value::{ArrayData, Scalar};
use ogham_ir::types::Type;
use std::rc::Rc;

/// Applies `$body` to the vector inside an [`ArrayData`] and rewraps the result in the same
/// variant.
macro_rules! map_data {
    ($d:expr, $v:ident => $body:expr) => {
        match $d {
            ArrayData::Bool($v) => ArrayData::Bool($crate::buffer::Buffer::from($body)),
            ArrayData::I8($v) => ArrayData::I8($crate::buffer::Buffer::from($body)),
            ArrayData::I16($v) => ArrayData::I16($crate::buffer::Buffer::from($body)),
            ArrayData::I32($v) => ArrayData::I32($crate::buffer::Buffer::from($body)),
            ArrayData::I64($v) => ArrayData::I64($crate::buffer::Buffer::from($body)),
            ArrayData::U8($v) => ArrayData::U8($crate::buffer::Buffer::from($body)),
            ArrayData::F32($v) => ArrayData::F32($crate::buffer::Buffer::from($body)),
            ArrayData::F64($v) => ArrayData::F64($crate::buffer::Buffer::from($body)),
        }
    };
}

/// The side of the square tiles by which [`permute`] transposes a matrix: both a tile's rows
/// and its columns stay in cache.
const TRANSPOSE_TILE: usize = 32;

/// The row-major array of `shape` in `src` with its axes permuted by `perm` (result axis `k`
/// is axis `perm[k]`), in the result's row-major order: a matrix's transpose by square tiles,
/// any other permutation a row of the result at a time.
fn permute<T: Clone>(src: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let rank = shape.len();
    if src.is_empty() || rank == 0 {
        return src.to_vec();
    }
    if perm == [1, 0] {
        let (rows, cols) = (shape[0], shape[1]);
        let mut out = src.to_vec();
        for r0 in (0..rows).step_by(TRANSPOSE_TILE) {
            for c0 in (0..cols).step_by(TRANSPOSE_TILE) {
                for r in r0..(r0 + TRANSPOSE_TILE).min(rows) {
                    for c in c0..(c0 + TRANSPOSE_TILE).min(cols) {
                        out[c * rows + r] = src[r * cols + c].clone();
                    }
                }
            }
        }
        return out;
    }
    let mut strides = vec![1; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    // The result's extents, and the source's stride along each of them.
    let dims: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
    let steps: Vec<usize> = perm.iter().map(|&d| strides[d]).collect();
    let (last, step) = (dims[rank - 1], steps[rank - 1]);
    let mut out = Vec::with_capacity(src.len());
    let mut index = vec![0; rank - 1];
    for _ in 0..src.len() / last {
        let base: usize = index.iter().zip(&steps).map(|(i, s)| i * s).sum();
        out.extend((0..last).map(|j| src[base + j * step].clone()));
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// A value; `'a` is the lifetime of record field names (the program's), `F` a function value.
#[derive(Clone, Debug)]
pub enum Val<'a, F> {
    Prim(Scalar),
    Array(Array<'a, F>),
    /// A tuple; `()` is the empty tuple.
    Tuple(Rc<[Val<'a, F>]>),
    /// A record, fields sorted by name.
    Record(Rc<[(&'a str, Val<'a, F>)]>),
    /// A function value (the interpreter's closures).
    Fun(Rc<F>),
}

impl<'a, F: Clone> Val<'a, F> {
    pub fn unit() -> Val<'a, F> {
        Val::Tuple(Rc::from(Vec::new()))
    }

    pub fn tuple(items: Vec<Val<'a, F>>) -> Val<'a, F> {
        Val::Tuple(Rc::from(items))
    }

    /// A record from fields in any order.
    pub fn record(mut fields: Vec<(&'a str, Val<'a, F>)>) -> Val<'a, F> {
        fields.sort_by(|a, b| a.0.cmp(b.0));
        Val::Record(Rc::from(fields))
    }

    /// A short description for error messages: `i64`, `[3][4]f32`, `(f32, i64)`.
    pub fn describe(&self) -> String {
        match self {
            Val::Prim(s) => s.prim_type().to_string(),
            Val::Array(a) => {
                let dims: String = a.shape().iter().map(|d| format!("[{d}]")).collect();
                let elem = match &*a.store {
                    Store::Prim(d) => d.prim_type().to_string(),
                    Store::Boxed(v) => v.first().map_or_else(|| "?".to_string(), Val::describe),
                };
                format!("{dims}{elem}")
            }
            Val::Tuple(vs) => {
                let parts: Vec<String> = vs.iter().map(Val::describe).collect();
                format!("({})", parts.join(", "))
            }
            Val::Record(fs) => {
                let parts: Vec<String> = fs
                    .iter()
                    .map(|(n, v)| format!("{n}: {}", v.describe()))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Val::Fun(_) => "function".to_string(),
        }
    }

    /// Structural equality (`==`): scalars compare as IEEE values (NaN differs from itself),
    /// arrays by shape and elements. Functions are never equal (the type checker rejects them).
    pub fn equals(&self, other: &Val<'a, F>) -> bool {
        match (self, other) {
            (Val::Prim(a), Val::Prim(b)) => crate::scalar::eq(*a, *b),
            (Val::Array(a), Val::Array(b)) => {
                a.shape() == b.shape() && (0..a.elem_count()).all(|i| a.elem(i).equals(&b.elem(i)))
            }
            (Val::Tuple(a), Val::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.equals(y))
            }
            (Val::Record(a), Val::Record(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.0 == y.0 && x.1.equals(&y.1))
            }
            _ => false,
        }
    }
}

/// The element storage of an array.
#[derive(Clone, Debug)]
pub enum Store<'a, F> {
    Prim(ArrayData),
    Boxed(Vec<Val<'a, F>>),
}

impl<'a, F: Clone> Store<'a, F> {
    /// The number of elements.
    // No caller asks whether a store is empty (arrays have `is_empty`).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        match self {
            Store::Prim(d) => d.len(),
            Store::Boxed(v) => v.len(),
        }
    }

    /// An empty store of the same element kind.
    pub fn empty_like(&self) -> Store<'a, F> {
        self.copy_range(0..0)
    }

    /// A store with the elements `range` of this one.
    pub fn copy_range(&self, range: std::ops::Range<usize>) -> Store<'a, F> {
        match self {
            Store::Prim(d) => Store::Prim(map_data!(d, v => v[range].to_vec())),
            Store::Boxed(v) => Store::Boxed(v[range].to_vec()),
        }
    }

    /// The elements `range` of this store, a row-major array of `shape`, with its axes
    /// permuted by `perm` (result axis `k` is axis `perm[k]`), in the result's order.
    pub fn permuted(
        &self,
        range: std::ops::Range<usize>,
        shape: &[usize],
        perm: &[usize],
    ) -> Store<'a, F> {
        match self {
            Store::Prim(d) => Store::Prim(map_data!(d, v => permute(&v[range], shape, perm))),
            Store::Boxed(v) => Store::Boxed(permute(&v[range], shape, perm)),
        }
    }

    /// Appends the elements `range` of `src`; `Err` if the element kinds differ. An empty
    /// boxed store takes the kind of the first non-empty source.
    // `Err(())`: a kind mismatch is an executor's bug, which each caller reports its own way.
    #[allow(clippy::result_unit_err)]
    pub fn extend_from(
        &mut self,
        src: &Store<'a, F>,
        range: std::ops::Range<usize>,
    ) -> Result<(), ()> {
        if range.is_empty() {
            return Ok(());
        }
        if let (Store::Boxed(v), Store::Prim(d)) = (&*self, src)
            && v.is_empty()
        {
            *self = Store::Prim(ArrayData::with_capacity(d.prim_type(), range.len()));
        }
        match (self, src) {
            (Store::Prim(dst), Store::Prim(src)) => extend_data(dst, src, range),
            (Store::Boxed(dst), Store::Boxed(src)) => {
                dst.extend_from_slice(&src[range]);
                Ok(())
            }
            _ => Err(()),
        }
    }

    /// Element `i` as a value.
    pub fn get(&self, i: usize) -> Val<'a, F> {
        match self {
            Store::Prim(d) => Val::Prim(d.get(i)),
            Store::Boxed(v) => v[i].clone(),
        }
    }

    /// Overwrites element `i` (an in-range index); `Err` if the value's kind does not fit.
    // `Err(())`: as for `extend_from`.
    #[allow(clippy::result_unit_err)]
    pub fn set(&mut self, i: usize, val: Val<'a, F>) -> Result<(), ()> {
        match (self, val) {
            (Store::Prim(d), Val::Prim(s)) => set_scalar(d, i, s),
            (Store::Boxed(v), val @ (Val::Tuple(_) | Val::Record(_) | Val::Fun(_))) => {
                v[i] = val;
                Ok(())
            }
            _ => Err(()),
        }
    }

    /// An empty store for elements of type `elem` (boxed unless it is a scalar type).
    pub fn empty_for(elem: &Type) -> Store<'a, F> {
        match elem.element() {
            Type::Prim(p) => Store::Prim(ArrayData::with_capacity(*p, 0)),
            _ => Store::Boxed(Vec::new()),
        }
    }
}

fn extend_data(
    dst: &mut ArrayData,
    src: &ArrayData,
    range: std::ops::Range<usize>,
) -> Result<(), ()> {
    match (dst, src) {
        (ArrayData::Bool(d), ArrayData::Bool(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::I8(d), ArrayData::I8(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::I16(d), ArrayData::I16(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::I32(d), ArrayData::I32(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::I64(d), ArrayData::I64(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::U8(d), ArrayData::U8(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::F32(d), ArrayData::F32(s)) => d.make_mut().extend_from_slice(&s[range]),
        (ArrayData::F64(d), ArrayData::F64(s)) => d.make_mut().extend_from_slice(&s[range]),
        _ => return Err(()),
    }
    Ok(())
}

fn set_scalar(d: &mut ArrayData, i: usize, s: Scalar) -> Result<(), ()> {
    match (d, s) {
        (ArrayData::Bool(v), Scalar::Bool(x)) => v[i] = x,
        (ArrayData::I8(v), Scalar::I8(x)) => v[i] = x,
        (ArrayData::I16(v), Scalar::I16(x)) => v[i] = x,
        (ArrayData::I32(v), Scalar::I32(x)) => v[i] = x,
        (ArrayData::I64(v), Scalar::I64(x)) => v[i] = x,
        (ArrayData::U8(v), Scalar::U8(x)) => v[i] = x,
        (ArrayData::F32(v), Scalar::F32(x)) => v[i] = x,
        (ArrayData::F64(v), Scalar::F64(x)) => v[i] = x,
        _ => return Err(()),
    }
    Ok(())
}

/// An array: a view (shape and offset) into a shared flat store.
#[derive(Clone, Debug)]
pub struct Array<'a, F> {
    shape: Rc<[usize]>,
    offset: usize,
    store: Rc<Store<'a, F>>,
}

impl<'a, F: Clone> Array<'a, F> {
    /// An array owning all of `store`. The caller guarantees `shape.product() == store.len()`.
    pub fn new(shape: Vec<usize>, store: Store<'a, F>) -> Array<'a, F> {
        debug_assert!(!shape.is_empty() && shape.iter().product::<usize>() == store.len());
        Array {
            shape: Rc::from(shape),
            offset: 0,
            store: Rc::new(store),
        }
    }

    /// A one-dimensional array of scalars.
    pub fn from_data(data: ArrayData) -> Array<'a, F> {
        Array::new(vec![data.len()], Store::Prim(data))
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of rows (the outermost dimension).
    pub fn len(&self) -> usize {
        self.shape[0]
    }

    /// Whether the array has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of scalar (or boxed) elements.
    pub fn elem_count(&self) -> usize {
        self.shape.iter().product()
    }

    /// Number of elements in one row.
    pub fn row_size(&self) -> usize {
        self.shape[1..].iter().product()
    }

    pub fn store(&self) -> &Store<'a, F> {
        &self.store
    }

    /// The store range this view covers.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.elem_count()
    }

    /// Flat element `i` of this view (`i < elem_count()`).
    pub fn elem(&self, i: usize) -> Val<'a, F> {
        self.store.get(self.offset + i)
    }

    /// Row `i` (`i < len()`): an element for one-dimensional arrays, else a view.
    pub fn row(&self, i: usize) -> Val<'a, F> {
        if self.rank() == 1 {
            self.elem(i)
        } else {
            Val::Array(self.sub_view(self.shape[1..].to_vec(), i * self.row_size()))
        }
    }

    /// A view of `shape` starting `offset` elements into this view.
    pub fn sub_view(&self, shape: Vec<usize>, offset: usize) -> Array<'a, F> {
        Array {
            shape: Rc::from(shape),
            offset: self.offset + offset,
            store: Rc::clone(&self.store),
        }
    }

    /// The same elements with another shape of the same element count.
    pub fn reshape(&self, shape: Vec<usize>) -> Array<'a, F> {
        self.sub_view(shape, 0)
    }

    /// The elements of this view as a fresh store.
    pub fn to_store(&self) -> Store<'a, F> {
        self.store.copy_range(self.range())
    }

    /// The elements as a store of their own: the array's store itself, without a copy, when the
    /// array is all of it and its only user (a device-resident buffer then stays on the
    /// device); otherwise a copy of the array's range.
    pub fn into_store(self) -> Store<'a, F> {
        let whole = self.offset == 0 && self.elem_count() == self.store.len();
        if whole {
            return Rc::try_unwrap(self.store)
                .unwrap_or_else(|shared| shared.copy_range(0..shared.len()));
        }
        self.to_store()
    }

    /// The store, for writing: shared or partial views are copied first (copy on write).
    pub fn make_mut(&mut self) -> &mut Store<'a, F> {
        if self.offset != 0
            || self.elem_count() != self.store.len()
            || Rc::get_mut(&mut self.store).is_none()
        {
            self.store = Rc::new(self.to_store());
            self.offset = 0;
        }
        Rc::get_mut(&mut self.store).expect("a freshly copied store has one owner")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Val = super::Val<'static, std::convert::Infallible>;
    type Array = super::Array<'static, std::convert::Infallible>;
    type Store = super::Store<'static, std::convert::Infallible>;

    /// Element `index` (of the result) of `shape` permuted by `perm`, the naive way.
    fn naive(src: &[usize], shape: &[usize], perm: &[usize]) -> Vec<usize> {
        let dims: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
        let n: usize = shape.iter().product();
        (0..n)
            .map(|flat| {
                let mut rest = flat;
                let mut at = vec![0; shape.len()];
                for k in (0..dims.len()).rev() {
                    at[perm[k]] = rest % dims[k];
                    rest /= dims[k];
                }
                let source = at.iter().zip(shape).fold(0, |acc, (i, d)| acc * d + i);
                src[source]
            })
            .collect()
    }

    #[test]
    fn permute_matches_the_definition() {
        let cases: [(&[usize], &[usize]); 7] = [
            (&[33, 70], &[1, 0]),
            (&[1, 5], &[1, 0]),
            (&[3, 5, 7], &[1, 0, 2]),
            (&[3, 5, 7], &[2, 0, 1]),
            (&[3, 5, 7], &[0, 2, 1]),
            (&[2, 3, 4, 5], &[3, 1, 0, 2]),
            (&[6], &[0]),
        ];
        for (shape, perm) in cases {
            let src: Vec<usize> = (0..shape.iter().product()).collect();
            assert_eq!(
                permute(&src, shape, perm),
                naive(&src, shape, perm),
                "{shape:?} {perm:?}"
            );
        }
        assert!(permute::<usize>(&[], &[0, 4], &[1, 0]).is_empty());
    }

    #[test]
    fn views_share_and_updates_copy_on_write() {
        let m = Array::new(
            vec![2, 2],
            Store::Prim(ArrayData::I64(vec![1, 2, 3, 4].into())),
        );
        let Val::Array(mut row) = m.row(1) else {
            panic!("a row of a matrix is an array")
        };
        assert_eq!(row.shape(), [2]);
        assert!(row.make_mut().set(0, Val::Prim(Scalar::I64(9))).is_ok());
        assert!(matches!(row.elem(0), Val::Prim(Scalar::I64(9))));
        assert!(matches!(m.elem(2), Val::Prim(Scalar::I64(3))));
        // A sole owner is updated in place.
        let mut v = Array::from_data(ArrayData::I64(vec![0; 4].into()));
        let before = Rc::as_ptr(&v.store);
        assert!(v.make_mut().set(3, Val::Prim(Scalar::I64(1))).is_ok());
        assert_eq!(before, Rc::as_ptr(&v.store));
    }
}
