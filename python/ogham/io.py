"""Raster I/O for the example path (needs rioxarray): a stack of GeoTIFFs as a `(time, y, x)`
cube with its georeferencing, and result maps written back as GeoTIFFs with the input's."""

import numpy as np
import rioxarray  # noqa: F401  (registers `.rio`)
import xarray as xr


def open_geotiff_stack(paths, times, band=1, chunks=None):
    """One band of each GeoTIFF in `paths` (same grid), stacked along `time` (datetimes
    `times`, one per file) into a DataArray `(time, y, x)` with the files' CRS and transform.
    `chunks` (e.g. `{"x": 512, "y": 512}`) makes it dask-backed."""
    paths = list(paths)
    times = np.asarray(times, dtype="datetime64[ns]")
    if len(paths) != len(times):
        raise ValueError(f"open_geotiff_stack(): {len(paths)} files but {len(times)} times")
    layers = [rioxarray.open_rasterio(p, chunks=chunks, masked=True).sel(band=band, drop=True)
              for p in paths]
    cube = xr.concat(layers, dim=xr.DataArray(times, dims="time", name="time"),
                     join="exact", combine_attrs="drop_conflicts")
    return cube.rio.write_crs(layers[0].rio.crs)


def to_geotiff(da, path, like=None, **kwargs):
    """Writes map `da` (`(y, x)`; booleans as uint8, datetimes not: pass `break_year`) to
    GeoTIFF `path`, georeferenced like `like` (default: `da`'s own CRS and coordinates)."""
    if np.issubdtype(da.dtype, np.datetime64):
        raise TypeError("to_geotiff(): GeoTIFF has no datetime type; write `break_year` (a "
                        "fractional year) or `status` instead of `break_time`")
    if da.dtype == bool:
        da = da.astype(np.uint8)
    if like is not None:
        da = da.rio.write_crs(like.rio.crs).rio.write_transform(like.rio.transform())
    da.rio.to_raster(path, **kwargs)
