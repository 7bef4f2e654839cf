"""The two user-written methods of the numba comparison, written as a scientist writes them with
numba: a function per pixel compiled with `@njit`, and the pixels spread over the cores with
`prange` (`@njit(parallel=True)`). Same definitions as `programs/trend.og` (docs/trend.md) and
`programs/ewmacd.og` (docs/ewmacd.md), computed in float64.
"""

import math

import numpy as np
from numba import njit, prange


# ---- Mann-Kendall and Theil-Sen (programs/trend.og) ----

@njit(cache=True)
def _normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@njit(cache=True)
def _trend_pixel(y, t, out):
    """out: slope, intercept, p, z, tau, s, var_s, n."""
    valid = ~np.isnan(y)
    ys = y[valid]
    ts = t[valid]
    n = ys.size
    out[7] = n
    if n < 2:
        out[:] = np.nan
        out[5] = 0.0
        out[6] = 0.0
        out[7] = n
        return
    s = 0
    slopes = np.empty(n * (n - 1) // 2)
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            d = ys[j] - ys[i]
            s += (d > 0) - (d < 0)
            slopes[k] = d / (ts[j] - ts[i])
            k += 1
    # ties: groups of equal values
    srt = np.sort(ys)
    ties = 0.0
    pairs = 0.0
    g = 1
    for i in range(1, n + 1):
        if i < n and srt[i] == srt[i - 1]:
            g += 1
        else:
            ties += g * (g - 1) * (2 * g + 5)
            pairs += g * (g - 1) / 2
            g = 1
    var_s = (n * (n - 1) * (2 * n + 5) - ties) / 18.0
    if s > 0:
        z = (s - 1) / math.sqrt(var_s)
    elif s < 0:
        z = (s + 1) / math.sqrt(var_s)
    else:
        z = 0.0
    n0 = n * (n - 1) / 2
    slope = np.median(slopes)
    out[0] = slope
    out[1] = np.median(ys) - slope * np.median(ts)
    out[2] = 2.0 * _normal_cdf(-abs(z))
    out[3] = z
    out[4] = s / math.sqrt(n0 * (n0 - pairs)) if n0 > pairs else np.nan
    out[5] = s
    out[6] = var_s


@njit(parallel=True, cache=True)
def trend(Y, t):
    """Per pixel of `Y [m][N]` (NaN = missing) with dates `t [N]`: rows slope, intercept, p, z,
    tau, s, var_s, n of an `[8][m]` array."""
    m = Y.shape[0]
    out = np.empty((m, 8))
    for i in prange(m):
        _trend_pixel(Y[i].astype(np.float64), t, out[i])
    return out.T.copy()


# ---- EWMACD (programs/ewmacd.og) ----

@njit(cache=True)
def design(t, k):
    x = np.empty((t.size, 2 * k + 1))
    for i in range(t.size):
        x[i, 0] = 1.0
        for j in range(1, k + 1):
            a = 2.0 * math.pi * ((j * t[i]) % 1.0)
            x[i, 2 * j - 1] = math.cos(a)
            x[i, 2 * j] = math.sin(a)
    return x


@njit(cache=True)
def _fit(x, y, n, beta0, limit):
    p = x.shape[1]
    gram = np.zeros((p, p))
    rhs = np.zeros(p)
    count = 0
    for i in range(n):
        if not np.isnan(y[i]) and abs(y[i] - x[i] @ beta0) <= limit:
            count += 1
            for a in range(p):
                rhs[a] += x[i, a] * y[i]
                for b in range(p):
                    gram[a, b] += x[i, a] * x[i, b]
    if count < p:
        return np.full(p, np.nan), np.nan, count
    beta = np.linalg.solve(gram, rhs)
    ss = 0.0
    for i in range(n):
        if not np.isnan(y[i]) and abs(y[i] - x[i] @ beta0) <= limit:
            r = y[i] - x[i] @ beta
            ss += r * r
    return beta, math.sqrt(ss / (count - p)) if count > p else np.nan, count


@njit(cache=True)
def _ewmacd_pixel(x, y, n, lam, L, xbar, persistence, codes):
    p = x.shape[1]
    beta0, sigma0, _ = _fit(x, y, n, np.zeros(p), np.inf)
    beta, sigma, count = _fit(x, y, n, beta0, xbar * sigma0)
    if count < p + 1 or not sigma > 0:
        return -2
    c = lam / (2 - lam)
    keep = (1 - lam) * (1 - lam)
    z, decay, code, run, start, first = 0.0, 1.0, 0, 0, 0, -1
    for i in range(n, y.size):
        if np.isnan(y[i]):
            codes[i] = code
            continue
        z = lam * (y[i] - x[i] @ beta) + (1 - lam) * z
        decay *= keep
        code = int(z / (L * sigma * math.sqrt(c * (1 - decay))))
        codes[i] = code
        run = run + 1 if code < 0 else 0
        if run == 1:
            start = i
        if first < 0 and run == persistence:
            first = start
    return first


@njit(parallel=True, cache=True)
def ewmacd(Y, t, n_train, k, lam, L, xbar, persistence):
    """(first [m] i64, codes [m][N] i32) of every pixel of `Y [m][N]`."""
    m, N = Y.shape
    x = design(t, k)
    first = np.empty(m, dtype=np.int64)
    codes = np.zeros((m, N), dtype=np.int32)
    for i in prange(m):
        first[i] = _ewmacd_pixel(x, Y[i].astype(np.float64), n_train, lam, L, xbar,
                                 persistence, codes[i])
    return first, codes
