"""Reliability of the extension under hostile or unusual conditions (issue 39): NumPy bool
arrays holding bytes other than 0/1, forked processes, failed allocations, and files planted
where the bundled programs once came from."""

import hashlib
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ogham

SOURCE = """
entry all [n] (xs: [n]bool) : bool = reduce (&&) true xs
entry ints [n] (xs: [n]bool) : [n]i32 = map i32.bool xs
entry total [n] (xs: [n]f32) : f32 = reduce (+) 0f32 xs
"""


@pytest.fixture(scope="module")
def mod():
    return ogham.load(SOURCE)


# --- bool arrays -------------------------------------------------------------------------------

def bytes_as_bool(values):
    return np.frombuffer(bytes(values), dtype=np.uint8).view(bool)


@pytest.mark.parametrize("entry", ["all", "ints"])
def test_bool_bytes_other_than_0_or_1_are_refused(mod, entry):
    with pytest.raises(ValueError, match=r"parameter `xs`.*element 1 .*byte value 2"):
        mod[entry](bytes_as_bool([1, 2, 255]))


@pytest.mark.parametrize("entry", ["all", "ints"])
def test_strided_bool_bytes_are_checked_to_the_end(mod, entry):
    # Every other byte: [1, 1, 1, 255]; the bad one is the last element.
    strided = bytes_as_bool([1, 7, 1, 7, 1, 7, 255, 7])[::2]
    assert not strided.flags.c_contiguous
    with pytest.raises(ValueError, match=r"parameter `xs`.*element 3 .*byte value 255"):
        mod[entry](strided)


def test_valid_bool_views_are_read_exactly(mod):
    contiguous = bytes_as_bool([1, 1, 1])
    strided = bytes_as_bool([1, 9, 0, 9, 1, 9])[::2]
    assert mod.all(contiguous) is True
    assert mod.all(strided) is False
    np.testing.assert_array_equal(mod.ints(contiguous), [1, 1, 1])
    np.testing.assert_array_equal(mod.ints(strided), [1, 0, 1])


# --- fork ----------------------------------------------------------------------------------------

XS = np.arange(200_000, dtype=np.float32) % 7


def wait_or_kill(pid, seconds=60):
    """The exit status of child `pid`, or a failure (after killing it) if it runs too long."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child hung for {seconds} s")


def test_a_forked_child_runs_parallel_calls(mod):
    expected = mod.total(XS)  # the parent's workers are started
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if mod.total(XS) == expected else 1)
        except BaseException:
            os._exit(2)
    status = wait_or_kill(pid)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert mod.total(XS) == expected  # the parent's pool still works


def total_in_child(_):
    return float(ogham.load(SOURCE).total(XS))


def test_multiprocessing_fork_workers_run_parallel_calls(mod):
    expected = float(mod.total(XS))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map_async(total_in_child, range(4)).get(timeout=60)
    assert results == [expected] * 4


# --- failed allocations --------------------------------------------------------------------------

PRELUDE = """
import resource, sys
import numpy as np
import ogham
mod = ogham.load('''
entry big (n: i64) : []f32 = map f32.i64 (iota n)
entry total [m][n] (xs: [m][n]f32) : f32 = reduce (+) 0f32 (flatten xs)
entry first [m][n] (xs: [m][n]f32) : [m][n]f32 = xs
''')
mod.big(10); mod.total(np.ones((2, 2), np.float32))  # compiled, workers started
with open('/proc/self/status') as f:
    used = next(int(l.split()[1]) * 1024 for l in f if l.startswith('VmSize:'))
