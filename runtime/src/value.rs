//! Values crossing the boundary between Ogham programs and their callers.
//!
//! Arrays of scalars are stored flat, row-major, with a shape (the representation of `.npy` files
//! and of every backend's buffers). Arrays of tuples or records cross the boundary as tuples of
//! arrays (Futhark's convention), so a [`Value`] is a scalar, a flat array, or a tuple of values.

pub use crate::buffer::Buffer;
use crate::buffer::Mirror;
use ogham_ir::Const;
use ogham_ir::types::PrimType;
use std::fmt;
use std::sync::Arc;

/// One scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    F32(f32),
    F64(f64),
}

impl Scalar {
    /// The scalar in a 64-bit slot as generated code passes and returns it: integers and
    /// `bool`s widened to 64 bits (signed ones sign-extended, `u8` zero-extended), floats as
    /// their bit patterns in the low bits.
    pub fn slot_bits(self) -> i64 {
        match self {
            Scalar::F32(x) => x.to_bits() as i64,
            Scalar::F64(x) => x.to_bits() as i64,
            integer => integer.as_i64(),
        }
    }

    pub fn prim_type(self) -> PrimType {
        match self {
            Scalar::Bool(_) => PrimType::Bool,
            Scalar::I8(_) => PrimType::I8,
            Scalar::I16(_) => PrimType::I16,
            Scalar::I32(_) => PrimType::I32,
            Scalar::I64(_) => PrimType::I64,
            Scalar::U8(_) => PrimType::U8,
            Scalar::F32(_) => PrimType::F32,
            Scalar::F64(_) => PrimType::F64,
        }
    }

    /// The value as an `f64` (exact for every type but the widest integers).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::I8(x) => x as f64,
            Scalar::I16(x) => x as f64,
            Scalar::I32(x) => x as f64,
            Scalar::I64(x) => x as f64,
            Scalar::U8(x) => x as f64,
            Scalar::F32(x) => x as f64,
            Scalar::F64(x) => x,
        }
    }

    /// The value as an `i64` (floats truncate towards zero, saturating).
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::I8(x) => x as i64,
            Scalar::I16(x) => x as i64,
            Scalar::I32(x) => x as i64,
            Scalar::I64(x) => x,
            Scalar::U8(x) => x as i64,
            Scalar::F32(x) => x as i64,
            Scalar::F64(x) => x as i64,
        }
    }
}

impl From<Const> for Scalar {
    fn from(c: Const) -> Scalar {
        match c {
            Const::Bool(x) => Scalar::Bool(x),
            Const::I8(x) => Scalar::I8(x),
            Const::I16(x) => Scalar::I16(x),
            Const::I32(x) => Scalar::I32(x),
            Const::I64(x) => Scalar::I64(x),
            Const::U8(x) => Scalar::U8(x),
            Const::F32(x) => Scalar::F32(x),
            Const::F64(x) => Scalar::F64(x),
        }
    }
}

impl From<Scalar> for Const {
    fn from(s: Scalar) -> Const {
        match s {
            Scalar::Bool(x) => Const::Bool(x),
            Scalar::I8(x) => Const::I8(x),
            Scalar::I16(x) => Const::I16(x),
            Scalar::I32(x) => Const::I32(x),
            Scalar::I64(x) => Const::I64(x),
            Scalar::U8(x) => Const::U8(x),
            Scalar::F32(x) => Const::F32(x),
            Scalar::F64(x) => Const::F64(x),
        }
    }
}

impl fmt::Display for Scalar {
    /// Futhark's textual value syntax: `1i32`, `2.5f32`, `true`, `f32.nan`, `-f64.inf`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn float(f: &mut fmt::Formatter<'_>, x: f64, suffix: &str) -> fmt::Result {
            if x.is_nan() {
                write!(f, "{suffix}.nan")
            } else if x.is_infinite() {
                write!(f, "{}{suffix}.inf", if x < 0.0 { "-" } else { "" })
            } else {
                write!(f, "{x:?}{suffix}")
            }
        }
        match *self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::I8(x) => write!(f, "{x}i8"),
            Scalar::I16(x) => write!(f, "{x}i16"),
            Scalar::I32(x) => write!(f, "{x}i32"),
            Scalar::I64(x) => write!(f, "{x}i64"),
            Scalar::U8(x) => write!(f, "{x}u8"),
            Scalar::F32(x) => {
                if x.is_finite() {
                    write!(f, "{x:?}f32")
                } else {
                    float(f, x as f64, "f32")
                }
            }
            Scalar::F64(x) => float(f, x, "f64"),
        }
    }
}

