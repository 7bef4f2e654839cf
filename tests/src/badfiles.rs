//! A generator of damaged input files for fuzzing the readers (`tests/fuzz.rs`): `.npy` files
//! and compiled libraries (`.ogl`), each made from a valid file by a random mutation.
//!
//! `.npy` mutations: truncation, byte flips, a rewritten header (absurd, negative, empty and
//! huge shapes such as `(0, 10**18)`, non-ASCII dtypes in version 3, unknown keys, Fortran
//! order, a header length past the end). Library mutations: truncation, byte flips, and edits
//! of the JSON text that keep it JSON (numbers and names changed). A reader must return a value
//! or an error for every one of them, never panic; [`check_npy`] also runs what it reads.

use crate::differential::Rng;
use ogham::testing::compare_outputs;
use ogham_runtime::npy;
use ogham_runtime::value::{Array, ArrayData, Value};
use std::panic::{AssertUnwindSafe, catch_unwind};

const MAGIC: &[u8] = b"\x93NUMPY";

fn header(descr: &str, shape: &str) -> String {
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
}

/// A `.npy` file of version `major` with header text `text` and `data`.
fn npy_file(major: u8, text: &str, data: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend([major, 0]);
    if major == 1 {
        out.extend((text.len() as u16).to_le_bytes());
    } else {
        out.extend((text.len() as u32).to_le_bytes());
    }
    out.extend(text.as_bytes());
    out.extend(data);
    out
}

/// A damaged (or, now and then, valid) `.npy` file.
pub fn npy_bytes(rng: &mut Rng) -> Vec<u8> {
    let rows = rng.below(4) as usize;
    let cols = rng.below(4) as usize;
    let data: Vec<f32> = (0..rows * cols).map(|k| k as f32 * 0.5).collect();
    let valid = npy::encode(&Value::Array(
        Array::new(vec![rows, cols], ArrayData::F32(data.into())).expect("shape"),
    ))
    .expect("encodes");
    const SHAPES: [&str; 10] = [
        "(0, 1000000000000000000)",
        "(1000000000000000000, 0)",
        "(-1, 2)",
        "(18446744073709551615,)",
        "(4294967296, 4294967296)",
        "()",
        "(2,",
        "(1, 2, 3, 4, 5, 6, 7, 8)",
        "(0, 3)",
        "(3, 0)",
    ];
    const DESCRS: [&str; 9] = ["<f4", "<f8", "é4", "<é", "€", "|b1", ">f4", "<c8", ""];
    match rng.below(6) {
        0 => {
            let cut = rng.below(valid.len() as u64 + 1) as usize;
            valid[..cut].to_vec()
        }
        1 => {
            let mut bytes = valid;
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] = rng.next_u64() as u8;
            }
            bytes
        }
        2 | 3 => {
            let descr = DESCRS[rng.below(DESCRS.len() as u64) as usize];
            let shape = SHAPES[rng.below(SHAPES.len() as u64) as usize];
            let data = vec![0u8; rng.below(40) as usize];
            npy_file(1 + rng.below(3) as u8, &header(descr, shape), &data)
        }
        4 => {
            // Random text as the header.
            let text: String = (0..rng.below(60))
                .map(|_| char::from_u32(32 + rng.below(0x2000) as u32).unwrap_or('?'))
                .collect();
            npy_file(3, &text, &[0; 8])
        }
        _ => {
            // A header length past the end of the file.
            let mut bytes = MAGIC.to_vec();
            bytes.extend([2, 0]);
            bytes.extend((rng.next_u64() as u32).to_le_bytes());
            bytes.extend(b"{'descr': '<f4'");
            bytes
        }
    }
}

/// Reads `bytes` as a `.npy` file and, when that succeeds with a two-dimensional `f32` array,
/// runs a per-row sum of it on the interpreter, the kernel IR and the CPU backend: `Err` on a
/// panic, an internal error, or backends that disagree.
pub fn check_npy(bytes: &[u8], program: &ogham::Frontend) -> Result<(), String> {
    let decoded = catch_unwind(|| npy::decode(bytes))
        .map_err(|_| format!("npy::decode panicked on {bytes:?}"))?;
    let Ok(value @ Value::Array(_)) = decoded else {
        return Ok(());
    };
    let Value::Array(a) = &value else {
        unreachable!()
    };
    if a.rank() != 2 || !matches!(a.data(), ArrayData::F32(_)) {
        return Ok(());
    }
    let mut results = Vec::new();
    for backend in [
        ogham::Backend::Interp,
        ogham::Backend::Kir,
        ogham::Backend::Cpu,
    ] {
        let run = catch_unwind(AssertUnwindSafe(|| {
            backend.run(program, "main", vec![value.clone()], None)
        }))
        .map_err(|_| format!("{} panicked on shape {:?}", backend.name(), a.shape()))?;
        let outcome = match run {
            Ok(v) => Ok(v),
            Err(d) if d.code == "R0708" => {
                return Err(format!("{}: internal error {}", backend.name(), d.message));
            }
            Err(d) => Err(d.code.to_string()),
        };
        results.push(outcome);
    }
    // Outputs compare as the differential harness's do (NaN equals NaN: a damaged file's bytes
    // often decode to NaN), errors by code.
    let differ = |a: &Result<Vec<Value>, String>, b: &Result<Vec<Value>, String>| match (a, b) {
        (Ok(a), Ok(b)) => compare_outputs(a, b, Some(1e-6)).is_err(),
        _ => a != b,
    };
    if results.windows(2).any(|w| differ(&w[0], &w[1])) {
        return Err(format!(
            "backends disagree on shape {:?}: {results:?}",
            a.shape()
        ));
    }
    Ok(())
}

/// A damaged library: the JSON text of `valid` mutated.
pub fn library_text(valid: &str, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = valid.as_bytes().to_vec();
    match rng.below(4) {
        0 => {
            let cut = rng.below(bytes.len() as u64 + 1) as usize;
            bytes.truncate(cut);
        }
        1 => {
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] = rng.next_u64() as u8;
            }
        }
        _ => {
            // Change one digit or one letter: the text stays JSON, the program changes.
            let positions: Vec<usize> = bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_ascii_alphanumeric())
                .map(|(k, _)| k)
                .collect();
            for _ in 0..1 + rng.below(3) {
                let at = positions[rng.below(positions.len() as u64) as usize];
                bytes[at] = if bytes[at].is_ascii_digit() {
                    b'0' + rng.below(10) as u8
                } else {
                    b'a' + rng.below(26) as u8
                };
            }
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A NaN read from a file is the same output on every backend (the fuzz campaign's first
    /// chunk of session 10 reported NaN rows as disagreements: outputs compared with `==`).
    #[test]
    fn nan_read_from_a_file_agrees() {
        let rows = "entry main (a: [][]f32) : []f32 = map (\\r -> reduce (+) 0 r) a\n";
        let fe = ogham::Frontend::load_source("rows.og", rows)
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let data: Vec<u8> = [1.5f32, f32::NAN, 0.0, 0.0, 0.0, 0.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let bytes = npy_file(1, &header("<f4", "(2, 3)"), &data);
        assert!(npy::decode(&bytes).is_ok(), "a valid file");
        assert_eq!(check_npy(&bytes, &fe), Ok(()));
    }
}
