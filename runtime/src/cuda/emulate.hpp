// ---- Ogham CUDA emulation: the generated CUDA C compiled for the host (g++) ----
// Every GPU thread of a block is an OS thread; blocks run one after another; `__syncthreads`
// is a barrier of the block's threads, which a thread leaves when its kernel returns (as the
// hardware stops waiting for exited threads); warp shuffles are exchanges between two such
// barriers. Shared memory is one buffer (blocks are sequential). Used to test the CUDA
// backend's code and launch plans without a GPU.
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __shared__
#define __align__(n)

struct og_dim3 {
  unsigned x, y, z;
};
static thread_local og_dim3 threadIdx, blockIdx;
static og_dim3 blockDim, gridDim;
#ifdef OG_MODEL
// The performance model (`model/model.hpp`) runs a block's threads as fibers on one OS thread
// and blocks on several: shared memory per OS thread, `__syncthreads` a switch of fibers.
alignas(16) static thread_local char og_shared[1 << 20];
void __syncthreads();
#else
static std::barrier<>* og_block_barrier;
alignas(16) char og_shared[1 << 20];

inline void __syncthreads() { og_block_barrier->arrive_and_wait(); }
#endif
// Warp shuffles: warps are 32 consecutive threads of a block. Each call is an exchange through
// one slot per thread between two barriers of the whole block, so every thread of the block must
// make the same calls (as the generated code's block-level reductions and scans do); a lane
// whose source is outside its warp (or past the block's last thread) gets its own value.
#ifdef OG_MODEL
alignas(16) static thread_local unsigned long long og_lane_values[1024];
void og_shuffled();  // counted by the model (`model.hpp`)
#else
alignas(16) static unsigned long long og_lane_values[1024];
#endif
template <class T> T og_shuffle_from(T x, long long source) {
  og_lane_values[threadIdx.x] = (unsigned long long)x;
  __syncthreads();
  const bool inside = source >= 0 && source < (long long)blockDim.x &&
                      source / 32 == (long long)threadIdx.x / 32;
  const T y = inside ? (T)og_lane_values[source] : x;
  __syncthreads();
#ifdef OG_MODEL
  og_shuffled();
#endif
  return y;
}
template <class T> T __shfl_down_sync(unsigned, T x, unsigned d) {
  return og_shuffle_from(x, (long long)threadIdx.x + d);
}
template <class T> T __shfl_up_sync(unsigned, T x, unsigned d) {
  return og_shuffle_from(x, (long long)threadIdx.x - d);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected,
                                    unsigned long long desired) {
  std::atomic_ref<unsigned long long>(*p).compare_exchange_strong(expected, desired);
  return expected;
}
inline long long atomicMax(long long* p, long long v) {
  std::atomic_ref<long long> a(*p);
  long long old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
inline float __int_as_float(int x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
inline double __longlong_as_double(long long x) {
  double d;
  std::memcpy(&d, &x, sizeof d);
  return d;
}
// CUDA's device overloads of the math functions (float and double).
using std::acos, std::asin, std::atan, std::atan2, std::ceil, std::copysign, std::cos,
    std::cosh, std::exp, std::fabs, std::floor, std::fmax, std::fmin, std::fmod, std::isinf,
    std::isnan, std::log, std::log10, std::log2, std::pow, std::rint, std::sin, std::sinh,
    std::sqrt, std::tan, std::tanh, std::trunc;

// ---- launching: every kernel is called through `og_call_<name>(params)` ----
typedef unsigned long long og_u64;
#include <type_traits>
#include <utility>
template <class T> T og_param(og_u64 x) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(x);
  } else {
    return (T)x;
  }
}
template <class... A, std::size_t... I>
void og_call_with(void (*f)(A...), const og_u64* p, std::index_sequence<I...>) {
  f(og_param<A>(p[I])...);
}
template <class... A> void og_call(void (*f)(A...), const og_u64* p) {
  og_call_with(f, p, std::index_sequence_for<A...>{});
}

#include <mutex>
#ifndef OG_MODEL
// Runs `grid` blocks of `block` threads, one block after another. Launches of this library
// (one program; concurrent runs share it) take turns: the dimensions, barrier and shared
// memory are global.
extern "C" void og_emulate(void (*call)(const og_u64*), unsigned grid, unsigned block,
                           const og_u64* params) {
  static std::mutex one_launch_at_a_time;
  std::lock_guard<std::mutex> lock(one_launch_at_a_time);
  blockDim = {block, 1, 1};
  gridDim = {grid, 1, 1};
  for (unsigned b = 0; b < grid; b++) {
    std::barrier<> barrier(block);
    og_block_barrier = &barrier;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; t++) {
      threads.emplace_back([&barrier, call, params, b, t] {
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        call(params);
        barrier.arrive_and_drop();
      });
    }
    for (auto& thread : threads) thread.join();
  }
}
#endif
// ---- end of emulation ----
