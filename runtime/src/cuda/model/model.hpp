// ---- Ogham CUDA performance model: the emulation, instrumented ----
// Compiled after `emulate.hpp` with g++'s `-fsanitize=kernel-address` and
// `asan-instrumentation-with-call-threshold=0`, so that every load and store of the kernels
// calls one of the `__asan_*` hooks below with its address. A hook keeps the access when the
// thread's warp is sampled and the address is device memory (the model's region) or shared
// memory (`og_shared`); everything else (the stack, the host's own data) is ignored. Float
// operations of counted kernels (`Counting::Counted`) pass through `og_flop`/`og_special`, which
// count per thread. A block's threads run as fibers (below); the sampled warps' traces go to
// the model (`sink`) after each block, and the counts of all threads are summed.
#include <cstdint>

// Every call inside a kernel is inlined (the prelude's helpers: `og_copy`, `og_fill`, ...), so
// that the line tables trace an access in a helper to the call it was made for (`code.rs`).
#undef __global__
#define __global__ __attribute__((flatten))

struct og_rec {
  og_u64 addr;
  unsigned site;  // the hook's return address, truncated: one per access in the code
  unsigned char size;
  unsigned char kind;  // bit 0: store; bit 1: shared memory
  unsigned short path;  // the thread's loop path when it made the access, folded to 16 bits
};
static_assert(sizeof(og_rec) == 16, "records are 16 bytes, as the model reads them");

static og_u64 og_device_lo, og_device_hi;
static thread_local bool og_recording;
static thread_local std::vector<og_rec>* og_trace;
// The running thread's loop path: a hash of the iteration of every loop of the generated code
// it is in (the hooks below), so that a warp's request groups only its lanes' accesses of the
// same iterations, as a GPU runs them (`warps.rs`): a lane that has left an inner loop waits for
// the others before the next iteration of the outer one.
static thread_local og_u64* og_path;

static inline og_u64 og_mix(og_u64 path, og_u64 loop, og_u64 iteration) {
  og_u64 x = path ^ (loop * 0x9e3779b97f4a7c15ULL) ^ (iteration + 0x632be59bd9b4e019ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// The loop hooks of counted code (`Emit::open_loop`): the path before loop `n`, each of its
// iterations, and the path after it.
#define OG_LOOP_ENTER(n)               \
  const og_u64 og_path_##n = *og_path; \
  og_u64 og_iteration_##n = 0;
#define OG_LOOP_ITER(n) *og_path = og_mix(og_path_##n, n, og_iteration_##n++);
#define OG_LOOP_EXIT(n) *og_path = og_path_##n;
// f32 flops, f64 flops, f32 special, f64 special, warp shuffles (per thread)
static thread_local og_u64 og_counts[5];

template <class T> inline T og_flop(T x) {
  og_counts[sizeof(T) == 8 ? 1 : 0]++;
  return x;
}
template <class T> inline T og_special(T x) {
  og_counts[sizeof(T) == 8 ? 3 : 2]++;
  return x;
}
// A warp shuffle (`emulate.hpp`): one warp instruction per warp, no memory access.
void og_shuffled() { og_counts[4]++; }

__attribute__((no_sanitize_address)) static inline void og_record(uintptr_t a, unsigned size,
                                                                   unsigned store,
                                                                   void* site) {
  if (!og_recording) return;
  unsigned kind = store;
  if (a - og_device_lo < og_device_hi - og_device_lo) {
  } else if (a - (uintptr_t)og_shared < sizeof og_shared) {
    kind |= 2;
  } else {
    return;
  }
  og_u64 p = *og_path;
  auto folded = (unsigned short)(p ^ (p >> 16) ^ (p >> 32) ^ (p >> 48));
  og_trace->push_back({(og_u64)a, (unsigned)(uintptr_t)site, (unsigned char)size,
                       (unsigned char)kind, folded});
}

#define OG_HOOKS(n)                                                                          \
  extern "C" __attribute__((no_sanitize_address, noinline)) void __asan_load##n##_noabort(   \
      uintptr_t a) {                                                                         \
    og_record(a, n, 0, __builtin_return_address(0));                                         \
  }                                                                                          \
  extern "C" __attribute__((no_sanitize_address, noinline)) void __asan_store##n##_noabort(  \
      uintptr_t a) {                                                                         \
    og_record(a, n, 1, __builtin_return_address(0));                                         \
  }
