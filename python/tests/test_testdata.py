"""`ogham.write_test`: the `.npy` files and test block it writes for a case, run by
`ogham test` (the CLI binary), which passes them, and fails them when an expected output is
wrong; inline scalars of every kind; the errors for values Ogham cannot read."""

import subprocess

import numpy as np
import pytest

import ogham

PROGRAM = """-- Scales a series and sums it.
entry main [n] (xs: [n]f32) (k: f32) (shift: i64) : ([n]f32, f32, i64) =
  let ys = map (* k) xs in (ys, reduce (+) 0 ys, shift + n)
"""


def run_tests(cli, path):
    out = subprocess.run([str(cli), "test", str(path)], capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def test_written_cases_run(tmp_path, cli):
    og = tmp_path / "scale.og"
    og.write_text(PROGRAM)
    xs = np.array([1.5, -2.0, 0.1], dtype=np.float32)
    ys = xs * np.float32(2)
    block = ogham.write_test(og, "main", [xs, np.float32(2), 4], [ys, ys.sum(), np.int64(7)])
    assert block.startswith("-- ==\n-- entry: main\n-- input { @ main.in0.npy 2.0e+00f32 4 }\n"
                            "-- output { @ main.out0.npy -8.0")
    assert block.endswith("e-01f32 7i64 }\n")
    assert og.read_text() == PROGRAM + "\n" + block
    assert np.array_equal(np.load(tmp_path / "main.in0.npy"), xs)
    code, text = run_tests(cli, og)
    assert code == 0, text
    assert text.endswith("1 passed, 0 failed, 0 skipped\n"), text

    # A second case gets its own files; a wrong expected output makes `ogham test` fail.
    second = ogham.write_test(og, "main", [xs, 1.0, 0], [xs + 1, xs.sum(), 3])
    assert "@ main_2.in0.npy" in second and (tmp_path / "main_2.out0.npy").is_file()
    code, text = run_tests(cli, og)
    assert code == 1, text
    assert "output 0: at index [0]" in text and text.endswith("1 passed, 1 failed, 0 skipped\n")


def test_directory_target_returns_the_block(tmp_path, cli):
    m = np.arange(6, dtype=np.float64).reshape(2, 3)
    block = ogham.write_test(tmp_path, "double", [m], [m * 2], name="grid", tolerance=1e-9)
    assert block == ("-- ==\n-- entry: double\n-- tolerance: 1e-09\n-- input { @ grid.in0.npy }\n"
                     "-- output { @ grid.out0.npy }\n")
    og = tmp_path / "double.og"
    og.write_text(block + "entry double [r][c] (m: [r][c]f64) : [r][c]f64 = map (map (* 2)) m\n")
    code, text = run_tests(cli, og)
    assert code == 0, text


def test_scalars_are_literals(tmp_path, cli):
    og = tmp_path / "kinds.og"
    og.write_text("entry main (a: bool) (b: f64) (c: f32) (d: u8) (e: f64) (f: f32) : "
                  "(bool, f64, f32, u8, f64, f32) = (a, b, c, d, e, f)\n")
    values = [np.True_, 0.1, np.float32(np.nan), np.uint8(200), -np.inf, np.array(1e-8, np.float32)]
    block = ogham.write_test(og, "main", values, values)
    assert "-- input { true 0.1 f32.nan 200u8 -inf 1.0e-08f32 }" in block
    code, text = run_tests(cli, og)
    assert code == 0, text


def test_unreadable_values_are_refused(tmp_path):
    with pytest.raises(ValueError, match="input 0 has element type complex128"):
        ogham.write_test(tmp_path, "main", [np.zeros(3, dtype=complex)])
    with pytest.raises(ValueError, match="the name 'a b'"):
        ogham.write_test(tmp_path, "main", [np.zeros(3)], name="a b")
    with pytest.raises(FileNotFoundError):
        ogham.write_test(tmp_path / "missing.og", "main", [1])
    assert not list(tmp_path.iterdir())
