#!/usr/bin/env python3
"""BFAST-Monitor from Python on a Zarr cube: dask on a LocalCluster of worker processes vs one
in-memory call, with pixels/s, peak memory per worker and the fixed cost per chunk.

    python benches/python/dask_bfast.py --size 2048 2048 256 --chunk 512 --workers 2 \
        --dir /tmp/ogham-dask                    # the issue's size: a 4 GiB f32 cube

1. Writes (once; kept in --dir) a Zarr cube `ndmi (time, y, x)` f32 of the given size, chunked
   (all times, chunk x chunk pixels): a seasonal NDMI-like signal, noise, 30 % clouds (NaN) and
   a clear-cut in 2018 in a quarter of the pixels, generated chunk by chunk (never whole in
   memory).
2. dask: `xr.open_zarr(...).ndmi.ogham.bfast_monitor("2016-01-01")` computed on a
   `distributed.LocalCluster(n_workers, processes=True, threads_per_worker=1)` whose workers run
   Ogham's kernels on one thread each (RAYON_NUM_THREADS=1); the break maps are computed into
   memory. Peak memory per worker: each worker's maximum resident set size.
3. The same pipeline with a trivial entry (`xs[:, 0]`), run once to warm the workers up, then
   timed: its time per chunk is the fixed cost of a chunk (Zarr read and decompression,
   transpose to [m][N], conversion, scheduling, result assembly).
4. The same on dask's threaded scheduler in this process (--workers threads sharing the
   process's kernel threads), for comparison with peers that do not run on worker processes.
5. In memory (unless --no-memory): the cube loaded and one call `ogham.bfast_monitor` on all
   pixels, using all cores; the maps must be bit-identical to dask's.
6. With --zeit, the peer on the same cube: `zeit.bfast_monitor(cube, "2016-01-01", order=3,
   h=0.25, period=10, alpha=0.05)` (zeit-cdts 2.2.0; `benches/python/setup.sh` installs it):
   first whether it runs on a fresh cluster of the same shape (zeit 2.2.0 does not: its compiled
   kernel cannot be pickled to worker processes), then timed on dask's threaded scheduler with
   --workers threads (n_jobs=1 per chunk) and, unless --no-memory, in memory with n_jobs=2. zeit places the observations on R's regular `ts` axis (23 per year
   here) where Ogham uses their dates, so the break maps are compared (share of pixels on which
   both flag a break or both do not), not required to be equal.
"""

import argparse
import os
import shutil
import time

import numpy as np

import ogham

TRIVIAL = "entry first [m][n] (xs: [m][n]f32) : [m]f32 = map (\\r -> r[0]) xs\n"