OG_HOOKS(1)
OG_HOOKS(2)
OG_HOOKS(4)
OG_HOOKS(8)
OG_HOOKS(16)
extern "C" __attribute__((no_sanitize_address, noinline)) void __asan_loadN_noabort(uintptr_t a,
                                                                                   size_t n) {
  og_record(a, n > 255 ? 255 : (unsigned)n, 0, __builtin_return_address(0));
}
extern "C" __attribute__((no_sanitize_address, noinline)) void __asan_storeN_noabort(uintptr_t a,
                                                                                    size_t n) {
  og_record(a, n > 255 ? 255 : (unsigned)n, 1, __builtin_return_address(0));
}
extern "C" void __asan_handle_no_return() {}

// The model's side: `sink(cx, warp_lanes, traces, lengths)` for each sampled warp of a block.
typedef void (*og_sink_fn)(void* cx, unsigned lanes, const og_rec* const* traces,
                           const og_u64* lengths);

// ---- running blocks: a block's threads are fibers on one OS thread ----
// A GPU thread is a fiber with its own stack (a switch of stacks in assembly on x86-64,
// `ucontext` elsewhere); `__syncthreads` switches back to the
// block's scheduler, which runs every live fiber up to its next barrier (or its end) in turn,
// so a pass of the scheduler is one barrier phase. Making an OS thread per GPU thread, and
// waking 256 of them at every barrier, would cost far more than the kernels.
// Stack of one GPU thread (only the pages it touches take memory).
constexpr std::size_t OG_FIBER_STACK = 256 << 10;

static thread_local void (*og_kernel)(const og_u64*);
static thread_local const og_u64* og_kernel_params;

#if defined(__x86_64__)
// A switch of stacks without a system call (`swapcontext` saves the signal mask, two system
// calls per switch): `og_switch(&from, to)` pushes the callee-saved registers, stores the
// stack pointer in `from`, and pops the same registers from stack pointer `to`.
extern "C" void og_switch(void** from, void* to);
asm(R"(
  .text
  .globl og_switch
  .type og_switch, @function
og_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
)");

struct og_fiber {
  void* sp;
  bool done;
};
static thread_local void* og_scheduler;
static thread_local og_fiber* og_running;

[[noreturn]] static void og_fiber_main() {
  og_kernel(og_kernel_params);
  og_running->done = true;
  void* unused;
  og_switch(&unused, og_scheduler);
  __builtin_unreachable();
}

// A fresh fiber on `stack`: six zero registers and `og_fiber_main` as the return address, so
// that the first switch to it enters `og_fiber_main` with the stack aligned as after a call.
static void og_fiber_start(og_fiber& f, char* stack) {
  auto top = (uintptr_t)(stack + OG_FIBER_STACK) & ~(uintptr_t)15;
  auto* sp = (void**)(top - 64);
  for (int k = 0; k < 6; k++) sp[k] = nullptr;
  sp[6] = (void*)&og_fiber_main;
  sp[7] = nullptr;
  f.sp = sp;
  f.done = false;
}
static void og_fiber_resume(og_fiber& f) {
  og_running = &f;
  og_switch(&og_scheduler, f.sp);
}
void __syncthreads() { og_switch(&og_running->sp, og_scheduler); }
#else
#include <ucontext.h>
struct og_fiber {
  ucontext_t context;
  bool done;
};
static thread_local ucontext_t og_scheduler;
static thread_local og_fiber* og_running;

static void og_fiber_main() {
  og_kernel(og_kernel_params);
  og_running->done = true;
}
static void og_fiber_start(og_fiber& f, char* stack) {
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = stack;
  f.context.uc_stack.ss_size = OG_FIBER_STACK;
  f.context.uc_link = &og_scheduler;
  makecontext(&f.context, og_fiber_main, 0);
  f.done = false;
}
static void og_fiber_resume(og_fiber& f) {
  og_running = &f;
  swapcontext(&og_scheduler, &f.context);
}
void __syncthreads() { swapcontext(&og_running->context, &og_scheduler); }
#endif