/// Applies `$body` to the [`Buffer`] inside an [`ArrayData`], whatever its element type.
macro_rules! with_buffer {
    ($d:expr, $b:ident => $body:expr) => {
        match $d {
            ArrayData::Bool($b) => $body,
            ArrayData::I8($b) => $body,
            ArrayData::I16($b) => $body,
            ArrayData::I32($b) => $body,
            ArrayData::I64($b) => $body,
            ArrayData::U8($b) => $body,
            ArrayData::F32($b) => $body,
            ArrayData::F64($b) => $body,
        }
    };
}

/// The flat, row-major element storage of an array: owned, or borrowed from the caller without
/// a copy and copied on its first write ([`Buffer`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayData {
    Bool(Buffer<bool>),
    I8(Buffer<i8>),
    I16(Buffer<i16>),
    I32(Buffer<i32>),
    I64(Buffer<i64>),
    U8(Buffer<u8>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
}

impl ArrayData {
    pub fn prim_type(&self) -> PrimType {
        match self {
            ArrayData::Bool(_) => PrimType::Bool,
            ArrayData::I8(_) => PrimType::I8,
            ArrayData::I16(_) => PrimType::I16,
            ArrayData::I32(_) => PrimType::I32,
            ArrayData::I64(_) => PrimType::I64,
            ArrayData::U8(_) => PrimType::U8,
            ArrayData::F32(_) => PrimType::F32,
            ArrayData::F64(_) => PrimType::F64,
        }
    }

    /// The number of elements (a remote buffer's without reading them).
    pub fn len(&self) -> usize {
        with_buffer!(self, b => b.count())
    }

    /// The elements' mirror in a device's memory, if any ([`crate::buffer`]).
    pub fn mirror(&self) -> Option<&Arc<dyn Mirror>> {
        with_buffer!(self, b => b.mirror())
    }

    /// Attaches `mirror`, a copy of exactly these elements; false when there is one already.
    pub fn attach(&self, mirror: Arc<dyn Mirror>) -> bool {
        with_buffer!(self, b => b.attach(mirror))
    }

    /// `n` elements of type `t` that only `mirror` holds (a kernel's result left on the
    /// device): the first read on the host copies them back.
    pub fn remote(t: PrimType, n: usize, mirror: Arc<dyn Mirror>) -> ArrayData {
        match t {
            PrimType::Bool => ArrayData::Bool(Buffer::remote(n, mirror)),
            PrimType::I8 => ArrayData::I8(Buffer::remote(n, mirror)),
            PrimType::I16 => ArrayData::I16(Buffer::remote(n, mirror)),
            PrimType::I32 => ArrayData::I32(Buffer::remote(n, mirror)),
            PrimType::I64 => ArrayData::I64(Buffer::remote(n, mirror)),
            PrimType::U8 => ArrayData::U8(Buffer::remote(n, mirror)),
            PrimType::F32 => ArrayData::F32(Buffer::remote(n, mirror)),
            PrimType::F64 => ArrayData::F64(Buffer::remote(n, mirror)),
        }
    }

