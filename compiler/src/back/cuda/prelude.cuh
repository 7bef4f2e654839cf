// ---- Ogham CUDA prelude: types and the interpreter's scalar semantics ----
// Hand-written, except the section that replaces the `@scalar-steps` line: the device functions
// of integer division, float `%` and float-to-integer conversion, which `prelude.rs` writes from
// the shared description of scalar operations (`compiler/src/back/steps.rs`).
// NVRTC has no standard headers: the fixed-width types are declared here.
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

// The loop hooks of the performance model's counted code (`Emit::open_loop`): they tell it
// which iteration of which loop each access belongs to. Elsewhere they are nothing.
#ifndef OG_LOOP_ENTER
#define OG_LOOP_ENTER(n)
#define OG_LOOP_ITER(n)
#define OG_LOOP_EXIT(n)
#endif

// The record a failed check writes: the number of the check plus one (0: no failure), then the
// values its message needs, the point that failed, a lock and the number of the launch that
// failed. Of several failing points the lowest wins (the interpreter reports the first in
// order); of failures at the same point, the first to take the lock. Failures are rare, so a
// spin lock is cheap (threads of one warp make progress independently from sm_70 on); the
// record is read and written through `volatile`, past the other multiprocessors' L1 caches.
struct OgCtx {
  u64 site;
  i64 details[16];
  u64 point;
  u64 lock;
  u64 launch;
};

__device__ __noinline__ void og_fail(OgCtx* ctx, u64 launch, i64 point, i64 site, int n, const i64* details) {
  while (atomicCAS(&ctx->lock, 0ULL, 1ULL) != 0ULL) {
  }
  __threadfence();
  volatile OgCtx* record = ctx;
  if (record->site == 0 || (u64)point < record->point) {
    record->site = (u64)(site + 1);
    record->point = (u64)point;
    record->launch = launch;
    for (int k = 0; k < n; k++) record->details[k] = details[k];
  }
  __threadfence();
  atomicCAS(&ctx->lock, 1ULL, 0ULL);
}

// Whether a launch before this one (launches are numbered from 1 in order) has failed: every
// kernel then returns at once, as the interpreter stops at the first failure. The host reads
// the record only where it reads what the kernels made, not after each launch. The answer is
// the same for the whole grid: this launch's own failures name this launch.
__device__ __forceinline__ bool og_failed_before(OgCtx* ctx, u64 launch) {
  u64 failed = ((volatile OgCtx*)ctx)->launch;
  return failed != 0 && failed < launch;
}

// An array: element pointer, extents and strides (in elements), outermost first.
template <class T, int R> struct View {
  T* p;
  i64 d[R];
  i64 s[R];
};

// Row `i` of a view of rank R >= 2.
template <class T, int R> __device__ __forceinline__ View<T, R - 1> og_row(const View<T, R>& v, i64 i) {
  View<T, R - 1> r;
  r.p = v.p + i * v.s[0];
  for (int k = 1; k < R; k++) {
    r.d[k - 1] = v.d[k];
    r.s[k - 1] = v.s[k];
  }
  return r;
}

// A row-major view of `p` with the extents `d`, its elements `unit` apart (1: contiguous; an
// interleaved per-point array's: the number of threads in flight).
template <class T, int R>
__device__ __forceinline__ View<T, R> og_view(T* p, const i64 (&d)[R], i64 unit = 1) {
  View<T, R> v;
  v.p = p;
  i64 stride = unit;
  for (int k = R - 1; k >= 0; k--) {
    v.d[k] = d[k];
    v.s[k] = stride;
    stride *= d[k];
  }
  return v;
}

template <class T, int R> __device__ __forceinline__ i64 og_count(const View<T, R>& v) {
  i64 n = 1;
  for (int k = 0; k < R; k++) n *= v.d[k];
  return n;
}

template <class T, int R> __device__ bool og_same_shape(const View<T, R>& a, const View<T, R>& b) {
  for (int k = 0; k < R; k++)
    if (a.d[k] != b.d[k]) return false;
  return true;
}

// Copies `src` into `dst` (same extents). With `step` > 1 the outermost dimension is shared by
// `step` threads, thread `first` taking rows first, first+step, ...
template <class T, int R>
__device__ void og_copy(View<T, R> dst, View<T, R> src, i64 first = 0, i64 step = 1) {
  for (i64 i = first; i < src.d[0]; i += step) {
    if constexpr (R == 1) {
      dst.p[i * dst.s[0]] = src.p[i * src.s[0]];
    } else {
      og_copy(og_row(dst, i), og_row(src, i));
    }
  }
}

