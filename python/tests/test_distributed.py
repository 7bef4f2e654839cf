"""A user's own Ogham method on a dask-backed cube, on a `distributed.LocalCluster` with two worker
processes: bit-identical to the in-memory call, and each worker compiles it once, not per chunk."""

import numpy as np
import pytest

import ogham

distributed = pytest.importorskip("distributed")

METHOD = """
-- | Amplitude of each pixel's series (max - min of the valid values) and the series scaled
-- to [0, 1] by it.
entry amplitude [m][n] (xs: [m][n]f32) : ([m]f32, [m][n]f32) =
  let lo r = reduce f32.min f32.inf (map (\\x -> if isnan x then f32.inf else x) r)
  let hi r = reduce f32.max (-f32.inf) (map (\\x -> if isnan x then -f32.inf else x) r)
  let amp = map (\\r -> hi r - lo r) xs
  in (amp, map2 (\\r a -> let l = lo r in map (\\x -> (x - l) / a) r) xs amp)
"""


def test_local_cluster_two_processes(tmp_path, monkeypatch):
    from test_xarray import make_cube

    monkeypatch.setenv("OGHAM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "amplitude.og"
    path.write_text(METHOD)
    mod = ogham.load(path)
    cube = make_cube(ny=16, nx=12, nt=64)
    eager = cube.ogham.apply(mod.amplitude, names=["amplitude", "scaled"])
    lazy = cube.chunk({"y": 4, "x": 6}).ogham.apply(mod.amplitude, names=["amplitude", "scaled"])
    chunks = len(lazy.amplitude.data.to_delayed().ravel())
    assert chunks == 8
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        computed = lazy.compute()
        loads = client.run(ogham.load_count)
        # a bundled program with array arguments besides the cube (they reach the workers
        # pickled, at unaligned addresses)
        bfast = cube.chunk({"y": 8, "x": 6}).ogham.bfast_monitor("2006-06-01").compute()
        # a run-time error on a worker reaches the client with its code (no history to monitor
        # after: every date is before history_end)
        with pytest.raises(ogham.OghamError) as error:
            cube.chunk({"y": 8, "x": 6}).ogham.bfast_monitor("2030-01-01").compute()
        assert error.value.code == "R0710" and "argument n" in str(error.value)
    assert len(loads) == 2
    # every worker compiled the method at most once for the 8 chunks
    assert all(n <= 1 for n in loads.values()) and sum(loads.values()) >= 1
    for name in ("amplitude", "scaled"):
        assert computed[name].values.tobytes() == eager[name].values.tobytes()
    assert computed.rio.crs == cube.rio.crs
    expected = cube.ogham.bfast_monitor("2006-06-01")
    for name in expected.data_vars:
        assert bfast[name].values.tobytes() == expected[name].values.tobytes(), name
