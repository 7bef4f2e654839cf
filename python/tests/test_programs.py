"""The bundled programs from Python give the CLI's outputs bit for bit (`ogham run` on the same
data saved as .npy)."""

import subprocess

import numpy as np
import pytest

import ogham


def cli_run(cli, root, tmp_path, program, entry, arrays, literals):
    """`ogham run programs/<program>.og --entry <entry> <arrays as .npy> <literals>`."""
    args = []
    for i, a in enumerate(arrays):
        path = tmp_path / f"in{i}.npy"
        np.save(path, a)
        args.append(str(path))
    out = tmp_path / "out"
    subprocess.run([str(cli), "run", str(root / "programs" / f"{program}.og"), "--entry", entry,
                    "-o", str(out), *args, *literals], check=True, capture_output=True)
    return [np.load(p) for p in sorted(out.glob("out*.npy"), key=lambda p: int(p.stem[3:]))]


def same_bits(python, cli):
    assert len(python) == len(cli)
    for a, b in zip(python, cli):
        a = np.asarray(a)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def cloudy_series(rng, m, n, dtype):
    t = np.arange(n)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 23)[None, :] + 0.05 * rng.standard_normal((m, n))
    y[: m // 2, 3 * n // 4:] -= 0.4  # breaks in half of the pixels
    y[rng.random((m, n)) < 0.3] = np.nan
    return y.astype(dtype)


@pytest.mark.parametrize("dtype,entry", [(np.float32, "main"), (np.float64, "main_f64")])
def test_bfast_monitor(cli, root, tmp_path, dtype, entry):
    y = cloudy_series(np.random.default_rng(0), 40, 184, dtype)
    python = ogham.bfast_monitor(y, 92, freq=23, start=2000.0)
    cli_out = cli_run(cli, root, tmp_path, "bfast", entry, [y],
                      ["92i64", "23f64", "2000f64", "3i64", "true", "0.25f64", "10i64", "0.05f64",
                       "f64.nan"])
    same_bits(python, cli_out)
    assert (python.break_index[:20] >= 0).sum() >= 10  # the data has breaks, found


def test_bfast_years(cli, root, tmp_path):
    y = cloudy_series(np.random.default_rng(1), 16, 120, np.float32)
    years = 2001 + np.cumsum(np.full(120, 16 / 365.25))
    python = ogham.bfast_monitor(y, 60, years=years, order=2, trend=False)
    cli_out = cli_run(cli, root, tmp_path, "bfast", "years", [y, years],
                      ["60i64", "2i64", "false", "0.25f64", "10i64", "0.05f64", "f64.nan"])
    same_bits(python, cli_out)


def test_stl(cli, root, tmp_path):
    y = cloudy_series(np.random.default_rng(2), 12, 92, np.float64)
    python = ogham.stl(y, 23, 7)
    cli_out = cli_run(cli, root, tmp_path, "stl", "auto_f64", [y], ["23i64", "7i64", "false"])
    same_bits(python, cli_out)
    assert python.trend.shape == y.shape


@pytest.mark.parametrize("dtype,entry", [(np.float32, "auto_fill"), (np.float64, "auto_fill_f64")])
def test_stl_fill_subseries(cli, root, tmp_path, dtype, entry):
    """`fill_subseries=True` is the `auto_fill` entries; it decomposes the series with an
    unobserved cycle-subseries, which are NaN without it, and leaves the others bit for bit."""
    y = cloudy_series(np.random.default_rng(6), 8, 92, dtype)
    y[:4, 5::23] = np.nan                   # phase 5 cloudy in every cycle
    y[4:, 5::23] = 0.5                      # observed
    python = ogham.stl(y, 23, 7, fill_subseries=True)
    same_bits(python, cli_run(cli, root, tmp_path, "stl", entry, [y], ["23i64", "7i64", "false"]))
    plain = ogham.stl(y, 23, 7)
    assert np.isnan(plain.trend[:4]).all() and np.isfinite(python.trend[:4]).all()
    same_bits([a[4:] for a in python], [a[4:] for a in plain])
    missing = np.isnan(y)
    assert np.isnan(python.remainder[missing]).all() and np.isfinite(python.seasonal).all()


def test_twdtw(cli, root, tmp_path):
    rng = np.random.default_rng(3)
    doy = np.linspace(1, 360, 24)
    patterns = np.stack([np.sin(doy / 58 + k)[:, None] for k in range(3)])        # [3][24][1]
    pattern_doy = np.tile(doy, (3, 1))
    labels = rng.integers(0, 3, 10)
    series = patterns[labels] + 0.05 * rng.standard_normal((10, 24, 1))           # [10][24][1]
    series_doy = np.tile(doy, (10, 1))
    distances, found = ogham.twdtw(patterns, pattern_doy, series, series_doy, fill=9)
    cli_out = cli_run(cli, root, tmp_path, "twdtw", "nearest",
                      [patterns, pattern_doy, series, series_doy],
                      ["0.1f64", "50f64", "366f64", "f64.inf", "9i64"])
    same_bits([distances, found], cli_out)
    np.testing.assert_array_equal(found, labels)


def test_ptsel(cli, root, tmp_path):
    rng = np.random.default_rng(4)
    phi = rng.uniform(-np.pi, np.pi, (12, 9, 8))
    phi[:, 4, 4] = 0.1 * rng.standard_normal(12)  # a stable scatterer
    python = ogham.ptsel(phi, 2)
    cli_out = cli_run(cli, root, tmp_path, "ptsel", "rank_wp", [phi], ["2i64", "false"])
    same_bits([python], cli_out)


@pytest.mark.parametrize("dtype, entry", [(np.float32, "main"), (np.float64, "main_f64")])
def test_mann_kendall(cli, root, tmp_path, dtype, entry):
    rng = np.random.default_rng(8)
    y = cloudy_series(rng, 12, 40, dtype)
    years = 2015 + np.cumsum(rng.uniform(0.01, 0.1, 40))
    same_bits(ogham.mann_kendall(y, years), cli_run(cli, root, tmp_path, "trend", entry,
                                                    [y, years], []))


def test_built_library(cli, root, tmp_path):
    """A library built by `ogham build` opens with `ogham.load` and gives the program's results;
    a file that is not a library is an OghamError naming it."""
    lib = tmp_path / "stl.ogl"
    subprocess.run([str(cli), "build", str(root / "programs" / "stl.og"), "-o", str(lib)],
                   check=True, capture_output=True)
    module = ogham.load(lib)
    assert "auto" in module.entries and module.backend == "cpu"
    y = cloudy_series(np.random.default_rng(5), 4, 46, np.float32)
    same_bits(module.auto(y, 23, 7, False), ogham.stl(y, 23, 7))
    bad = tmp_path / "bad.ogl"
    bad.write_text("{}")
    with pytest.raises(ogham.OghamError, match="bad.ogl"):
        ogham.load(bad)
    with pytest.raises(ValueError, match="cpu backend"):
        ogham.load(lib, backend="interp")
