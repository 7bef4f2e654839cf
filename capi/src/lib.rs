//! The C interface of the Ogham runtime (`include/ogham.h`, built as `libogham_c.so`): load a
//! library compiled by `ogham build` (a `.ogl` file, or an object file linked into the program)
//! and call its entry points on the CPU backend from C.
//!
//! Every function is `extern "C"` and never unwinds into C: errors (and panics, which would be
//! bugs) become a NULL return and a per-thread message (`ogham_last_error`). Arguments are
//! copied into runtime values; results are owned by an `ogham_results` handle until freed.
//! Invariants relied on: handles passed in were returned by this library and not freed yet;
//! `ogham_array`s describe `rank` extents and the row-major data they claim.

use ogham_ir::types::{PrimType, Type};
use ogham_runtime::cpu::aot::Image;
use ogham_runtime::library::Library;
use ogham_runtime::value::{Array, ArrayData, Value};
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;

/// `ogham_array`: a scalar (rank 0) or a row-major array.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct OghamArray {
    pub ty: i32,
    pub rank: i32,
    pub shape: *const i64,
    pub data: *mut c_void,
}

/// `ogham_library`.
pub struct OghamLibrary {
    library: Library,
    names: Vec<CString>,
}

/// `ogham_results`: the outputs (tuples spread), each as extents and elements.
pub struct OghamResults {
    outputs: Vec<(Vec<i64>, ArrayData)>,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(message: String) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs `f`, turning an error or a panic into NULL and the thread's last error.
fn guarded<T>(f: impl FnOnce() -> Result<Box<T>, String>) -> *mut T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Box::into_raw(value),
        Ok(Err(message)) => {
            set_error(message);
            std::ptr::null_mut()
        }
        Err(_) => {
            set_error("internal error in the Ogham runtime (a bug: please report it)".into());
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `s` is null or a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char, what: &str) -> Result<&'a str, String> {
    if s.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| format!("{what} is not UTF-8"))
}

/// Loads a compiled library; NULL on error.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_load(path: *const c_char) -> *mut OghamLibrary {
    guarded(|| {
        // SAFETY: the caller's contract.
        let path = unsafe { text(path, "the path") }?;
        Ok(handle(load(Path::new(path))?))
    })
}

/// The `.ogl` library at `path`, whose kernels the compiler's Cranelift backend JIT-compiles.
#[cfg(feature = "jit")]
fn load(path: &Path) -> Result<Library, String> {
    Library::load(path, ogham_codegen::cpu::CPU)
}

/// Without the JIT (no code generator in this library), a `.ogl` file cannot run: error R0713.
#[cfg(not(feature = "jit"))]
fn load(path: &Path) -> Result<Library, String> {
    Err(format!(
        "error[{}]: {} needs the JIT, which this runtime was built without (the `jit` \
         feature): it runs libraries compiled ahead of time (`ogham build FILE -o NAME.o`, \
         opened with `ogham_open_image`)",
        ogham_runtime::error::R_NO_JIT,
        path.display()
    ))
}

/// Opens a library compiled ahead of time (`ogham build FILE -o NAME.o`) and linked into the
/// program: `ogham_open_image(&NAME_image)`; NULL on error.
///
/// # Safety
/// `image` is null or the `<name>_image` symbol of such an object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_open_image(image: *const Image) -> *mut OghamLibrary {
    guarded(|| {
        // SAFETY: the caller's contract.
        let image = unsafe { image.as_ref() }.ok_or("the image is NULL")?;
        // SAFETY: the caller's contract; the object's code is part of the program.
        Ok(handle(unsafe { Library::from_image(image) }?))
    })
}

fn handle(library: Library) -> Box<OghamLibrary> {
    let names = library
        .entries()
        .map(|(name, _)| CString::new(name).expect("entry names have no NUL"))
        .collect();
    Box::new(OghamLibrary { library, names })
}

/// # Safety
/// `lib` is null or a library from `ogham_load` or `ogham_open_image`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_free(lib: *mut OghamLibrary) {
    if !lib.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(lib) });
    }
}

/// # Safety
/// `lib` is a live library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_entry_count(lib: *const OghamLibrary) -> usize {
    // SAFETY: the caller's contract.
    unsafe { lib.as_ref() }.map_or(0, |l| l.names.len())
}

/// # Safety
/// `lib` is a live library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_entry_name(lib: *const OghamLibrary, i: usize) -> *const c_char {
    // SAFETY: the caller's contract.
    unsafe { lib.as_ref() }
        .and_then(|l| l.names.get(i))
        .map_or(std::ptr::null(), |n| n.as_ptr())
}

fn prim_type(code: i32) -> Option<PrimType> {
    usize::try_from(code)
        .ok()
        .and_then(|i| PrimType::ALL.get(i).copied())
}

/// Copies `count` elements of type `t` from `data`.
///
/// # Safety
/// `data` holds `count` elements of `t`.
unsafe fn copy_data(t: PrimType, data: *const c_void, count: usize) -> ArrayData {
    // SAFETY: the caller's contract.
    unsafe fn slice<'a, T>(data: *const c_void, count: usize) -> &'a [T] {
        if count == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(data.cast::<T>(), count) }
        }
    }
    // SAFETY: the caller's contract; bools are bytes 0 or 1 (checked by the caller).
    unsafe {
        match t {
            PrimType::Bool => {
                ArrayData::Bool(slice::<u8>(data, count).iter().map(|b| *b != 0).collect())
            }
            PrimType::I8 => ArrayData::I8(slice(data, count).to_vec().into()),
            PrimType::I16 => ArrayData::I16(slice(data, count).to_vec().into()),
            PrimType::I32 => ArrayData::I32(slice(data, count).to_vec().into()),
            PrimType::I64 => ArrayData::I64(slice(data, count).to_vec().into()),
            PrimType::U8 => ArrayData::U8(slice(data, count).to_vec().into()),
            PrimType::F32 => ArrayData::F32(slice(data, count).to_vec().into()),
            PrimType::F64 => ArrayData::F64(slice(data, count).to_vec().into()),
        }
    }
}

