//! Reading and writing NumPy `.npy` files.
//!
//! Supported: format versions 1.0, 2.0 and 3.0; C (row-major) order; the little-endian element
//! types `<f4 <f8 |i1 <i2 <i4 <i8 |u1 |b1` (one-byte types may also be written with `<`).
//! A 0-d array is a scalar. Fortran order, big-endian data, other element types, truncated or
//! oversized data and booleans other than 0/1 are errors that name the file and say what is
//! wrong. Files are written as version 1.0 (2.0 when the header needs it), the way
//! `numpy.save` writes them. Large files are mapped into memory rather than read ([`read`],
//! [`MAP_AT_LEAST`]): their numeric elements are used in place, without a copy.

use crate::buffer::Buffer;
use crate::value::{Array, ArrayData, Value};
use ogham_ir::types::PrimType;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: &[u8] = b"\x93NUMPY";

/// An error reading or writing a `.npy` file.
#[derive(Debug)]
pub struct NpyError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for NpyError {}

/// Reads a `.npy` file: an array, or a scalar for a 0-d array.
///
/// A regular file of [`MAP_AT_LEAST`] bytes or more is mapped into memory instead of read (see
/// [`Mapped`]): the elements of a little-endian numeric array are then used where they lie, without
/// a copy; other files, and files that cannot be mapped, are read whole.
pub fn read(path: &Path) -> Result<Value, NpyError> {
    let err = |message: String| NpyError {
        path: path.to_path_buf(),
        message,
    };
    let cannot_read = |e: std::io::Error| err(format!("cannot read: {e}"));
    let mut file = File::open(path).map_err(cannot_read)?;
    if let Some(mapped) = Mapped::of(&file) {
        return decode_mapped(mapped).map_err(err);
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(cannot_read)?;
    decode(&bytes).map_err(err)
}

/// Writes a scalar (as a 0-d array) or an array to a `.npy` file.
pub fn write(path: &Path, value: &Value) -> Result<(), NpyError> {
    let err = |message: String| NpyError {
        path: path.to_path_buf(),
        message,
    };
    let bytes = encode(value).map_err(err)?;
    std::fs::write(path, bytes).map_err(|e| err(format!("cannot write: {e}")))
}

/// Decodes the contents of a `.npy` file.
pub fn decode(bytes: &[u8]) -> Result<Value, String> {
    let layout = layout(bytes)?;
    let data = decode_data(layout.elem, &bytes[layout.data_start..])?;
    layout.value(data)
}

/// What the header of a `.npy` file says about its data, checked against the file's size.
struct Layout {
    elem: PrimType,
    shape: Vec<usize>,
    /// The offset of the first element in the file.
    data_start: usize,
}

impl Layout {
    /// The number of elements.
    fn count(&self) -> usize {
        self.shape.iter().product()
    }

    /// The file's value, given its elements.
    fn value(self, data: ArrayData) -> Result<Value, String> {
        if self.shape.is_empty() {
            return Ok(Value::Scalar(data.get(0)));
        }
        Array::new(self.shape, data)
            .map(Value::Array)
            .ok_or_else(|| "the data does not match the shape".to_string())
    }
}

/// Parses the header of the `.npy` file `bytes` and checks that the data that follows it has
/// the size the header says.
fn layout(bytes: &[u8]) -> Result<Layout, String> {
    if bytes.len() < 8 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (it does not start with \\x93NUMPY)".to_string());
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len_bytes, utf8) = match major {
        1 => (2, false),
        2 => (4, false),
        3 => (4, true),
        _ => {
            return Err(format!(
                ".npy format version {major}.{minor} is not supported (only 1.0, 2.0, 3.0)"
            ));
        }
    };
    let truncated = || "the file is truncated in its header".to_string();
    let len_field = bytes.get(8..8 + len_bytes).ok_or_else(truncated)?;
    let header_len = len_field
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | b as usize);
    let data_start = 8 + len_bytes + header_len;
    let header = bytes.get(8 + len_bytes..data_start).ok_or_else(truncated)?;
    let header = match std::str::from_utf8(header) {
        Ok(h) if utf8 || h.is_ascii() => h,
        _ => return Err("the header is not valid text".to_string()),
    };
    let Header {
        descr,
        fortran_order,
        shape,
    } = parse_header(header)?;
    if fortran_order {
        return Err(
            "Fortran-order (column-major) arrays are not supported; save with C order \
                    (numpy.ascontiguousarray)"
                .to_string(),
        );
    }
    let elem = element_type(&descr)?;
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or("the shape is too large")?;
    let data = &bytes[data_start..];
    let expected = count
        .checked_mul(elem.byte_size())
        .ok_or("the shape is too large")?;
    if data.len() != expected {
        return Err(format!(
            "shape {shape:?} of {descr} needs {expected} bytes of data, but the file has {}",
            data.len()
        ));
    }
    Ok(Layout {
        elem,
        shape,
        data_start,
    })
}