// One OS thread's fibers, stacks and traces.
struct og_worker {
  std::vector<og_fiber> fibers;
  std::vector<char> stacks;
  std::vector<std::vector<og_rec>> traces;
  std::vector<og_u64> paths;
  og_u64 counts[5] = {0, 0, 0, 0, 0};
  explicit og_worker(unsigned block)
      : fibers(block),
        stacks((std::size_t)block * OG_FIBER_STACK),
        traces(block),
        paths(block) {}
};

// Runs block `b` on the calling thread; records the threads of the warps set in `mask`.
static void og_run_block(og_worker& w, void (*call)(const og_u64*), const og_u64* params,
                         unsigned b, unsigned block, unsigned mask) {
  og_kernel = call;
  og_kernel_params = params;
  blockIdx = {b, 0, 0};
  for (unsigned t = 0; t < block; t++) {
    og_fiber_start(w.fibers[t], w.stacks.data() + (std::size_t)t * OG_FIBER_STACK);
    w.paths[t] = 0;
  }
  for (auto& c : og_counts) c = 0;
  for (bool live = true; live;) {
    live = false;
    for (unsigned t = 0; t < block; t++) {
      if (w.fibers[t].done) continue;
      live = true;
      threadIdx = {t, 0, 0};
      og_trace = &w.traces[t];
      og_path = &w.paths[t];
      og_recording = (mask >> (t / 32)) & 1;
      og_fiber_resume(w.fibers[t]);
      og_recording = false;
    }
  }
  for (int k = 0; k < 5; k++) w.counts[k] += og_counts[k];
}

// Hands the sampled warps of a block that `w` ran to `sink`, then forgets their traces.
static void og_sink_block(og_worker& w, unsigned block, unsigned mask, og_sink_fn sink,
                          void* cx) {
  for (unsigned warp = 0; warp * 32 < block; warp++) {
    if (!((mask >> warp) & 1)) continue;
    const unsigned lanes = block - warp * 32 < 32 ? block - warp * 32 : 32;
    const og_rec* ptrs[32];
    og_u64 lengths[32];
    for (unsigned l = 0; l < lanes; l++) {
      ptrs[l] = w.traces[warp * 32 + l].data();
      lengths[l] = w.traces[warp * 32 + l].size();
    }
    sink(cx, lanes, ptrs, lengths);
    for (unsigned l = 0; l < lanes; l++) {
      w.traces[warp * 32 + l].clear();
      w.traces[warp * 32 + l].shrink_to_fit();
    }
  }
}

// Runs `grid` blocks of `block` threads: `workers` OS threads take a block each, a round at a
// time; after each round the sampled warps go to `sink` in block order (so that the model's
// counts do not depend on timing). Adds the float and shuffle counts of every thread to
// `counts`. Device memory is [`lo`, `hi`).
extern "C" void og_model_run(void (*call)(const og_u64*), unsigned grid, unsigned block,
                             const og_u64* params, const unsigned* warp_masks, og_sink_fn sink,
                             void* cx, og_u64 lo, og_u64 hi, og_u64* counts, unsigned workers) {
  static std::mutex one_launch_at_a_time;
  std::lock_guard<std::mutex> lock(one_launch_at_a_time);
  og_device_lo = lo;
  og_device_hi = hi;
  blockDim = {block, 1, 1};
  gridDim = {grid, 1, 1};
  std::vector<og_worker> pool;
  for (unsigned k = 0; k < workers; k++) pool.emplace_back(block);
  for (unsigned first = 0; first < grid; first += workers) {
    const unsigned round = grid - first < workers ? grid - first : workers;
    std::vector<std::thread> threads;
    for (unsigned k = 1; k < round; k++) {
      threads.emplace_back([&, k] {
        og_run_block(pool[k], call, params, first + k, block, warp_masks[first + k]);
      });
    }
    og_run_block(pool[0], call, params, first, block, warp_masks[first]);
    for (auto& thread : threads) thread.join();
    for (unsigned k = 0; k < round; k++) {
      og_sink_block(pool[k], block, warp_masks[first + k], sink, cx);
    }
  }
  for (auto& w : pool) {
    for (int k = 0; k < 5; k++) counts[k] += w.counts[k];
  }
}
// ---- end of the model's instrumentation ----