// Sets every row of `dst` to the scalar or array `x`.
template <class T> __device__ void og_fill(View<T, 1> dst, T x, i64 first = 0, i64 step = 1) {
  for (i64 i = first; i < dst.d[0]; i += step) dst.p[i * dst.s[0]] = x;
}
template <class T, int R>
__device__ void og_fill(View<T, R + 1> dst, View<T, R> x, i64 first = 0, i64 step = 1) {
  for (i64 i = first; i < dst.d[0]; i += step) og_copy(og_row(dst, i), x);
}

// Values as 64-bit slots (partial results of reductions and scans).
template <class T> __device__ __forceinline__ u64 og_bits(T x) {
  u64 b = 0;
  memcpy(&b, &x, sizeof(T));
  return b;
}
template <class T> __device__ __forceinline__ T og_unbits(u64 b) {
  T x;
  memcpy(&x, &b, sizeof(T));
  return x;
}

// Warp shuffles of any value of at most 8 bytes (block-level reductions and scans, `block.rs`):
// lane `l` gets the value of lane `l + d` (`og_shfl_down`) or `l - d` (`og_shfl_up`) of its
// warp, or its own when that lane is outside the warp. Every thread of the block calls them
// together (the warps are full: block sizes are multiples of 32).
template <class T> __device__ __forceinline__ T og_shfl_down(T x, unsigned d) {
  if constexpr (sizeof(T) == 8) {
    return og_unbits<T>(__shfl_down_sync(0xffffffffu, og_bits(x), d));
  } else {
    return og_unbits<T>((u64)__shfl_down_sync(0xffffffffu, (u32)og_bits(x), d));
  }
}
template <class T> __device__ __forceinline__ T og_shfl_up(T x, unsigned d) {
  if constexpr (sizeof(T) == 8) {
    return og_unbits<T>(__shfl_up_sync(0xffffffffu, og_bits(x), d));
  } else {
    return og_unbits<T>((u64)__shfl_up_sync(0xffffffffu, (u32)og_bits(x), d));
  }
}

// ---- integers: two's complement wrapping ----
template <class T> __device__ __forceinline__ T og_add(T x, T y) { return (T)((u64)x + (u64)y); }
template <class T> __device__ __forceinline__ T og_sub(T x, T y) { return (T)((u64)x - (u64)y); }
template <class T> __device__ __forceinline__ T og_mul(T x, T y) { return (T)((u64)x * (u64)y); }
template <class T> __device__ __forceinline__ T og_neg(T x) { return (T)(0ULL - (u64)x); }
template <class T> __device__ __forceinline__ bool og_is_neg(T x) { return x < (T)0; }

// @scalar-steps
template <class T> __device__ T og_ipow(T x, T y) {
  if (og_is_neg(y)) {
    if (x == (T)1) return (T)1;
    if (og_is_neg(x) && x == (T)-1) return og_rem(y, (T)2) == (T)0 ? (T)1 : x;
    return (T)0;
  }
  T acc = (T)1, base = x;
  while (y > (T)0) {
    if ((y & (T)1) == (T)1) acc = og_mul(acc, base);
    base = og_mul(base, base);
    y = (T)(y >> 1);
  }
  return acc;
}
// Shifts by a negative amount or at least the width shift everything out.
template <class T> __device__ __forceinline__ T og_shl(T x, T y) {
  return (og_is_neg(y) || (u64)y >= 8 * sizeof(T)) ? (T)0 : (T)((u64)x << (u64)y);
}
template <class T> __device__ __forceinline__ T og_shr(T x, T y) {
  if (og_is_neg(y) || (u64)y >= 8 * sizeof(T)) return og_is_neg(x) ? (T)-1 : (T)0;
  return (T)(x >> y);
}
template <class T> __device__ __forceinline__ T og_iabs(T x) { return og_is_neg(x) ? og_neg(x) : x; }
template <class T> __device__ __forceinline__ T og_isgn(T x) { return (T)((x > (T)0) - og_is_neg(x)); }

// ---- floats: sgn keeps NaN and +-0 ----
__device__ __forceinline__ float og_fsgn(float x) { return (isnan(x) || x == 0.0f) ? x : copysignf(1.0f, x); }
__device__ __forceinline__ double og_fsgn(double x) { return (isnan(x) || x == 0.0) ? x : copysign(1.0, x); }

// A slice `start, start+stride, ... (len elements)` of a dimension of extent `n` is valid as the
// interpreter defines it.
__device__ __forceinline__ bool og_slice_ok(i64 n, i64 start, i64 len, i64 stride) {
  if (stride == 0) return false;
  i64 sgn = stride > 0 ? 1 : -1;
  i64 end = len > 0 ? og_add(og_add(start, og_mul(len - 1, stride)), sgn) : og_add(start, og_mul(len, stride));
  if (stride > 0) return 0 <= start && start <= end && end <= n;
  return (start == end && -1 <= start && start <= n) || (-1 <= end && end < start && start < n);
}

