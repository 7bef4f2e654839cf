//! Minimal reader and writer of little-endian `.npy` files (version 1.0, C order), enough for
//! the benchmark data: `<f4`, `<f8`, `<i4` and `<i8` arrays of any rank.

use std::fs;
use std::io::Write;

/// A loaded array: its shape and its elements converted to f64.
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

fn field<'a>(header: &'a str, key: &str) -> Result<&'a str, String> {
    let at = header.find(key).ok_or(format!("npy header has no {key}"))?;
    Ok(&header[at + key.len()..])
}

/// Reads an `.npy` file.
pub fn read(path: &str) -> Result<Array, String> {
    let bytes = fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(format!("{path}: not an npy file"));
    }
    let (hlen, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[start..start + hlen]).map_err(|e| e.to_string())?;
    let descr = field(header, "'descr': '")?;
    let descr = &descr[..descr.find('\'').ok_or("bad descr")?];
    if field(header, "'fortran_order': ")?.starts_with("True") {
        return Err(format!("{path}: Fortran order is not supported"));
    }
    let shape_text = field(header, "'shape': (")?;
    let shape_text = &shape_text[..shape_text.find(')').ok_or("bad shape")?];
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let body = &bytes[start + hlen..];
    let data: Vec<f64> = match descr {
        "<f4" => body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        "<f8" => body
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "<i4" => body
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        "<i8" => body
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        other => return Err(format!("{path}: unsupported dtype {other}")),
    };
    if data.len() != shape.iter().product::<usize>() {
        return Err(format!("{path}: size does not match the shape"));
    }
    Ok(Array { shape, data })
}

/// Writes a one-dimensional `<i4` array.
pub fn write_i32(path: &str, xs: &[i32]) -> Result<(), String> {
    write_raw(
        path,
        "<i4",
        xs.len(),
        &xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    )
}

/// Writes a one-dimensional `<f4` array.
pub fn write_f32(path: &str, xs: &[f32]) -> Result<(), String> {
    write_raw(
        path,
        "<f4",
        xs.len(),
        &xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    )
}

/// Writes a one-dimensional `<f8` array.
pub fn write_f64(path: &str, xs: &[f64]) -> Result<(), String> {
    write_raw(
        path,
        "<f8",
        xs.len(),
        &xs.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    )
}

fn write_raw(path: &str, descr: &str, len: usize, body: &[u8]) -> Result<(), String> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({len},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(body);
    f.write_all(&out).map_err(|e| format!("{path}: {e}"))
}