limit = used + (2 << 30)  # 2 GiB more address space than now
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
"""


def run_limited(body):
    """Runs `body` after PRELUDE in a fresh interpreter (address space limited); its result."""
    env = dict(os.environ, OGHAM_MEMORY_LIMIT="1T")  # the limit check passes: malloc fails
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=300, env=env)


def assert_clean(out):
    assert out.returncode == 0, f"status {out.returncode}: {out.stderr[-2000:]}"
    assert out.stdout.strip() == "ok", out.stdout + out.stderr[-2000:]


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc are Linux's")
def test_a_result_too_large_for_memory_is_an_error_not_an_abort():
    out = run_limited("""
        try:
            mod.big(2_400_000_000)  # 9.6 GB
        except ogham.OghamError as e:
            assert e.code == "R0709", e
            assert "out of memory" in str(e), e
        else:
            raise SystemExit("no error")
        assert mod.big(3)[2] == 2.0  # still usable
        print("ok")
    """)
    assert_clean(out)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc are Linux's")
def test_copying_a_huge_broadcast_view_is_a_memory_error():
    out = run_limited("""
        view = np.broadcast_to(np.ones(2048, np.float32), (1_200_000, 2048))  # 8 KB as 9.8 GB
        for entry in (mod.total, mod.first):
            try:
                entry(view)
            except MemoryError as e:
                assert "out of memory" in str(e), e
            else:
                raise SystemExit("no error")
        print("ok")
    """)
    assert_clean(out)


# --- bundled programs come from the binary only --------------------------------------------------

def old_bundled_dir(root, cache):
    """Where versions before issue 39 wrote the bundled sources (and then compiled them from)."""
    digest = hashlib.sha256()
    for name in ("bfast", "stl", "twdtw", "ptsel"):
        path = f"programs/{name}.og"
        digest.update(path.encode() + b"\0" + (root / path).read_bytes() + b"\0")
    return cache / f"bundled-{digest.hexdigest()[:16]}"


def test_planted_modules_do_not_change_bundled_programs(root, tmp_path):
    phi = np.random.default_rng(5).uniform(-np.pi, np.pi, (6, 5, 4))
    expected = ogham.ptsel(phi, s=1)
    # The library module ptsel imports, with every complex magnitude 7.
    insar = (root / "lib/insar.og").read_text()
    good = "def c_abs (a: cpx) : f64 = f64.sqrt (a.0 * a.0 + a.1 * a.1)"
    assert good in insar
    hostile = insar.replace(good, "def c_abs (a: cpx) : f64 = 7f64 + 0f64 * a.0")
    cache = tmp_path / "cache"
    # Where the package once wrote the bundled sources, the current directory and OGHAM_PATH.
    places = [old_bundled_dir(root, cache) / "programs", tmp_path / "cwd", tmp_path / "path"]
    for place in places:
        for module in ("lib/insar", "lib/linalg", "lib/prelude"):
            path = place / f"{module}.og"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("-- planted\nthis does not parse\n")
    (places[0] / "lib/insar.og").write_text(hostile)
    code = textwrap.dedent("""
        import sys, numpy as np, ogham
        phi = np.random.default_rng(5).uniform(-np.pi, np.pi, (6, 5, 4))
        np.save(sys.argv[1], ogham.ptsel(phi, s=1))
        print(ogham.bundled("ptsel").origin)
    """)
    env = dict(os.environ, OGHAM_CACHE_DIR=str(cache), OGHAM_PATH=str(tmp_path / "path"))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "rank.npy")],
                         cwd=places[1], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "('bundled', 'ptsel')"
    np.testing.assert_array_equal(np.load(tmp_path / "rank.npy"), expected)
    assert sorted(p.name for p in places[0].iterdir()) == ["lib"], "nothing written there"


# --- the bundled functions' arguments ------------------------------------------------------------

STACK = np.random.default_rng(3).random((4, 48), dtype=np.float32)
PHI = np.random.default_rng(4).uniform(-np.pi, np.pi, (5, 4, 3))
PATTERNS = np.random.default_rng(6).random((2, 5, 1))
PATTERN_DOY = np.tile(np.linspace(1, 300, 5), (2, 1))
SERIES = np.random.default_rng(7).random((3, 6, 1))
SERIES_DOY = np.linspace(1, 360, 6)


@pytest.mark.parametrize("call, error, message", [
    (lambda: ogham.ptsel(PHI, s=2**62), ValueError, r"parameter `s`: need 1 <= s <= 4"),
    (lambda: ogham.ptsel(PHI, s=0), ValueError, r"parameter `s`"),
    (lambda: ogham.ptsel(PHI, s=2**64), ValueError, r"parameter `s`"),
    (lambda: ogham.ptsel(PHI, s=True), TypeError, r"parameter `s`: expects an int"),
    (lambda: ogham.ptsel(PHI, s=2.0), TypeError, r"parameter `s`: expects an int"),
    (lambda: ogham.stl(STACK, 12, 2**62 + 1), ValueError, r"parameter `seasonal_window`"),
    (lambda: ogham.stl(STACK, 12, 8), ValueError, r"parameter `seasonal_window`.*odd"),
    (lambda: ogham.stl(STACK, 2**63 - 1, 7), ValueError, r"parameter `period`: need 2 <= period <= 24"),
    (lambda: ogham.stl(STACK, 25, 7), ValueError, r"parameter `period`"),
    (lambda: ogham.stl(STACK, 12, 7, fill_subseries=1), TypeError,
     r"parameter `fill_subseries`: expects a bool"),
    (lambda: ogham.bfast_monitor(STACK, 2**64, freq=12), ValueError, r"parameter `history`"),
    (lambda: ogham.bfast_monitor(STACK, 24, freq=12, order=2**62), ValueError,
     r"parameter `order`.*2·order <= freq"),
    (lambda: ogham.bfast_monitor(STACK, 24, freq=math.nan), ValueError, r"parameter `freq`"),
    (lambda: ogham.bfast_monitor(STACK, 24, freq=12, lam=-1.0), ValueError, r"parameter `lam`"),
    (lambda: ogham.twdtw(PATTERNS, PATTERN_DOY, SERIES, SERIES_DOY, cycle=0), ValueError,
     r"parameter `cycle`: need cycle > 0"),
    (lambda: ogham.twdtw(PATTERNS, PATTERN_DOY, SERIES, SERIES_DOY, cycle=-366.0), ValueError,
     r"parameter `cycle`"),
    (lambda: ogham.twdtw(PATTERNS, PATTERN_DOY, SERIES, SERIES_DOY, cycle=math.nan), ValueError,
     r"parameter `cycle`"),
    (lambda: ogham.twdtw(PATTERNS, PATTERN_DOY, SERIES, SERIES_DOY, max_elapsed=math.nan),
     ValueError, r"parameter `max_elapsed`"),
    (lambda: ogham.twdtw(PATTERNS, PATTERN_DOY, SERIES, SERIES_DOY, steepness=math.inf),
     ValueError, r"parameter `steepness`"),
    (lambda: ogham.twdtw(PATTERNS, PATTERN_DOY, SERIES, SERIES_DOY, fill=2**63), ValueError,
     r"parameter `fill`"),
])
def test_parameters_are_checked_exactly_and_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("bad", [
    lambda a: a.astype(np.int64), lambda a: a > 0.5, lambda a: a.astype(np.complex128),
    lambda a: a.astype(object)])
@pytest.mark.parametrize("function, argument", [
    ("bfast_monitor", "stack"), ("stl", "stack"), ("ptsel", "phi"), ("twdtw", "patterns"),
    ("twdtw", "series"), ("twdtw", "series_doy"), ("mann_kendall", "stack"),
    ("mann_kendall", "time")])
def test_every_bundled_function_refuses_non_float_data(function, argument, bad):
    args = {
        "bfast_monitor": lambda: dict(stack=STACK, history=24, freq=12),
        "stl": lambda: dict(stack=STACK, period=12, seasonal_window=7),
        "ptsel": lambda: dict(phi=PHI),
        "twdtw": lambda: dict(patterns=PATTERNS, pattern_doy=PATTERN_DOY, series=SERIES,
                              series_doy=SERIES_DOY),
        "mann_kendall": lambda: dict(stack=STACK, time=np.arange(STACK.shape[1], dtype=float)),
    }[function]()
    args[argument] = bad(args[argument])
    with pytest.raises(TypeError, match=rf"parameter `{argument}`: expects float32 or float64"):
        getattr(ogham, function)(**args)


def test_float32_data_is_widened_exactly_where_programs_are_f64():
    np.testing.assert_array_equal(ogham.ptsel(PHI.astype(np.float32), s=1),
                                  ogham.ptsel(PHI.astype(np.float32).astype(np.float64), s=1))


def test_a_misspelt_keyword_is_named():
    module = ogham.bundled("bfast")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'lam'"):
        module.main(STACK, 24, 12.0, 0.0, 3, True, 0.25, 10, 0.05, lam=0.3)


# --- bad arguments -------------------------------------------------------------------------------

def test_a_short_bad_argument_campaign_passes():
    """`argument_campaign.py` (the documented campaign) on 150 calls, in a child process so that a
    crash is a failure of this test, not of the test run."""
    script = os.path.join(os.path.dirname(__file__), "argument_campaign.py")
    done = subprocess.run([sys.executable, script, "--calls", "150", "--seed", "1000"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "150 calls from seed 1000" in done.stdout, done.stdout