// ---- memory made inside a kernel: a bump allocator over this thread's part of the arena ----
struct OgArena {
  char* base;
  i64 used;
  i64 cap;
};

// The bytes of a fresh array of extents `d` with elements of `size` bytes, by the checked size
// arithmetic of the other backends (`sizes.rs`; the CPU backend's `alloc_array`): a negative
// extent or a product that overflows asks for INT64_MAX bytes, which `og_alloc` refuses (out of
// memory, R0709) instead of a wrapped-around size.
template <int R> __device__ __forceinline__ i64 og_bytes(const i64 (&d)[R], i64 size) {
  const i64 impossible = 0x7fffffffffffffffLL;
  i64 n = 1;
  for (int k = 0; k < R; k++) {
    if (d[k] < 0 || (d[k] > 0 && n > impossible / d[k])) return impossible;
    n *= d[k];
  }
  return n > impossible / size ? impossible : n * size;
}

// `bytes` from the arena (16-byte aligned), or null when it is full.
__device__ __forceinline__ void* og_alloc(OgArena& a, i64 bytes) {
  if (bytes < 0 || bytes > a.cap - a.used) return 0;
  void* p = a.base + a.used;
  a.used += (bytes + 15) & ~15LL;
  return p;
}

// ---- per-point arrays interleaved across the threads in flight (the `layout` pass) ----
// One sub-arena per element size the kernel allocates (class c: elements of 2^c bytes), each a
// region of `cap[c] * n` elements; slot w of thread t is element `w * n + t` of its class's
// region. Distinct (w, t) are distinct elements, the regions are disjoint and all lie in the
// arena (`sum_c cap[c] * 2^c * n <= classes * stride * n`), so no two threads ever share a byte,
// whatever sizes each allocates in whatever order (divergent control flow included), and the n
// threads reading slot w of their arrays read n consecutive elements. Each class has `stride`
// bytes per thread of its own (a kernel's arrays of one size do not eat into another's share):
// the arena must hold `classes * stride` bytes for each of the n = gridDim.x * blockDim.x
// threads, `classes` being the number of bits set in the kernel's mask
// (`CudaKernel::lane_classes`).
//
// A thread takes the slots of arrays whose extents are the same in every thread (*uniform*:
// kernel inputs and constants, e.g. a K x K matrix) from the top of its share, the others from
// the bottom: threads that make the same uniform arrays in the same order (uniform control flow)
// then hold them at the same slots whatever the lengths of their other arrays, so a warp's
// accesses to them stay coalesced.
struct OgLanes {
  char* base[4];
  i64 used[4];  // slots this thread has taken from the bottom, per class
  i64 top[4];   // the first slot this thread has taken from the top, per class
  i64 cap[4];   // slots per thread, per class
  i64 n;        // threads in flight
  i64 t;        // this thread
};

// The sub-arenas of the classes in `mask` (bit c: elements of 2^c bytes), `stride` bytes per
// thread each.
__device__ __forceinline__ OgLanes og_lanes_init(char* arena, i64 stride, i64 t, i64 n, int mask) {
  OgLanes a;
  const i64 share = stride & ~15LL;
  char* at = arena;
  for (int c = 0; c < 4; c++) {
    a.base[c] = at;
    a.used[c] = 0;
    a.cap[c] = ((mask >> c) & 1) ? share >> c : 0;
    a.top[c] = a.cap[c];
    at += (a.cap[c] << c) * n;
  }
  a.n = n;
  a.t = t;
  return a;
}

// The first slot of a fresh array of `bytes` bytes of T (element w at `p + w * a.n`), or null
// when this thread's share of T's sub-arena is full. The thread takes the array's slot count
// rounded up to a power of two (as far as its share allows): neighbouring points whose arrays'
// extents differ a little (data-dependent lengths) then start their next arrays at the same
// slot, so those stay coalesced too. Any start is safe (the slots are the thread's own).
template <class T> __device__ __forceinline__ T* og_alloc_lanes(OgLanes& a, i64 bytes) {
  const int c = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
  const i64 slots = bytes / (i64)sizeof(T);
  const i64 room = a.top[c] - a.used[c];
  if (bytes < 0 || slots > room) return 0;
  i64 take = 1;
  while (take < slots) take <<= 1;
  T* p = (T*)a.base[c] + a.used[c] * a.n + a.t;
  a.used[c] += take < room ? take : room;
  return p;
}

// The first slot of a fresh array of `bytes` bytes of T whose extents are uniform, taken from
// the top of this thread's share (exactly its slot count), or null when the share is full.
template <class T> __device__ __forceinline__ T* og_alloc_lanes_uniform(OgLanes& a, i64 bytes) {
  const int c = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
  const i64 slots = bytes / (i64)sizeof(T);
  if (bytes < 0 || slots > a.top[c] - a.used[c]) return 0;
  a.top[c] -= slots;
  return (T*)a.base[c] + a.top[c] * a.n + a.t;
}

