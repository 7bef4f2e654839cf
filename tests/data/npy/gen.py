"""Generates the .npy fixtures that runtime/src/npy.rs is tested against.

Run from this directory: python3 gen.py (NumPy 2.x). Each fixture's expected value is written
next to it in Ogham's textual value syntax (`NAME.txt`), so the Rust test needs no NumPy.
"""
import numpy as np

fixtures = {
    "f32_2x3": np.array([[1.5, -2.0, 3.25], [np.nan, np.inf, -np.inf]], dtype="<f4"),
    "f64_vec": np.array([0.1, 1e-300, -2.5e10], dtype="<f8"),
    "i8_vec": np.array([-128, 0, 127], dtype="i1"),
    "i16_vec": np.array([-32768, 1, 32767], dtype="<i2"),
    "i32_2x2": np.array([[1, 2], [3, 4]], dtype="<i4"),
    "i64_vec": np.array([-(2**63), 0, 2**63 - 1], dtype="<i8"),
    "u8_vec": np.array([0, 200, 255], dtype="u1"),
    "bool_vec": np.array([True, False, True], dtype="?"),
    "f64_empty_0x3": np.zeros((0, 3), dtype="<f8"),
    "f32_scalar": np.array(2.5, dtype="<f4"),
    "i64_3d": np.arange(24, dtype="<i8").reshape(2, 3, 4),
}


def text(a):
    suffix = {"float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
              "int64": "i64", "uint8": "u8", "bool": ""}[a.dtype.name]

    def scalar(x):
        if a.dtype == np.bool_:
            return "true" if x else "false"
        if np.isnan(x):
            return f"{suffix}.nan"
        if np.isinf(x):
            return ("-" if x < 0 else "") + f"{suffix}.inf"
        return f"{x!r}{suffix}" if a.dtype.kind == "f" else f"{int(x)}{suffix}"

    if a.size == 0:
        return "empty(" + "".join(f"[{d}]" for d in a.shape) + suffix + ")"
    if a.ndim == 0:
        return scalar(a[()].item())
    return str(np.vectorize(scalar, otypes=[object])(a).tolist()).replace("'", "")


for name, a in fixtures.items():
    np.save(f"{name}.npy", a)
    with open(f"{name}.txt", "w") as f:
        f.write(text(a) + "\n")

# Files that must be rejected with a clear message.
np.save("bad_fortran.npy", np.asfortranarray(np.ones((2, 2), dtype="<f4")))
np.save("bad_big_endian.npy", np.ones(2, dtype=">f4"))
np.save("bad_complex.npy", np.ones(2, dtype="<c8"))
