// ---- Data kernels: host steps that only make or move data, run on the device ----
// The executor launches these itself (`runtime/src/cuda/steps.rs`; their names are
// `ogham_ir::abi::CUDA_DATA_KERNELS`), so that an array the host program makes or rearranges
// only for kernels never crosses PCIe. Any block size; blocks take work `blockIdx.x,
// blockIdx.x + gridDim.x, ...`. Elements are moved as integers of their width.

// `iota(n)`.
extern "C" __global__ void og_iota(i64* out, i64 n) {
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += step) out[i] = i;
}

// `rearrange` of an array of rank at most 8, element by element in the result's order (its
// writes coalesce): `d[k]` is the result's extent along axis k, `s[k]` the stride of the source
// (in elements) along that axis.
template <class T>
__device__ __forceinline__ void og_permute(T* out, const T* in, i64 n, i64 rank, const i64* d,
                                           const i64* s) {
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += step) {
    i64 rest = i, from = 0;
    for (i64 k = rank - 1; k >= 0; k--) {
      from += rest % d[k] * s[k];
      rest /= d[k];
    }
    out[i] = in[from];
  }
}

// The transpose of a `[rows][cols]` matrix, through 32 × 32 tiles in shared memory
// (`32 · 33 · sizeof(T)` bytes), so that both the reads and the writes coalesce.
template <class T>
__device__ __forceinline__ void og_transpose(T* out, const T* in, i64 rows, i64 cols) {
  extern __shared__ __align__(16) char og_shared[];
  T* tile = (T*)og_shared;
  const i64 tiles_c = (cols + 31) / 32;
  for (i64 t = blockIdx.x; t < (rows + 31) / 32 * tiles_c; t += gridDim.x) {
    const i64 r0 = t / tiles_c * 32, c0 = t % tiles_c * 32;
    for (i64 k = threadIdx.x; k < 1024; k += blockDim.x) {
      const i64 r = r0 + k / 32, c = c0 + k % 32;
      if (r < rows && c < cols) tile[k / 32 * 33 + k % 32] = in[r * cols + c];
    }
    __syncthreads();
    for (i64 k = threadIdx.x; k < 1024; k += blockDim.x) {
      const i64 c = c0 + k / 32, r = r0 + k % 32;
      if (r < rows && c < cols) out[c * rows + r] = tile[k % 32 * 33 + k / 32];
    }
    __syncthreads();
  }
}

// `replicate` of a row of `row_len` elements: `out`'s `n` elements (whole rows) in order, so
// that the writes coalesce; the row's reads hit the cache.
template <class T>
__device__ __forceinline__ void og_replicate(T* out, const T* row, i64 n, i64 row_len) {
  const i64 step = (i64)gridDim.x * blockDim.x;
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = row[i % row_len];
}

#define OG_DATA_KERNELS(B, T)                                                                  \
  extern "C" __global__ void og_permute_##B(T* out, const T* in, i64 n, i64 rank, i64 d0,      \
                                            i64 d1, i64 d2, i64 d3, i64 d4, i64 d5, i64 d6,    \
                                            i64 d7, i64 s0, i64 s1, i64 s2, i64 s3, i64 s4,    \
                                            i64 s5, i64 s6, i64 s7) {                          \
    const i64 d[8] = {d0, d1, d2, d3, d4, d5, d6, d7}, s[8] = {s0, s1, s2, s3, s4, s5, s6, s7}; \
    og_permute(out, in, n, rank, d, s);                                                        \
  }                                                                                            \
  extern "C" __global__ void og_transpose_##B(T* out, const T* in, i64 rows, i64 cols) {      \
    og_transpose(out, in, rows, cols);                                                         \
  }                                                                                            \
  extern "C" __global__ void og_replicate_##B(T* out, const T* row, i64 n, i64 row_len) {      \
    og_replicate(out, row, n, row_len);                                                        \
  }
OG_DATA_KERNELS(1, i8)
OG_DATA_KERNELS(2, i16)
OG_DATA_KERNELS(4, i32)
OG_DATA_KERNELS(8, i64)
#undef OG_DATA_KERNELS
// ---- end of prelude ----