    /// Brings remote elements to the host and drops the mirror ([`Buffer::settle`]).
    pub fn settle(&mut self) -> Result<(), String> {
        with_buffer!(self, b => b.settle())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `start..start + len` of `whole`, sharing its memory without a copy (`whole` is
    /// kept alive by the view, and written by nobody: a write to the view copies it first).
    /// `None` when the range is not inside `whole` or `whole` is remote.
    pub fn range_view(whole: &Arc<ArrayData>, start: usize, len: usize) -> Option<ArrayData> {
        let inside = start.checked_add(len).is_some_and(|end| end <= whole.len());
        if !inside || whole.is_remote() {
            return None;
        }
        let owner: Arc<dyn Send + Sync> = whole.clone();
        macro_rules! view {
            ($variant:ident, $b:expr) => {
                // SAFETY: `start..start + len` is inside the buffer's initialised elements
                // (checked above), which `owner` keeps alive and nobody writes while it lives
                // (a write through any clone copies first).
                ArrayData::$variant(unsafe { Buffer::borrowed($b.as_ptr().add(start), len, owner) })
            };
        }
        Some(match whole.as_ref() {
            ArrayData::Bool(b) => view!(Bool, b),
            ArrayData::I8(b) => view!(I8, b),
            ArrayData::I16(b) => view!(I16, b),
            ArrayData::I32(b) => view!(I32, b),
            ArrayData::I64(b) => view!(I64, b),
            ArrayData::U8(b) => view!(U8, b),
            ArrayData::F32(b) => view!(F32, b),
            ArrayData::F64(b) => view!(F64, b),
        })
    }

    /// Whether the elements are only on a device so far ([`Buffer::is_remote`]).
    pub fn is_remote(&self) -> bool {
        with_buffer!(self, b => b.is_remote())
    }

    /// Copies the elements' bytes into `dst` (exactly their size): a remote buffer's straight
    /// from its mirror, without keeping a host copy. The error is the device's.
    pub fn read_into(&self, dst: &mut [u8]) -> Result<(), String> {
        let bytes = self.len() * self.prim_type_size();
        if dst.len() != bytes {
            return Err(format!(
                "{} bytes do not hold {bytes} bytes of elements",
                dst.len()
            ));
        }
        if self.is_remote() {
            let mirror = self.mirror().expect("a remote buffer has its mirror");
            return mirror.fetch(dst);
        }
        // SAFETY: the host elements are `bytes` initialised bytes (`bool`s are bytes 0 or 1).
        let host = unsafe { std::slice::from_raw_parts(self.as_ptr(), bytes) };
        dst.copy_from_slice(host);
        Ok(())
    }

    /// Element `i` as a scalar. Panics if out of range (callers index within `len`).
    pub fn get(&self, i: usize) -> Scalar {
        match self {
            ArrayData::Bool(v) => Scalar::Bool(v[i]),
            ArrayData::I8(v) => Scalar::I8(v[i]),
            ArrayData::I16(v) => Scalar::I16(v[i]),
            ArrayData::I32(v) => Scalar::I32(v[i]),
            ArrayData::I64(v) => Scalar::I64(v[i]),
            ArrayData::U8(v) => Scalar::U8(v[i]),
            ArrayData::F32(v) => Scalar::F32(v[i]),
            ArrayData::F64(v) => Scalar::F64(v[i]),
        }
    }

    /// `n` zero elements (false, 0, 0.0), or `None` when the memory cannot be had.
    ///
    /// The memory comes zeroed from the allocator (for large buffers: fresh pages that the OS
    /// zeroes when they are first written, so the kernel writing them faults them in on all
    /// cores instead of a serial zeroing pass here); buffers of 4 MiB or more are offered
    /// transparent huge pages (one page fault per 2 MiB instead of per 4 KiB).
    pub fn zeroed(t: PrimType, n: usize) -> Option<ArrayData> {
        /// Only instantiated with `bool`, integer and float elements, for which all-zero bits
        /// are the value `false`/`0`/`0.0`.
        fn zeros<T>(n: usize) -> Option<Vec<T>> {
            let layout = std::alloc::Layout::array::<T>(n).ok()?;
            if layout.size() == 0 {
                return Some(Vec::new());
            }
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
            if ptr.is_null() {
                return None;
            }
            advise_huge_pages(ptr.cast(), layout.size());
            // SAFETY: `ptr` was allocated by the global allocator with the layout of `n`
            // elements of `T`, all of which are initialised (zero bits are a valid `T`).
            Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
        }
        Some(match t {
            PrimType::Bool => ArrayData::Bool(zeros(n)?.into()),
            PrimType::I8 => ArrayData::I8(zeros(n)?.into()),
            PrimType::I16 => ArrayData::I16(zeros(n)?.into()),
            PrimType::I32 => ArrayData::I32(zeros(n)?.into()),
            PrimType::I64 => ArrayData::I64(zeros(n)?.into()),
            PrimType::U8 => ArrayData::U8(zeros(n)?.into()),
            PrimType::F32 => ArrayData::F32(zeros(n)?.into()),
            PrimType::F64 => ArrayData::F64(zeros(n)?.into()),
        })
    }

    /// The address of the first element (for compiled code; `bool`s are bytes holding 0 or 1).
    pub fn as_ptr(&self) -> *const u8 {
        match self {
            ArrayData::Bool(v) => v.as_ptr().cast(),
            ArrayData::I8(v) => v.as_ptr().cast(),
            ArrayData::I16(v) => v.as_ptr().cast(),
            ArrayData::I32(v) => v.as_ptr().cast(),
            ArrayData::I64(v) => v.as_ptr().cast(),
            ArrayData::U8(v) => v.as_ptr().cast(),
            ArrayData::F32(v) => v.as_ptr().cast(),
            ArrayData::F64(v) => v.as_ptr().cast(),
        }
    }

    /// The address of the first element, for writing.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            ArrayData::Bool(v) => v.as_mut_ptr().cast(),
            ArrayData::I8(v) => v.as_mut_ptr().cast(),
            ArrayData::I16(v) => v.as_mut_ptr().cast(),
            ArrayData::I32(v) => v.as_mut_ptr().cast(),
            ArrayData::I64(v) => v.as_mut_ptr().cast(),
            ArrayData::U8(v) => v.as_mut_ptr().cast(),
            ArrayData::F32(v) => v.as_mut_ptr().cast(),
            ArrayData::F64(v) => v.as_mut_ptr().cast(),
        }
    }

