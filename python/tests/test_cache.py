"""Compile once: a program is compiled once per process (the same module object comes back) and
kept on disk in `OGHAM_CACHE_DIR`; a second process uses the entry without rewriting it; a
damaged entry is reported, rebuilt and never trusted."""

import os
import subprocess
import sys

import numpy as np

import ogham

PROGRAM = """
entry smooth [m][n] (xs: [m][n]f32) : [m][n]f32 =
  map (\\r -> map (\\i -> (r[i64.max 0 (i - 1)] + r[i] + r[i64.min (n - 1) (i + 1)]) / 3f32)
                 (iota n)) xs
"""

SCRIPT = """
import sys, numpy as np, ogham
mod = ogham.load(sys.argv[1])
xs = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
sys.stdout.write(mod.smooth(xs).tobytes().hex())
"""


def run(path, cache):
    env = dict(os.environ, OGHAM_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], env=env, check=True,
                          capture_output=True, text=True)
    return done.stdout, done.stderr


def entries(cache):
    return sorted((cache / "cpu").glob("*.ogc"))


def test_disk_cache_hit_miss_and_damaged_entry(tmp_path):
    path = tmp_path / "smooth.og"
    path.write_text(PROGRAM)
    cache = tmp_path / "cache"
    first, _ = run(path, cache)                          # miss: compiled and written
    [entry] = entries(cache)
    written = os.stat(entry)
    second, err = run(path, cache)                       # hit: used as is, not rewritten
    assert second == first and err == ""
    assert os.stat(entry).st_ino == written.st_ino and os.stat(entry).st_mtime_ns == written.st_mtime_ns
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF                         # damage the entry
    entry.write_bytes(bytes(data))
    third, err = run(path, cache)
    assert third == first
    assert "damaged" in err and str(entry) in err
    [rebuilt] = entries(cache)
    fourth, err = run(path, cache)                       # the rebuilt entry is good
    assert fourth == first and err == ""
    path.write_text(PROGRAM.replace("/ 3f32", "/ 4f32"))  # a changed program is a new entry
    fifth, _ = run(path, cache)
    assert fifth != first and len(entries(cache)) == 2


def test_memory_cache_in_process(tmp_path):
    path = tmp_path / "smooth.og"
    path.write_text(PROGRAM)
    before = ogham.load_count()
    mod = ogham.load(path)
    assert ogham.load(str(path)) is mod and ogham.load(path, backend="cpu") is mod
    assert ogham.load_count() == before + 1
    interp = ogham.load(path, backend="interp")
    xs = np.random.default_rng(0).standard_normal((4, 9)).astype(np.float32)
    assert mod.smooth(xs).tobytes() == interp.smooth(xs).tobytes()
