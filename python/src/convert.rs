//! Values between Python and Ogham: NumPy arrays and Python scalars to
//! `ogham_runtime::value::Value` for an entry point's parameter types, and results back.
//!
//! Rules (documented in docs/python.md):
//! - An array parameter takes a NumPy array of exactly its element type and rank (no silent
//!   casts: a float64 array for an f32 parameter is a `TypeError` that says
//!   `pass x.astype(np.float32)`); lists and tuples are converted with
//!   `numpy.asarray(x, dtype=<the parameter's>)`. Aligned C-contiguous arrays are passed
//!   without a copy (the runtime's buffer borrows the array's memory and keeps a reference to
//!   it; a program that writes to its argument writes to its own copy); others (views with
//!   strides, Fortran order) are copied element by element in row-major order; an array at an
//!   address not aligned for its element type is copied by NumPy first.
//! - Sizes: the sizes named in the parameters' types (`[m][N]`) must agree between arguments,
//!   constant sizes must match (`ValueError` naming both parameters).
//! - Scalars: `bool` parameters take `bool`/`numpy.bool_` only; integer parameters take Python
//!   or NumPy integers in range (not `bool`, not floats); float parameters take any real number
//!   (not `bool`), rounded to f32 for f32 parameters.
//! - Tuples and records: a Python tuple of the components (records: fields in name order, or a
//!   dict by field name); arrays of tuples are tuples of arrays (the runtime's convention).
//! - Results: arrays become NumPy arrays that own the runtime's buffer (no copy; a result that
//!   is a borrowed argument is copied, so results never alias arguments), scalars Python
//!   scalars, tuples Python tuples.

use numpy::{
    Element, PyArray1, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods, dtype,
};
use ogham::ir::types::{PrimType, Size, Type};
use ogham::results::{components, dims_of};
use ogham::runtime::value::{Array, ArrayData, Buffer, Scalar, Value};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};
use std::collections::HashMap;
use std::sync::Arc;

/// The sizes bound so far in one call: size name -> (value, which argument and dimension).
pub type Sizes = HashMap<String, (usize, String)>;

/// Where an argument goes, for messages: `main(): parameter `images``.
pub struct Param<'a> {
    pub entry: &'a str,
    pub name: &'a str,
}

impl Param<'_> {
    fn what(&self) -> String {
        format!("{}(): parameter `{}`", self.entry, self.name)
    }
}

/// Converts argument `obj` for a parameter of type `ty`.
pub fn to_value(
    obj: &Bound<'_, PyAny>,
    ty: &Type,
    param: &Param,
    sizes: &mut Sizes,
) -> PyResult<Value> {
    if let Some(parts) = components(ty) {
        return to_tuple(obj, ty, &parts, param, sizes);
    }
    match dims_of(ty) {
        (dims, Type::Prim(p)) if dims.is_empty() => Ok(Value::Scalar(to_scalar(obj, *p, param)?)),
        (dims, Type::Prim(p)) => to_array(obj, ty, &dims, *p, param, sizes).map(Value::Array),
        _ => Err(PyTypeError::new_err(format!(
            "{}: parameters of type {ty} cannot be passed from Python",
            param.what()
        ))),
    }
}

fn to_tuple(
    obj: &Bound<'_, PyAny>,
    ty: &Type,
    parts: &[Type],
    param: &Param,
    sizes: &mut Sizes,
) -> PyResult<Value> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(d) = obj.cast::<PyDict>()
        && let (_, Type::Record(fields)) = dims_of(ty)
    {
        fields
            .iter()
            .map(|(name, _)| {
                d.get_item(name)?.ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "{}: expects {ty}; the dict has no field `{name}`",
                        param.what()
                    ))
                })
            })
            .collect::<PyResult<_>>()?
    } else if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().collect()
    } else {
        return Err(PyTypeError::new_err(format!(
            "{}: expects {ty}, given {}: pass a tuple of its {} components{}",
            param.what(),
            type_name(obj),
            parts.len(),
            if matches!(ty, Type::Array(..)) {
                " (an array of tuples is passed as a tuple of arrays)"
            } else {
                ""
            }
        )));
    };
    if items.len() != parts.len() {
        return Err(PyValueError::new_err(format!(
            "{}: expects {ty}, a tuple of {} components; given {}",
            param.what(),
            parts.len(),
            items.len()
        )));
    }
    let values = items
        .iter()
        .zip(parts)
        .map(|(item, t)| to_value(item, t, param, sizes))
        .collect::<PyResult<_>>()?;
    Ok(Value::Tuple(values))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "a value".to_string(), |n| format!("a `{n}`"))
}

