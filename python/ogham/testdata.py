"""Test cases for `ogham test` from NumPy arrays (pure Python and NumPy; see docs/python.md).

`write_test` saves a case's arrays as `.npy` files and writes the test block that runs them:

    ogham.write_test("my_method.og", "main", [stack, 3], [expected_map])

appends to `my_method.og`

    -- ==
    -- entry: main
    -- input { @ main.in0.npy 3 }
    -- output { @ main.out0.npy }

with `main.in0.npy` and `main.out0.npy` next to it (`@` paths are relative to the `.og` file).
Arrays become `.npy` files (their element type is kept: `ogham test` does not convert `.npy`
data); scalars are written inline, NumPy scalars with their type's suffix (`2.5f32`) and Python
numbers unsuffixed, so that they take the parameter's type.
"""

import math
import pathlib
import re

import numpy as np

# The element types Ogham reads from `.npy` files, with their suffixes.
_SUFFIXES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}

# File-name prefixes that read back as one `@ file` item (no spaces, no `@`, no braces).
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def write_test(path, entry, inputs, outputs=None, *, name=None, tolerance=None):
    """Writes one test case of entry point `entry` and returns its test block (text).

    `path` is a `.og` file: the `.npy` files go into its directory and the block is appended to
    the file. Or `path` is a directory: the files go there and the block is only returned; it
    belongs in a `.og` file in that directory (its `@` paths are relative to the `.og` file).

    `inputs` are the entry point's arguments and `outputs` its expected results (one per result,
    or one per component of a tuple result; `None`: the case only has to run). Each is a NumPy
    array of at least one dimension (saved as `NAME.inK.npy` / `NAME.outK.npy`), or a scalar:
    a NumPy scalar or 0-d array (written inline with its type, `2.5f32`), a Python `bool`, `int`
    or `float` (written unsuffixed: it takes the parameter's type). Element types: bool, int8,
    int16, int32, int64, uint8, float32, float64.

    `name` is the files' prefix (default: `entry`, then `entry_2`, `entry_3`, ... for the first
    that no file uses yet). `tolerance` adds `-- tolerance: T`, which applies to the whole `.og`
    file. Raises `ValueError` for an unsupported value, element type or name, and
    `FileNotFoundError` for a `.og` file or directory that does not exist.
    """
    path = pathlib.Path(path)
    og = path if path.suffix == ".og" else None
    directory = path.parent if og else path
    if og is not None and not og.is_file():
        raise FileNotFoundError(f"write_test(): no file {og}")
    if not directory.is_dir():
        raise FileNotFoundError(f"write_test(): no directory {directory}")
    name = _free_name(directory, entry) if name is None else name
    if not _NAME.fullmatch(name):
        raise ValueError(f"write_test(): the name {name!r} must be letters, digits, `_`, `.`, `-`")
    files = {}
    ins = [_item(v, f"{name}.in{k}.npy", f"input {k}", files) for k, v in enumerate(inputs)]
    lines = ["-- ==", f"-- entry: {entry}"]
    if tolerance is not None:
        lines.append(f"-- tolerance: {float(tolerance)!r}")
    lines.append(f"-- input {{ {' '.join(ins)} }}")
    if outputs is not None:
        outs = [_item(v, f"{name}.out{k}.npy", f"output {k}", files)
                for k, v in enumerate(outputs)]
        lines.append(f"-- output {{ {' '.join(outs)} }}")
    for file, array in files.items():
        np.save(directory / file, array, allow_pickle=False)
    block = "\n".join(lines) + "\n"
    if og is not None:
        text = og.read_text()
        with og.open("a") as f:
            f.write(("" if text.endswith("\n") or not text else "\n") + "\n" + block)
    return block


def _free_name(directory, entry):
    """`entry`, or `entry_K` for the first K from 2 whose files do not exist yet."""
    name, k = entry, 1
    while list(directory.glob(f"{name}.in*.npy")) or list(directory.glob(f"{name}.out*.npy")):
        k += 1
        name = f"{entry}_{k}"
    return name


def _item(value, file, what, files):
    """The test-block text of one value: a literal, or `@ file` (recorded in `files`)."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        return _python_literal(value, what)
    array = np.asarray(value)
    dtype = array.dtype.newbyteorder("=") if array.dtype.byteorder == ">" else array.dtype
    if dtype not in _SUFFIXES:
        raise ValueError(f"write_test(): {what} has element type {array.dtype}, which Ogham "
                         f"does not read (use one of {', '.join(map(str, _SUFFIXES))})")
    if array.ndim == 0:
        return _typed_literal(array[()], _SUFFIXES[dtype])
    files[file] = np.ascontiguousarray(array, dtype=dtype.newbyteorder("<"))
    return f"@ {file}"


def _python_literal(value, what):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    if not re.fullmatch(r"-?[0-9.e+-]+", text):
        raise ValueError(f"write_test(): {what} ({value!r}) is not a number")
    return text


def _typed_literal(scalar, suffix):
    """A NumPy scalar as a literal of its type (`2.5f32`, `-3i64`, `f32.nan`, `true`)."""
    if suffix == "bool":
        return "true" if scalar else "false"
    if suffix in ("f32", "f64"):
        if np.isnan(scalar):
            return f"{suffix}.nan"
        if np.isinf(scalar):
            return f"{suffix}.inf" if scalar > 0 else f"-{suffix}.inf"
        # NumPy's shortest text that reads back as the same value of this type.
        return f"{np.format_float_scientific(scalar, unique=True, trim='0')}{suffix}"
    return f"{int(scalar)}{suffix}"