/// Encodes a scalar (as a 0-d array) or an array as the contents of a `.npy` file.
pub fn encode(value: &Value) -> Result<Vec<u8>, String> {
    let scalar;
    let (shape, data): (&[usize], &ArrayData) = match value {
        Value::Scalar(s) => {
            let mut data = ArrayData::with_capacity(s.prim_type(), 1);
            data.push(*s).expect("a buffer of the scalar's own type");
            scalar = data;
            (&[], &scalar)
        }
        Value::Array(a) => (a.shape(), a.data()),
        Value::Tuple(_) => {
            return Err(format!(
                "a tuple ({}) cannot be stored in one .npy file",
                value.describe()
            ));
        }
    };
    let shape_text = match shape {
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}",
        descr(data.prim_type())
    );
    // Pad with spaces and a final newline so the data starts on a 64-byte boundary.
    let fixed = if header.len() + 11 <= u16::MAX as usize {
        10
    } else {
        12
    };
    let padded = (fixed + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(padded - fixed - header.len() - 1));
    header.push('\n');
    let mut out =
        Vec::with_capacity(fixed + header.len() + data.len() * data.prim_type().byte_size());
    out.extend(MAGIC);
    if fixed == 10 {
        out.extend([1, 0]);
        out.extend((header.len() as u16).to_le_bytes());
    } else {
        out.extend([2, 0]);
        out.extend((header.len() as u32).to_le_bytes());
    }
    out.extend(header.as_bytes());
    encode_data(data, &mut out);
    Ok(out)
}

/// The NumPy type string of an element type.
fn descr(t: PrimType) -> &'static str {
    match t {
        PrimType::Bool => "|b1",
        PrimType::I8 => "|i1",
        PrimType::I16 => "<i2",
        PrimType::I32 => "<i4",
        PrimType::I64 => "<i8",
        PrimType::U8 => "|u1",
        PrimType::F32 => "<f4",
        PrimType::F64 => "<f8",
    }
}

fn element_type(descr: &str) -> Result<PrimType, String> {
    // Byte-order marks are ASCII; a non-ASCII first character (a v3 header is UTF-8) is no
    // byte order.
    let one_byte = |s: &str| descr.strip_prefix(['|', '<']) == Some(s);
    Ok(match descr {
        _ if one_byte("b1") => PrimType::Bool,
        _ if one_byte("i1") => PrimType::I8,
        _ if one_byte("u1") => PrimType::U8,
        "<i2" => PrimType::I16,
        "<i4" => PrimType::I32,
        "<i8" => PrimType::I64,
        "<f4" => PrimType::F32,
        "<f8" => PrimType::F64,
        _ if descr.starts_with('>') => {
            return Err(format!(
                "big-endian data ({descr}) is not supported; convert it with arr.astype(arr.dtype.newbyteorder('<'))"
            ));
        }
        _ => {
            return Err(format!(
                "element type {descr} is not supported (supported: <f4 <f8 |i1 <i2 <i4 <i8 |u1 |b1)"
            ));
        }
    })
}