    /// An empty buffer of the given element type with room for `capacity` elements.
    pub fn with_capacity(t: PrimType, capacity: usize) -> ArrayData {
        match t {
            PrimType::Bool => ArrayData::Bool(Vec::with_capacity(capacity).into()),
            PrimType::I8 => ArrayData::I8(Vec::with_capacity(capacity).into()),
            PrimType::I16 => ArrayData::I16(Vec::with_capacity(capacity).into()),
            PrimType::I32 => ArrayData::I32(Vec::with_capacity(capacity).into()),
            PrimType::I64 => ArrayData::I64(Vec::with_capacity(capacity).into()),
            PrimType::U8 => ArrayData::U8(Vec::with_capacity(capacity).into()),
            PrimType::F32 => ArrayData::F32(Vec::with_capacity(capacity).into()),
            PrimType::F64 => ArrayData::F64(Vec::with_capacity(capacity).into()),
        }
    }

    /// Appends a scalar; `None` if its type differs from the buffer's.
    pub fn push(&mut self, s: Scalar) -> Option<()> {
        match (self, s) {
            (ArrayData::Bool(v), Scalar::Bool(x)) => v.make_mut().push(x),
            (ArrayData::I8(v), Scalar::I8(x)) => v.make_mut().push(x),
            (ArrayData::I16(v), Scalar::I16(x)) => v.make_mut().push(x),
            (ArrayData::I32(v), Scalar::I32(x)) => v.make_mut().push(x),
            (ArrayData::I64(v), Scalar::I64(x)) => v.make_mut().push(x),
            (ArrayData::U8(v), Scalar::U8(x)) => v.make_mut().push(x),
            (ArrayData::F32(v), Scalar::F32(x)) => v.make_mut().push(x),
            (ArrayData::F64(v), Scalar::F64(x)) => v.make_mut().push(x),
            _ => return None,
        }
        Some(())
    }
}

/// A multi-dimensional array of scalars: flat data plus shape (row-major).
/// Invariant: `data.len() == shape.iter().product()` and `shape` is non-empty.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    shape: Vec<usize>,
    data: ArrayData,
}