/// The runtime value of argument `k`.
///
/// # Safety
/// `a` describes its data truthfully.
unsafe fn value(k: usize, a: &OghamArray) -> Result<Value, String> {
    let t = prim_type(a.ty).ok_or_else(|| format!("argument {k}: unknown type code {}", a.ty))?;
    let rank = usize::try_from(a.rank).map_err(|_| format!("argument {k}: negative rank"))?;
    if rank > 0 && a.shape.is_null() {
        return Err(format!("argument {k}: rank {rank} but no shape"));
    }
    let shape: Vec<i64> = if rank == 0 {
        Vec::new()
    } else {
        // SAFETY: the caller's contract: `shape` holds `rank` extents.
        unsafe { std::slice::from_raw_parts(a.shape, rank) }.to_vec()
    };
    let dims: Vec<usize> = shape
        .iter()
        .map(|d| usize::try_from(*d).map_err(|_| format!("argument {k}: negative extent {d}")))
        .collect::<Result<_, _>>()?;
    let count = dims
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(*d))
        .ok_or_else(|| format!("argument {k}: too many elements"))?;
    if count > 0 && a.data.is_null() {
        return Err(format!("argument {k}: no data"));
    }
    // SAFETY: the caller's contract.
    let data = unsafe { copy_data(t, a.data, count) };
    if rank == 0 {
        return Ok(Value::Scalar(data.get(0)));
    }
    Array::new(dims, data)
        .map(Value::Array)
        .ok_or_else(|| format!("argument {k}: the data does not fit the shape"))
}

fn spread(v: Value, out: &mut Vec<(Vec<i64>, ArrayData)>) {
    match v {
        Value::Tuple(vs) => vs.into_iter().for_each(|v| spread(v, out)),
        Value::Scalar(s) => {
            let mut data = ArrayData::with_capacity(s.prim_type(), 1);
            data.push(s).expect("the type matches");
            out.push((Vec::new(), data));
        }
        Value::Array(a) => {
            let (shape, data) = a.into_parts();
            out.push((shape.iter().map(|d| *d as i64).collect(), data));
        }
    }
}

/// Runs an entry point; NULL on error (see `ogham_last_error`).
///
/// # Safety
/// `lib` is a live library, `entry` a NUL-terminated string, `args` points to `nargs` arrays
/// that describe their data truthfully.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_call(
    lib: *mut OghamLibrary,
    entry: *const c_char,
    args: *const OghamArray,
    nargs: usize,
) -> *mut OghamResults {
    guarded(|| {
        // SAFETY: the caller's contract.
        let lib = unsafe { lib.as_ref() }.ok_or("the library is NULL")?;
        let entry = unsafe { text(entry, "the entry point's name") }?;
        let Some((_, signature)) = lib.library.entries().find(|(n, _)| *n == entry) else {
            let names: Vec<&str> = lib.library.entries().map(|(n, _)| n).collect();
            return Err(format!(
                "the library has no entry point `{entry}` (it has: {})",
                names.join(", ")
            ));
        };
        for (name, ty) in &signature.params {
            let mut t = ty;
            while let Type::Array(elem, _) = t {
                t = elem;
            }
            if !matches!(t, Type::Prim(_)) {
                return Err(format!(
                    "parameter `{name}` of `{entry}` is a tuple or record: the C interface \
                     passes scalars and arrays of scalars only"
                ));
            }
        }
        if nargs > 0 && args.is_null() {
            return Err("the arguments are NULL".into());
        }
        let args: &[OghamArray] = if nargs == 0 {
            &[]
        } else {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts(args, nargs) }
        };
        let values = args
            .iter()
            .enumerate()
            // SAFETY: the caller's contract.
            .map(|(k, a)| unsafe { value(k, a) })
            .collect::<Result<Vec<_>, _>>()?;
        let outputs = lib
            .library
            .call(entry, values)
            .map_err(|d| lib.library.render(&d))?;
        let mut spread_out = Vec::new();
        outputs.into_iter().for_each(|v| spread(v, &mut spread_out));
        Ok(Box::new(OghamResults {
            outputs: spread_out,
        }))
    })
}

/// # Safety
/// `results` is live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_results_count(results: *const OghamResults) -> usize {
    // SAFETY: the caller's contract.
    unsafe { results.as_ref() }.map_or(0, |r| r.outputs.len())
}

/// # Safety
/// `results` is live; the array is valid until it is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_result(results: *const OghamResults, i: usize) -> OghamArray {
    // SAFETY: the caller's contract.
    let Some((shape, data)) = unsafe { results.as_ref() }.and_then(|r| r.outputs.get(i)) else {
        return OghamArray {
            ty: -1,
            rank: -1,
            shape: std::ptr::null(),
            data: std::ptr::null_mut(),
        };
    };
    let ty = PrimType::ALL
        .iter()
        .position(|p| *p == data.prim_type())
        .expect("every type has a code") as i32;
    OghamArray {
        ty,
        rank: shape.len() as i32,
        shape: shape.as_ptr(),
        data: data.as_ptr().cast_mut().cast(),
    }
}

/// # Safety
/// `results` is null or live, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ogham_results_free(results: *mut OghamResults) {
    if !results.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(results) });
    }
}

/// The message of this thread's last failed call (empty if none).
#[unsafe(no_mangle)]
pub extern "C" fn ogham_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
