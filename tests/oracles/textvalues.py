"""Ogham's textual value syntax (as in test blocks and `.in`/`.out` files) for the oracle
scripts of this directory, which write their golden values with it: `fmt_value(x, "f32")` (`from textvalues import fmt_value`).

Floats are written with Python's shortest round-trip `repr` and their suffix, so a value reads
back bit for bit; NaN and infinities as `f32.nan`, `-f64.inf`; booleans as `true`/`false`; an
empty array as `empty([0]f32)`; a nested array with one innermost row per line.
"""

import math

import numpy as np


def fmt_scalar(x, suffix):
    if suffix in ("f32", "f64"):
        x = float(x)
        if math.isnan(x):
            return f"{suffix}.nan"
        if math.isinf(x):
            return f"{suffix}.inf" if x > 0 else f"-{suffix}.inf"
        return f"{x!r}{suffix}"
    if suffix == "bool":
        return "true" if x else "false"
    return f"{int(x)}{suffix}"


def fmt_value(x, suffix):
    x = np.asarray(x)
    if x.ndim == 0:
        return fmt_scalar(x, suffix)
    if x.size == 0:
        return "empty(" + "".join(f"[{d}]" for d in x.shape) + suffix + ")"
    if x.ndim == 1:
        return "[" + ", ".join(fmt_scalar(v, suffix) for v in x) + "]"
    return "[" + ",\n ".join(fmt_value(row, suffix) for row in x) + "]"