impl Array {
    /// `None` if the shape does not match the number of elements or is empty.
    pub fn new(shape: Vec<usize>, data: ArrayData) -> Option<Array> {
        (!shape.is_empty() && shape.iter().product::<usize>() == data.len())
            .then_some(Array { shape, data })
    }

    pub fn from_f32(shape: Vec<usize>, data: Vec<f32>) -> Option<Array> {
        Array::new(shape, ArrayData::F32(data.into()))
    }

    pub fn from_f64(shape: Vec<usize>, data: Vec<f64>) -> Option<Array> {
        Array::new(shape, ArrayData::F64(data.into()))
    }

    pub fn from_i64(shape: Vec<usize>, data: Vec<i64>) -> Option<Array> {
        Array::new(shape, ArrayData::I64(data.into()))
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn data(&self) -> &ArrayData {
        &self.data
    }

    pub fn into_parts(self) -> (Vec<usize>, ArrayData) {
        (self.shape, self.data)
    }

    pub fn elem_type(&self) -> PrimType {
        self.data.prim_type()
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Scalar {
            fn from(x: $t) -> Scalar {
                Scalar::$v(x)
            }
        }
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::Scalar(Scalar::$v(x))
            }
        }
    )*};
}

// `Value::from(46i64)`, `3.5f32.into()`: scalars convert by their Rust type.
scalar_from!(bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, f32 => F32, f64 => F64);

impl From<Scalar> for Value {
    fn from(s: Scalar) -> Value {
        Value::Scalar(s)
    }
}

impl From<Array> for Value {
    fn from(a: Array) -> Value {
        Value::Array(a)
    }
}

/// A value passed to or returned from an entry point.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(Scalar),
    Array(Array),
    /// Tuples, records (fields in sorted name order) and arrays of tuples (as tuples of arrays).
    Tuple(Vec<Value>),
}

impl Value {
    /// Brings every remote array of the value to the host and drops the mirrors (what the
    /// executors do to the values they return; [`crate::buffer`]).
    pub fn settle(&mut self) -> Result<(), String> {
        match self {
            Value::Scalar(_) => Ok(()),
            Value::Array(a) => a.data.settle(),
            Value::Tuple(vs) => vs.iter_mut().try_for_each(Value::settle),
        }
    }

    /// A short description of the value's type and shape, for error messages: `[3][4]f32`.
    pub fn describe(&self) -> String {
        match self {
            Value::Scalar(s) => s.prim_type().to_string(),
            Value::Array(a) => {
                let dims: String = a.shape().iter().map(|d| format!("[{d}]")).collect();
                format!("{dims}{}", a.elem_type())
            }
            Value::Tuple(vs) => {
                let parts: Vec<String> = vs.iter().map(Value::describe).collect();
                format!("({})", parts.join(", "))
            }
        }
    }
}

impl fmt::Display for Value {
    /// Futhark's textual value syntax (`[[1f32, 2f32], [3f32, 4f32]]`); empty arrays print as
    /// `empty([0][3]f32)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn nested(f: &mut fmt::Formatter<'_>, a: &Array, dim: usize, offset: usize) -> fmt::Result {
            let stride: usize = a.shape()[dim + 1..].iter().product();
            write!(f, "[")?;
            for i in 0..a.shape()[dim] {
                if i > 0 {
                    write!(f, ", ")?;
                }
                if dim + 1 == a.rank() {
                    write!(f, "{}", a.data().get(offset + i))?;
                } else {
                    nested(f, a, dim + 1, offset + i * stride)?;
                }
            }
            write!(f, "]")
        }
        match self {
            Value::Scalar(s) => write!(f, "{s}"),
            Value::Array(a) if a.is_empty() => write!(f, "empty({})", self.describe()),
            Value::Array(a) => nested(f, a, 0, 0),
            Value::Tuple(vs) => {
                write!(f, "(")?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, ")")
            }
        }
    }
}

/// Asks the OS to back the whole 2 MiB pages of a large buffer with transparent huge pages
/// (Linux `madvise(MADV_HUGEPAGE)`; a hint: failures are ignored).
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < 2 * HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + bytes) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside the caller's live allocation; the advice changes
            // no contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = ptr;
}