fn decode_data(t: PrimType, bytes: &[u8]) -> Result<ArrayData, String> {
    macro_rules! le {
        ($ty:ty, $variant:ident) => {
            ArrayData::$variant(
                bytes
                    .chunks_exact(size_of::<$ty>())
                    .map(|c| {
                        <$ty>::from_le_bytes(c.try_into().expect("chunk of the element's size"))
                    })
                    .collect(),
            )
        };
    }
    Ok(match t {
        PrimType::Bool => ArrayData::Bool(
            bytes
                .iter()
                .enumerate()
                .map(|(i, &b)| match b {
                    0 | 1 => Ok(b == 1),
                    _ => Err(format!(
                        "boolean element {i} has byte value {b} (must be 0 or 1)"
                    )),
                })
                .collect::<Result<_, _>>()?,
        ),
        PrimType::I8 => le!(i8, I8),
        PrimType::I16 => le!(i16, I16),
        PrimType::I32 => le!(i32, I32),
        PrimType::I64 => le!(i64, I64),
        PrimType::U8 => ArrayData::U8(bytes.to_vec().into()),
        PrimType::F32 => le!(f32, F32),
        PrimType::F64 => le!(f64, F64),
    })
}

/// Files of this many bytes or more are mapped into memory rather than read ([`read`]).
pub const MAP_AT_LEAST: u64 = 1 << 20;

/// A file mapped read-only into memory, its pages read in at once (Linux `MAP_POPULATE`);
/// unmapped when dropped.
///
/// Mapping a large `.npy` file and using its elements where they lie saves two passes over the
/// data that reading it takes (the OS zeroing fresh memory, then copying the file into it) and
/// the memory of a copy. The elements are those of the file as it is while the program runs:
/// the contract of [`Buffer::borrowed`] asks that nobody changes the file meanwhile (a file
/// truncated under the mapping ends the process with a bus error, as for any program that maps
/// its input).
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value; it is unmapped once, on drop.
unsafe impl Send for Mapped {}
// SAFETY: as above; `&Mapped` only reads the memory.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// `file` mapped, when it is a regular file of at least [`MAP_AT_LEAST`] bytes that can be
    /// mapped; `None` otherwise (it is then read).
    fn of(file: &File) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() < MAP_AT_LEAST {
            return None;
        }
        let len = usize::try_from(meta.len()).ok()?;
        #[cfg(target_os = "linux")]
        let flags = libc::MAP_PRIVATE | libc::MAP_POPULATE;
        #[cfg(not(target_os = "linux"))]
        let flags = libc::MAP_PRIVATE;
        // SAFETY: a new read-only mapping of `len` bytes of an open file, at an address the
        // OS chooses; nothing else refers to it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                flags,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mapped { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` readable bytes while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `of`, unmapped once; every buffer borrowing it holds an
        // `Arc` to `self`, so none is left.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// Decodes a mapped `.npy` file: the elements of a little-endian numeric array, aligned for
/// their type, stay in the mapping (a [`Buffer::borrowed`] that keeps it alive); booleans (which
/// are checked) and unaligned data are copied out as [`decode`] does.
fn decode_mapped(mapped: Mapped) -> Result<Value, String> {
    let mapped = Arc::new(mapped);
    let layout = layout(mapped.bytes())?;
    let data = &mapped.bytes()[layout.data_start..];
    // Every element type's alignment divides its size.
    let in_place =
        cfg!(target_endian = "little") && data.as_ptr().align_offset(layout.elem.byte_size()) == 0;
    let count = layout.count();
    macro_rules! borrow {
        ($variant:ident) => {
            if in_place {
                let owner: Arc<dyn Send + Sync> = mapped.clone();
                // SAFETY: the data holds `count` elements (`layout` checked its size), aligned
                // and in the machine's byte order; every bit pattern is a valid element; `owner`
                // keeps the mapping alive and the file is not changed while the program runs
                // (see `Mapped`).
                ArrayData::$variant(unsafe { Buffer::borrowed(data.as_ptr().cast(), count, owner) })
            } else {
                decode_data(layout.elem, data)?
            }
        };
    }
    let data = match layout.elem {
        PrimType::Bool => decode_data(PrimType::Bool, data)?,
        PrimType::I8 => borrow!(I8),
        PrimType::I16 => borrow!(I16),
        PrimType::I32 => borrow!(I32),
        PrimType::I64 => borrow!(I64),
        PrimType::U8 => borrow!(U8),
        PrimType::F32 => borrow!(F32),
        PrimType::F64 => borrow!(F64),
    };
    layout.value(data)
}

