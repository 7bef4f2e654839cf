//! `ogham test` with `.npy` files in test blocks: a passing mixed case, and the errors for bad
//! files, each naming the file: a truncated file, a file that is neither `.npy` nor text, an
//! input and an output of the wrong element type or rank, a missing file name after `@`.

use super::{code, ogham, scratch, stdout, write};
use ogham::runtime::npy;
use ogham::runtime::value::{Array, Value};
use std::path::Path;

fn save(dir: &Path, name: &str, value: Value) {
    npy::write(&dir.join(name), &value).unwrap();
}

/// `ogham test FILE`: its exit code and standard output.
fn test_file(dir: &Path, name: &str, text: &str) -> (i32, String) {
    let file = write(dir, name, text);
    let out = ogham(&["test", file.to_str().unwrap()]);
    (code(&out), stdout(&out))
}

#[test]
fn npy_files_in_test_blocks() {
    let dir = scratch("npy_blocks");
    let xs = Value::Array(Array::from_f32(vec![3], vec![1.0, 2.0, 3.5]).unwrap());
    save(&dir, "xs.npy", xs.clone());
    save(
        &dir,
        "ys.npy",
        Value::Array(Array::from_f32(vec![3], vec![3.0, 4.0, 5.5]).unwrap()),
    );
    save(
        &dir,
        "xs_f64.npy",
        Value::Array(Array::from_f64(vec![3], vec![1.0, 2.0, 3.5]).unwrap()),
    );
    save(
        &dir,
        "m.npy",
        Value::Array(Array::from_f32(vec![1, 3], vec![1.0, 2.0, 3.5]).unwrap()),
    );
    let program = "entry main [n] (xs: [n]f32) (d: f32) : [n]f32 = map (+ d) xs\n";

    let (rc, text) = test_file(
        &dir,
        "good.og",
        &format!("-- ==\n-- input {{ @ xs.npy 2 }}\n-- output @ ys.npy\n{program}"),
    );
    assert_eq!(rc, 0, "{text}");
    assert!(text.ends_with("1 passed, 0 failed, 0 skipped\n"), "{text}");

    // A truncated file: the header promises 12 bytes of data.
    let bytes = npy::encode(&xs).unwrap();
    std::fs::write(dir.join("cut.npy"), &bytes[..bytes.len() - 5]).unwrap();
    let (rc, text) = test_file(
        &dir,
        "cut.og",
        &format!("-- ==\n-- input {{ @ cut.npy 2 }}\n{program}"),
    );
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains("2:12: `") && text.contains("cut.npy`: shape [3] of <f4 needs 12 bytes"),
        "{text}"
    );

    // Neither `.npy` (by name or contents) nor text.
    std::fs::write(dir.join("noise.in"), b"\xff\xfe\x00").unwrap();
    let (rc, text) = test_file(
        &dir,
        "noise.og",
        &format!("-- ==\n-- input @ noise.in\n{program}"),
    );
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains("noise.in` is neither a `.npy` file nor text"),
        "{text}"
    );

    // The wrong element type (an input) and the wrong rank (an output).
    let (rc, text) = test_file(
        &dir,
        "types.og",
        &format!(
            "-- ==\n-- input {{ @ xs_f64.npy 2 }}\n-- input {{ @ xs.npy 2 }}\n-- output @ m.npy\n\
             {program}"
        ),
    );
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains(
            "bad input: argument 1 (`xs: [n]f32`), given by `xs_f64.npy` (the input at line 2): \
             expected [n]f32, but the file holds [3]f64 (`.npy` data keeps its element type: \
             save it as f32, e.g. `xs.astype(np.float32)`)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "expected output 0, given by `m.npy` (the output at line 4): expected [n]f32, but \
             the file holds [1][3]f32\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("0 passed, 2 failed, 0 skipped\n"), "{text}");

    let (rc, text) = test_file(
        &dir,
        "at.og",
        &format!("-- ==\n-- input {{ 1 @ }}\n{program}"),
    );
    assert_eq!(rc, 1, "{text}");
    assert!(
        text.contains("2:14: expected a file name after `@`"),
        "{text}"
    );
}