fn to_scalar(obj: &Bound<'_, PyAny>, p: PrimType, param: &Param) -> PyResult<Scalar> {
    let is_bool = obj.is_instance_of::<PyBool>();
    let wrong = |fix: &str| {
        PyTypeError::new_err(format!(
            "{}: expects {p}, given {} ({}): {fix}",
            param.what(),
            type_name(obj),
            obj.repr()
                .map_or_else(|_| "?".to_string(), |r| r.to_string())
        ))
    };
    let int = || -> PyResult<i64> {
        if is_bool {
            return Err(wrong("pass an int"));
        }
        obj.extract::<i64>()
            .map_err(|_| wrong("pass an int (e.g. `int(x)`)"))
    };
    let range =
        |v: i64| PyValueError::new_err(format!("{}: {v} is out of the range of {p}", param.what()));
    Ok(match p {
        PrimType::Bool => Scalar::Bool(
            obj.extract::<bool>()
                .map_err(|_| wrong("pass True or False"))?,
        ),
        PrimType::I8 => {
            let v = int()?;
            Scalar::I8(v.try_into().map_err(|_| range(v))?)
        }
        PrimType::I16 => {
            let v = int()?;
            Scalar::I16(v.try_into().map_err(|_| range(v))?)
        }
        PrimType::I32 => {
            let v = int()?;
            Scalar::I32(v.try_into().map_err(|_| range(v))?)
        }
        PrimType::I64 => Scalar::I64(int()?),
        PrimType::U8 => {
            let v = int()?;
            Scalar::U8(v.try_into().map_err(|_| range(v))?)
        }
        PrimType::F32 | PrimType::F64 => {
            if is_bool {
                return Err(wrong("pass a number"));
            }
            let v = obj
                .extract::<f64>()
                .map_err(|_| wrong("pass a number (e.g. `float(x)`)"))?;
            if p == PrimType::F32 {
                Scalar::F32(v as f32)
            } else {
                Scalar::F64(v)
            }
        }
    })
}