fn encode_data(data: &ArrayData, out: &mut Vec<u8>) {
    match data {
        ArrayData::Bool(v) => out.extend(v.iter().map(|&b| b as u8)),
        ArrayData::I8(v) => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        ArrayData::I16(v) => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        ArrayData::I32(v) => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        ArrayData::I64(v) => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        ArrayData::U8(v) => out.extend_from_slice(v),
        ArrayData::F32(v) => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
        ArrayData::F64(v) => out.extend(v.iter().flat_map(|x| x.to_le_bytes())),
    }
}

/// The fields of a `.npy` header.
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Parses the header, a Python dict literal such as
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_header(text: &str) -> Result<Header, String> {
    let bad = |what: &str| format!("malformed header ({what}): {}", text.trim_end());
    let mut rest = text
        .trim()
        .strip_prefix('{')
        .ok_or_else(|| bad("no `{`"))?
        .trim_start();
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    while !rest.starts_with('}') {
        let (key, after) = python_string(rest).ok_or_else(|| bad("expected a quoted key"))?;
        rest = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| bad("expected `:`"))?
            .trim_start();
        match key.as_str() {
            "descr" => {
                let (d, after) =
                    python_string(rest).ok_or_else(|| bad("descr must be a string"))?;
                descr = Some(d);
                rest = after;
            }
            "fortran_order" => {
                let (b, after) = if let Some(after) = rest.strip_prefix("True") {
                    (true, after)
                } else if let Some(after) = rest.strip_prefix("False") {
                    (false, after)
                } else {
                    return Err(bad("fortran_order must be True or False"));
                };
                fortran_order = Some(b);
                rest = after;
            }
            "shape" => {
                let inner = rest
                    .strip_prefix('(')
                    .ok_or_else(|| bad("shape must be a tuple"))?;
                let close = inner.find(')').ok_or_else(|| bad("unterminated shape"))?;
                let dims = inner[..close]
                    .split(',')
                    .map(|d| d.trim().trim_end_matches('L'))
                    .filter(|d| !d.is_empty())
                    .map(|d| {
                        d.parse::<usize>()
                            .map_err(|_| bad("sizes must be integers"))
                    })
                    .collect::<Result<_, _>>()?;
                shape = Some(dims);
                rest = &inner[close + 1..];
            }
            other => return Err(bad(&format!("unknown key `{other}`"))),
        }
        rest = rest.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    match (descr, fortran_order, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(Header {
            descr,
            fortran_order,
            shape,
        }),
        _ => Err(bad("it needs descr, fortran_order and shape")),
    }
}