__device__ __forceinline__ void og_lanes_reset(OgLanes& a) {
  for (int c = 0; c < 4; c++) {
    a.used[c] = 0;
    a.top[c] = a.cap[c];
  }
}
// ---- memory of sequential loops given back (`reclaim.rs`) ----
// A loop whose body allocates takes a mark of its arena before it (`og_mark`); what its
// iterations made lies above the mark. Room a copy of a carried array takes is summed in an
// `OgSpace` (bytes at c[0] for a contiguous arena; slots per element-size class for `og_lanes`).
struct OgSpace {
  i64 c[4];
};
struct OgLanesMark {
  i64 used[4];
  i64 top[4];
};

__device__ __forceinline__ i64 og_mark(const OgArena& a) { return a.used; }
__device__ __forceinline__ OgLanesMark og_mark(const OgLanes& a) {
  OgLanesMark m;
  for (int c = 0; c < 4; c++) {
    m.used[c] = a.used[c];
    m.top[c] = a.top[c];
  }
  return m;
}

// Whether `p` points into memory handed out since `mark`.
__device__ __forceinline__ bool og_made_since(const OgArena& a, i64 mark, const void* p) {
  const unsigned long long q = (unsigned long long)p, base = (unsigned long long)a.base;
  return q >= base + mark && q < base + a.used;
}
template <class T>
__device__ __forceinline__ bool og_made_since(const OgLanes& a, const OgLanesMark& m, const T* p) {
  const int c = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
  const unsigned long long q = (unsigned long long)p, base = (unsigned long long)a.base[c];
  if (q < base || (q - base) % sizeof(T) != 0) return false;
  const i64 e = (i64)((q - base) / sizeof(T));
  if (e >= a.cap[c] * a.n || e % a.n != a.t) return false;
  const i64 slot = e / a.n;
  return (slot >= m.used[c] && slot < a.used[c]) || (slot >= a.top[c] && slot < m.top[c]);
}

// Whether the iterations since `mark` hold more than a third of the room the loop found.
__device__ __forceinline__ bool og_reclaim_due(const OgArena& a, i64 mark) {
  return a.used - mark > (a.cap - mark) / 3;
}
__device__ __forceinline__ bool og_reclaim_due(const OgLanes& a, const OgLanesMark& m) {
  bool due = false;
  for (int c = 0; c < 4; c++)
    due |= (a.used[c] - m.used[c]) + (m.top[c] - a.top[c]) > (m.top[c] - m.used[c]) / 3;
  return due;
}

// Adds the room a fresh copy of `v` takes (at most: `og_alloc_lanes` may take less).
template <class T, int R>
__device__ __forceinline__ void og_add_space(const OgArena&, OgSpace& s, const View<T, R>& v) {
  const i64 bytes = og_bytes<R>(v.d, (i64)sizeof(T));
  s.c[0] = bytes > 0x7fffffffffffffffLL - s.c[0] - 15 ? 0x7fffffffffffffffLL : s.c[0] + ((bytes + 15) & ~15LL);
}
template <class T, int R>
__device__ __forceinline__ void og_add_space(const OgLanes&, OgSpace& s, const View<T, R>& v) {
  const int c = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
  const i64 slots = og_bytes<R>(v.d, (i64)sizeof(T)) / (i64)sizeof(T);
  i64 take = 1;
  while (take < slots && take < ((i64)1 << 61)) take <<= 1;
  s.c[c] = take > 0x7fffffffffffffffLL - s.c[c] ? 0x7fffffffffffffffLL : s.c[c] + take;
}

// Leaves a gap of `s` above the mark, so that copies made now lie clear of the copies made after
// `og_rewind` (which take at most `s` from the mark).
__device__ __forceinline__ void og_reserve(OgArena& a, i64 mark, const OgSpace& s) {
  if (s.c[0] > a.cap - mark) a.used = a.cap + 1;  // the next allocation fails: out of memory
  else if (a.used < mark + s.c[0]) a.used = mark + s.c[0];
}
__device__ __forceinline__ void og_reserve(OgLanes& a, const OgLanesMark& m, const OgSpace& s) {
  for (int c = 0; c < 4; c++) {
    if (s.c[c] > m.top[c] - m.used[c]) a.used[c] = a.top[c] + 1;
    else if (a.used[c] < m.used[c] + s.c[c]) a.used[c] = m.used[c] + s.c[c];
  }
}

__device__ __forceinline__ void og_rewind(OgArena& a, i64 mark) { a.used = mark; }
__device__ __forceinline__ void og_rewind(OgLanes& a, const OgLanesMark& m) {
  for (int c = 0; c < 4; c++) {
    a.used[c] = m.used[c];
    a.top[c] = m.top[c];
  }
}