fn to_array(
    obj: &Bound<'_, PyAny>,
    ty: &Type,
    dims: &[&Size],
    p: PrimType,
    param: &Param,
    sizes: &mut Sizes,
) -> PyResult<Array> {
    let py = obj.py();
    let converted;
    let arr = match obj.cast::<PyUntypedArray>() {
        Ok(a) => a,
        Err(_) if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() => {
            let numpy = py.import("numpy")?;
            converted = numpy
                .call_method1("asarray", (obj, p.numpy_name()))
                .map_err(|e| {
                    PyTypeError::new_err(format!(
                        "{}: expects {ty}; the list cannot be converted to {}: {e}",
                        param.what(),
                        p.numpy_name()
                    ))
                })?;
            converted.cast::<PyUntypedArray>()?
        }
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "{}: expects {ty}, given {}: pass a NumPy array of dtype {}",
                param.what(),
                type_name(obj),
                p.numpy_name()
            )));
        }
    };
    let shape = arr.shape().to_vec();
    let given = arr.dtype();
    if !given.is_equiv_to(&prim_dtype(py, p)) {
        return Err(PyTypeError::new_err(format!(
            "{}: expects {ty}, given a {} array of shape {}: pass `{}.astype(np.{})`",
            param.what(),
            given,
            py_shape(&shape),
            param.name,
            p.numpy_name()
        )));
    }
    if shape.len() != dims.len() {
        return Err(PyValueError::new_err(format!(
            "{}: expects {ty} ({}), given an array of shape {} ({}){}",
            param.what(),
            dimensions(dims.len()),
            py_shape(&shape),
            dimensions(shape.len()),
            if shape.len() + 1 == dims.len() {
                format!("; for a single one, pass `{}[np.newaxis]`", param.name)
            } else {
                String::new()
            }
        )));
    }
    for (axis, (size, &n)) in dims.iter().zip(&shape).enumerate() {
        let here = format!("dimension {axis} of `{}`", param.name);
        match size {
            Size::Const(c) if *c as usize != n => {
                return Err(PyValueError::new_err(format!(
                    "{}: expects {ty}, given shape {}: {here} must be {c}",
                    param.what(),
                    py_shape(&shape)
                )));
            }
            Size::Var(v) => match sizes.get(v) {
                Some((bound, from)) if *bound != n => {
                    return Err(PyValueError::new_err(format!(
                        "{}: expects {ty} with {v} = {bound} (the size of {from}), given shape \
                         {}",
                        param.what(),
                        py_shape(&shape)
                    )));
                }
                Some(_) => {}
                None => {
                    sizes.insert(v.clone(), (n, here));
                }
            },
            _ => {}
        }
    }
    let data = match p {
        PrimType::Bool => ArrayData::Bool(bools(arr, param)?),
        PrimType::I8 => ArrayData::I8(elements(arr)?),
        PrimType::I16 => ArrayData::I16(elements(arr)?),
        PrimType::I32 => ArrayData::I32(elements(arr)?),
        PrimType::I64 => ArrayData::I64(elements(arr)?),
        PrimType::U8 => ArrayData::U8(elements(arr)?),
        PrimType::F32 => ArrayData::F32(elements(arr)?),
        PrimType::F64 => ArrayData::F64(elements(arr)?),
    };
    Array::new(shape, data).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{}: a 0-dimensional array cannot be an array argument",
            param.what()
        ))
    })
}

fn prim_dtype(py: Python<'_>, p: PrimType) -> Bound<'_, numpy::PyArrayDescr> {
    match p {
        PrimType::Bool => dtype::<bool>(py),
        PrimType::I8 => dtype::<i8>(py),
        PrimType::I16 => dtype::<i16>(py),
        PrimType::I32 => dtype::<i32>(py),
        PrimType::I64 => dtype::<i64>(py),
        PrimType::U8 => dtype::<u8>(py),
        PrimType::F32 => dtype::<f32>(py),
        PrimType::F64 => dtype::<f64>(py),
    }
}

/// The elements of an array whose dtype is `T`'s, row-major: an aligned C-contiguous array is
/// borrowed without a copy (the buffer keeps a reference to it and copies only if the program
/// writes to it); others are copied.
fn elements<T: Element + Copy + Send + Sync + 'static>(
    arr: &Bound<'_, PyUntypedArray>,
) -> PyResult<Buffer<T>> {
    if !arr.is_aligned() {
        // A buffer at an odd address (pickle protocol 5 hands such arrays to dask workers):
        // NumPy's copy is aligned.
        return elements(arr.call_method0("copy")?.cast::<PyUntypedArray>()?);
    }
    let arr = arr.cast::<PyArrayDyn<T>>()?;
    let view = arr.try_readonly()?;
    // `as_slice` also accepts Fortran order, whose memory order is not row-major.
    Ok(match view.as_slice() {
        Ok(slice) if arr.is_c_contiguous() => {
            let owner: Arc<dyn Send + Sync> = Arc::new(arr.clone().unbind());
            // SAFETY: `slice` is the array's aligned, initialised elements; `owner` holds a
            // reference to the array, which keeps its memory alive; callers must not write to
            // the array while a call that reads it runs (docs/python.md).
            unsafe { Buffer::borrowed(slice.as_ptr(), slice.len(), owner) }
        }
        _ => {
            let elements = view.as_array();
            let mut copy = try_vec(elements.len())?;
            copy.extend(elements.iter().copied());
            copy.into()
        }
    })
}