def make_block(shape, y0, x0, times):
    """One chunk of the cube, a deterministic function of its position."""
    nt, ny, nx = shape
    rng = np.random.default_rng([y0, x0])
    doy = (times - times.astype("datetime64[Y]")).astype("timedelta64[D]").astype(np.float64)
    season = 0.45 + 0.15 * np.sin(2 * np.pi * doy / 365.25)
    block = season[:, None, None] + 0.03 * rng.standard_normal((nt, ny, nx))
    cut = times >= np.datetime64("2018-03-01")
    yy, xx = np.mgrid[y0:y0 + ny, x0:x0 + nx]
    cleared = ((yy // 64 + xx // 64) % 4) == 0
    block[cut] -= 0.35 * cleared
    block[rng.random(block.shape) < 0.3] = np.nan
    return block.astype(np.float32)


def write_cube(path, ny, nx, nt, chunk):
    import dask.array as da
    import xarray as xr

    times = (np.datetime64("2010-01-01") + np.arange(nt) * np.timedelta64(16, "D")).astype(
        "datetime64[ns]")

    def block(block_info=None):
        info = block_info[None]
        (t0, t1), (y0, y1), (x0, x1) = info["array-location"]
        return make_block((t1 - t0, y1 - y0, x1 - x0), y0, x0, times[t0:t1])

    data = da.map_blocks(block, chunks=((nt,), chunk_sizes(ny, chunk), chunk_sizes(nx, chunk)),
                         dtype=np.float32)
    cube = xr.DataArray(data, dims=("time", "y", "x"), name="ndmi",
                        coords={"time": times, "y": 30.0 * np.arange(ny)[::-1],
                                "x": 30.0 * np.arange(nx)})
    cube.to_dataset().to_zarr(path, mode="w")


def chunk_sizes(n, chunk):
    return tuple(min(chunk, n - i) for i in range(0, n, chunk))


def worker_peak_rss_mib():
    """This process's peak resident set size (VmHWM; unlike getrusage's ru_maxrss it is not
    inherited from the parent that forked the worker)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, nargs=3, default=[2048, 2048, 256], metavar=("Y", "X", "T"))
    ap.add_argument("--chunk", type=int, default=512, help="pixels per chunk side")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/ogham-dask-bench")
    ap.add_argument("--no-memory", action="store_true", help="skip the in-memory call")
    ap.add_argument("--zeit", action="store_true", help="also time zeit-cdts' xarray API")
    args = ap.parse_args()
    import distributed
    import xarray as xr

    ny, nx, nt = args.size
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, f"cube_{ny}x{nx}x{nt}_c{args.chunk}.zarr")
    if not os.path.exists(path):
        t0 = time.perf_counter()
        write_cube(path + ".tmp", ny, nx, nt, args.chunk)
        shutil.move(path + ".tmp", path)
        print(f"wrote {path} in {time.perf_counter() - t0:.1f} s; run again to measure (the "
              f"peak memory of this process now includes the writing)")
        return
    pixels = ny * nx
    chunks = len(chunk_sizes(ny, args.chunk)) * len(chunk_sizes(nx, args.chunk))
    print(f"cube {ny} x {nx} x {nt} f32 ({pixels * nt * 4 / 2**30:.2f} GiB), {chunks} chunks of "
          f"{args.chunk} x {args.chunk} pixels; {args.workers} worker processes")

    os.environ["OGHAM_CACHE_DIR"] = os.path.join(args.dir, "cache")
    env = {"RAYON_NUM_THREADS": "1", "OGHAM_CACHE_DIR": os.environ["OGHAM_CACHE_DIR"]}

    def cluster():
        return distributed.LocalCluster(n_workers=args.workers, processes=True,
                                        threads_per_worker=1, dashboard_address=None, env=env)

    with cluster() as ogham_cluster, distributed.Client(ogham_cluster) as client:
        cube = xr.open_zarr(path).ndmi
        trivial = ogham.load(TRIVIAL)
        cube.ogham.apply(trivial.first).compute()  # warm-up: imports and compilation on workers
        t0 = time.perf_counter()
        cube.ogham.apply(trivial.first).compute()
        fixed = time.perf_counter() - t0
        t0 = time.perf_counter()
        maps = cube.ogham.bfast_monitor("2016-01-01")[["status", "break_year", "magnitude"]]
        maps = maps.compute()
        wall = time.perf_counter() - t0
        peaks = client.run(worker_peak_rss_mib)
        loads = client.run(ogham.load_count)
    print(f"dask:      {wall:8.1f} s  {pixels / wall:12.0f} pixels/s   peak RSS per worker "
          f"{', '.join(f'{v:.0f}' for v in peaks.values())} MiB   programs loaded per worker "
          f"{list(loads.values())}")
    print(f"fixed cost per chunk (trivial entry, same pipeline): "
          f"{fixed / chunks * args.workers * 1e3:.1f} ms of a worker ({fixed:.1f} s for "
          f"{chunks} chunks)")
    # dask's threaded scheduler in this process (the kernels release the GIL): the same chunks
    # on --workers threads, whose kernels share this process's pool of worker threads.
    t0 = time.perf_counter()
    threads = xr.open_zarr(path).ndmi.ogham.bfast_monitor("2016-01-01")[["status", "magnitude"]]
    threads = threads.compute(scheduler="threads", num_workers=args.workers)
    wall = time.perf_counter() - t0
    same = threads.status.equals(maps.status) and threads.magnitude.equals(maps.magnitude)
    print(f"dask, threads: {wall:8.1f} s  {pixels / wall:12.0f} pixels/s   {args.workers} threads "
          f"of one process; bit-identical to the cluster's: {same}")
    if not args.no_memory:
        t0 = time.perf_counter()
        stack = xr.open_zarr(path).ndmi.ogham.pixels()
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        history = maps.attrs["history_length"]  # the accessor's history, its defaults
        res = ogham.bundled("bfast").years(
            stack, ogham.accessor.fractional_years(xr.open_zarr(path).time.values), history,
            3, True, 0.25, 10, 0.05, np.nan)
        call = time.perf_counter() - t0
        same = np.array_equal(res[0], maps.status.values.ravel()) and \
            res[2].tobytes() == maps.magnitude.values.astype(np.float32).ravel().tobytes()
        print(f"in memory: {call:8.1f} s  {pixels / call:12.0f} pixels/s   one call, all cores "
              f"(+ {load:.1f} s to load the cube as [pixels][time]); peak RSS "
              f"{worker_peak_rss_mib():.0f} MiB; bit-identical to dask: {same}")
    if args.zeit:
        zeit_bfast(args, path, pixels, maps, cluster)


def zeit_bfast(args, path, pixels, maps, cluster):
    """Step 6: zeit-cdts' `bfast_monitor` on the same cube, on a cluster and in memory."""
    import distributed
    import xarray as xr
    import zeit

    params = dict(order=3, h=0.25, period=10, alpha=0.05)
    ogham_break = maps.status.values >= 0

    def agreement(ds):
        zeit_break = np.nan_to_num(ds.has_break.values) > 0
        return np.mean(zeit_break == ogham_break)

    try:
        with cluster() as zeit_cluster, distributed.Client(zeit_cluster) as client:
            cube = xr.open_zarr(path).ndmi
            zeit.bfast_monitor(cube[:, :64, :64], "2016-01-01", n_jobs=1, **params).compute()
    except Exception as error:  # zeit 2.2.0: its compiled kernel cannot be pickled
        print(f"zeit dask.distributed: fails ({type(error).__name__}: "
              f"{str(error).splitlines()[0][:160]})")
    else:
        print("zeit dask.distributed: works")
    # The threaded scheduler of one process (what zeit supports): same chunks, one thread each.
    cube = xr.open_zarr(path).ndmi
    zeit.bfast_monitor(cube[:, :64, :64], "2016-01-01", n_jobs=1, **params).compute()  # warm-up
    t0 = time.perf_counter()
    ds = zeit.bfast_monitor(cube, "2016-01-01", n_jobs=1, **params)
    ds = ds[["has_break", "breakpoint", "magnitude"]].compute(scheduler="threads",
                                                               num_workers=args.workers)
    wall = time.perf_counter() - t0
    print(f"zeit dask, threads: {wall:8.1f} s  {pixels / wall:12.0f} pixels/s   "
          f"{args.workers} threads of one process, peak RSS of this process "
          f"{worker_peak_rss_mib():.0f} MiB; same break/no break as Ogham on "
          f"{100 * agreement(ds):.2f} % of the pixels")
    if not args.no_memory:
        cube = xr.open_zarr(path).ndmi.load()
        t0 = time.perf_counter()
        ds = zeit.bfast_monitor(cube, "2016-01-01", n_jobs=2, **params)
        call = time.perf_counter() - t0
        print(f"zeit in memory: {call:8.1f} s  {pixels / call:12.0f} pixels/s   (n_jobs=2); "
              f"same break/no break as Ogham on {100 * agreement(ds):.2f} % of the pixels")


if __name__ == "__main__":
    main()