/// A single- or double-quoted string at the start of `s`, and the text after it.
fn python_string(s: &str) -> Option<(String, &str)> {
    let quote = s.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let end = s[1..].find(quote)? + 1;
    Some((s[1..end].to_string(), &s[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Scalar;

    fn round_trip(v: Value) {
        let bytes = encode(&v).unwrap();
        assert_eq!(&bytes[..6], MAGIC);
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0, "data is 64-byte aligned");
        assert_eq!(decode(&bytes).unwrap(), v);
    }

    #[test]
    fn round_trips() {
        round_trip(Value::Array(
            Array::from_f32(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, -6.5]).unwrap(),
        ));
        round_trip(Value::Array(Array::from_f64(vec![0, 3], vec![]).unwrap()));
        round_trip(Value::Array(
            Array::from_i64(vec![3], vec![i64::MIN, 0, i64::MAX]).unwrap(),
        ));
        round_trip(Value::Array(
            Array::new(vec![2], ArrayData::Bool(vec![true, false].into())).unwrap(),
        ));
        round_trip(Value::Array(
            Array::new(vec![1, 1, 2], ArrayData::I8(vec![-1, 1].into())).unwrap(),
        ));
        round_trip(Value::Array(
            Array::new(vec![2], ArrayData::I16(vec![-300, 300].into())).unwrap(),
        ));
        round_trip(Value::Array(
            Array::new(vec![2], ArrayData::U8(vec![0, 255].into())).unwrap(),
        ));
        round_trip(Value::Array(
            Array::new(vec![1], ArrayData::I32(vec![7].into())).unwrap(),
        ));
        round_trip(Value::Scalar(Scalar::F64(2.5)));
        round_trip(Value::Scalar(Scalar::Bool(true)));
    }

    #[test]
    fn header_format_matches_numpy() {
        let v = Value::Array(Array::from_f32(vec![3], vec![0.0; 3]).unwrap());
        let bytes = encode(&v).unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!(
            10 + header_len,
            128,
            "numpy's header size for a small array"
        );
        let header = std::str::from_utf8(&bytes[10..128]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
        assert!(header.ends_with(" \n"));
    }

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend([1, 0]);
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn versions_2_and_3_and_double_quotes() {
        let header = "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}\n";
        for version in [2u8, 3] {
            let mut bytes = MAGIC.to_vec();
            bytes.extend([version, 0]);
            bytes.extend((header.len() as u32).to_le_bytes());
            bytes.extend(header.as_bytes());
            bytes.extend([1, 0, 0, 0, 2, 0, 0, 0]);
            let expected = Array::new(vec![2], ArrayData::I32(vec![1, 2].into())).unwrap();
            assert_eq!(decode(&bytes).unwrap(), Value::Array(expected));
        }
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let h = |descr: &str, fortran: &str, shape: &str| {
            format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}\n")
        };
        let err = |bytes: Vec<u8>| decode(&bytes).unwrap_err();
        assert!(err(file(&h("<f4", "True", "(2, 2)"), &[0; 16])).contains("Fortran-order"));
        assert!(err(file(&h(">f4", "False", "(1,)"), &[0; 4])).contains("big-endian"));
        assert!(
            err(file(&h("<c8", "False", "(1,)"), &[0; 8]))
                .contains("element type <c8 is not supported")
        );
        assert_eq!(
            err(file(&h("<f4", "False", "(3,)"), &[0; 8])),
            "shape [3] of <f4 needs 12 bytes of data, but the file has 8"
        );
        assert!(err(file(&h("|b1", "False", "(1,)"), &[2])).contains("byte value 2"));
        assert!(err(b"hello".to_vec()).contains("not a .npy file"));
        assert!(
            err(file("{'descr': '<f4'}", &[])).contains("needs descr, fortran_order and shape")
        );
        let e = read(Path::new("/nonexistent/x.npy"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/x.npy: cannot read"), "{e}");
    }

    #[test]
    fn non_ascii_dtype_in_a_version_3_header() {
        for descr in ["é4", "<é", "€", "|€x"] {
            let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (1,)}}\n");
            let mut bytes = MAGIC.to_vec();
            bytes.extend([3, 0]);
            bytes.extend((header.len() as u32).to_le_bytes());
            bytes.extend(header.as_bytes());
            bytes.extend([0; 4]);
            let e = decode(&bytes).unwrap_err();
            assert!(e.contains("is not supported"), "{descr}: {e}");
        }
    }

    /// A file of its own in the temporary directory, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> TempFile {
            let path =
                std::env::temp_dir().join(format!("ogham-npy-{name}-{}.npy", std::process::id()));
            std::fs::write(&path, bytes).unwrap();
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn borrowed(v: &Value) -> bool {
        match v {
            Value::Array(a) => match a.data() {
                ArrayData::Bool(b) => b.is_borrowed(),
                ArrayData::I32(b) => b.is_borrowed(),
                ArrayData::F32(b) => b.is_borrowed(),
                ArrayData::F64(b) => b.is_borrowed(),
                other => panic!("unexpected {other:?}"),
            },
            _ => false,
        }
    }

    /// Large files are mapped: their numeric elements are used in place, booleans copied (and
    /// checked); small files are read. Either way the value is the file's.
    #[test]
    fn large_files_are_mapped_and_used_in_place() {
        let n = MAP_AT_LEAST as usize / 4 + 1;
        let f32s =
            Value::Array(Array::from_f32(vec![n], (0..n).map(|i| i as f32).collect()).unwrap());
        let f64s = Value::Array(
            Array::from_f64(
                vec![2, n / 2],
                (0..n / 2 * 2).map(|i| -(i as f64)).collect(),
            )
            .unwrap(),
        );
        let bools = Value::Array(
            Array::new(
                vec![4 * n],
                ArrayData::Bool((0..4 * n).map(|i| i % 3 == 0).collect()),
            )
            .unwrap(),
        );
        let small = Value::Array(Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).unwrap());
        for (name, v, in_place) in [
            ("f32", &f32s, true),
            ("f64", &f64s, true),
            ("bool", &bools, false),
            ("small", &small, false),
        ] {
            let file = TempFile::new(name, &encode(v).unwrap());
            let read = read(&file.0).unwrap();
            assert_eq!(&read, v, "{name}");
            assert_eq!(borrowed(&read), in_place, "{name}");
        }
    }

    /// Mapped data that is not aligned for its type (a header not padded as NumPy pads it) is
    /// copied; errors in a mapped file are those of a read one, naming the file.
    #[test]
    fn mapped_files_unaligned_or_wrong() {
        let n = MAP_AT_LEAST as usize / 4 + 1;
        let header = format!("{{'descr': '<i4', 'fortran_order': False, 'shape': ({n},)}}\n");
        assert_ne!((10 + header.len()) % 4, 0, "unaligned data");
        let data: Vec<u8> = (0..n as i32).flat_map(|x| x.to_le_bytes()).collect();
        let unaligned = TempFile::new("unaligned", &file(&header, &data));
        let v = read(&unaligned.0).unwrap();
        assert!(!borrowed(&v));
        assert_eq!(
            v,
            Value::Array(Array::new(vec![n], ArrayData::I32((0..n as i32).collect())).unwrap())
        );

        let short = TempFile::new("short", &file(&header, &data[..data.len() - 4]));
        let e = read(&short.0).unwrap_err().to_string();
        let expected = format!(
            "shape [{n}] of <i4 needs {} bytes of data, but the file has {}",
            4 * n,
            4 * n - 4
        );
        assert_eq!(e, format!("{}: {expected}", short.0.display()));
        let mut bad = file(
            "{'descr': '|b1', 'fortran_order': False, 'shape': (1048577,), }\n",
            &[1; 1 << 20],
        );
        bad.push(7);
        let bad = TempFile::new("badbool", &bad);
        let e = read(&bad.0).unwrap_err().to_string();
        assert!(
            e.contains("boolean element 1048576 has byte value 7"),
            "{e}"
        );
    }

    #[test]
    fn tuples_cannot_be_written() {
        let v = Value::Tuple(vec![Value::Scalar(Scalar::I32(1))]);
        assert!(encode(&v).unwrap_err().contains("tuple"));
    }

    /// Files written by NumPy (`tests/data/npy/gen.py`) decode to the values written next to
    /// them, and encoding those values gives NumPy's bytes back exactly.
    #[test]
    fn numpy_fixtures() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/npy");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.extension().is_none_or(|e| e != "npy") || name.starts_with("bad_") {
                continue;
            }
            let value = read(&path).unwrap();
            let text = std::fs::read_to_string(path.with_extension("txt")).unwrap();
            let expected = crate::text::parse(&text).unwrap()[0].to_value().unwrap();
            assert_eq!(value.to_string(), expected.to_string(), "{name}");
            assert_eq!(
                encode(&value).unwrap(),
                std::fs::read(&path).unwrap(),
                "{name}"
            );
            seen += 1;
        }
        assert_eq!(seen, 11);
        for (name, message) in [
            ("bad_fortran.npy", "Fortran-order"),
            ("bad_big_endian.npy", "big-endian data (>f4)"),
            ("bad_complex.npy", "element type <c8 is not supported"),
        ] {
            let e = read(&dir.join(name)).unwrap_err().to_string();
            assert!(e.contains(name) && e.contains(message), "{e}");
        }
    }
}