/// The elements of a bool array, row-major, checked: NumPy keeps a `bool` in a byte and does
/// not stop other byte values getting there (`np.frombuffer(..., np.uint8).view(bool)`), which
/// are not Rust `bool`s. So the bytes are read as `u8` and any value but 0 or 1 is a
/// `ValueError` naming the element, as in a `.npy` file (`ogham_runtime::npy`); always a copy.
fn bools(arr: &Bound<'_, PyUntypedArray>, param: &Param) -> PyResult<Buffer<bool>> {
    let bytes = arr.call_method1("view", ("uint8",))?;
    let bytes = bytes.cast::<PyArrayDyn<u8>>()?.try_readonly()?;
    let bytes = bytes.as_array();
    let mut out = try_vec(bytes.len())?;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            0 | 1 => out.push(b == 1),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{}: boolean element {i} (row-major) has byte value {b}, which is neither \
                     False (0) nor True (1): pass `{} != 0`",
                    param.what(),
                    param.name
                )));
            }
        }
    }
    Ok(out.into())
}

/// An empty vector with room for `n` elements, or a `MemoryError` when that memory cannot be
/// had (a copy is never an abort of the process).
pub fn try_vec<T>(n: usize) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        PyMemoryError::new_err(format!(
            "out of memory: cannot allocate a copy of {n} elements of {} bytes",
            size_of::<T>()
        ))
    })?;
    Ok(v)
}

/// `1 dimension`, `2 dimensions`.
fn dimensions(n: usize) -> String {
    format!("{n} dimension{}", if n == 1 { "" } else { "s" })
}

/// A shape as Python prints it: `(3, 4)`, `(5,)`.
pub fn py_shape(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A result as a Python object (arrays without copying their data).
pub fn to_py(py: Python<'_>, value: Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Scalar(s) => match s {
            Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
            Scalar::I8(x) => x.into_pyobject(py)?.into_any().unbind(),
            Scalar::I16(x) => x.into_pyobject(py)?.into_any().unbind(),
            Scalar::I32(x) => x.into_pyobject(py)?.into_any().unbind(),
            Scalar::I64(x) => x.into_pyobject(py)?.into_any().unbind(),
            Scalar::U8(x) => x.into_pyobject(py)?.into_any().unbind(),
            Scalar::F32(x) => (x as f64).into_pyobject(py)?.into_any().unbind(),
            Scalar::F64(x) => x.into_pyobject(py)?.into_any().unbind(),
        },
        Value::Array(a) => {
            let (shape, data) = a.into_parts();
            match data {
                ArrayData::Bool(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::I8(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::I16(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::I32(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::I64(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::U8(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::F32(v) => numpy_array(py, owned(v)?, &shape)?,
                ArrayData::F64(v) => numpy_array(py, owned(v)?, &shape)?,
            }
        }
        Value::Tuple(vs) => {
            let items = vs
                .into_iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any().unbind()
        }
    })
}

/// The elements of a result as a vector: its own (no copy), or a copy of a borrowed argument
/// (`MemoryError` when the copy cannot be allocated).
fn owned<T: Copy>(buffer: Buffer<T>) -> PyResult<Vec<T>> {
    if !buffer.is_borrowed() {
        return Ok(buffer.into_vec());
    }
    let mut copy = try_vec(buffer.len())?;
    copy.extend_from_slice(&buffer);
    Ok(copy)
}

/// A NumPy array owning `data` (moved, not copied), viewed with `shape`.
fn numpy_array<T: Element>(py: Python<'_>, data: Vec<T>, shape: &[usize]) -> PyResult<Py<PyAny>> {
    let flat = PyArray1::from_vec(py, data);
    Ok(if shape.len() == 1 {
        flat.into_any().unbind()
    } else {
        flat.reshape(shape.to_vec())?.into_any().unbind()
    })
}
