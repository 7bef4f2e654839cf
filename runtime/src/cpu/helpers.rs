//! The run-time helpers that generated CPU code calls (`ogham_compiler::back::cpu::helpers`
//! declares them), implemented with the IR's scalar semantics (`crate::scalar`), and the
//! per-worker context record with its arena. The helpers are exported C symbols of their own
//! names, which the kernels of ahead-of-time objects (`aot.rs`) link against; the JIT binds
//! them by the addresses of [`addresses`], which the code generator checks are complete.

use crate::index::{IdxArg, check_index};
use crate::scalar as ops;
use crate::value::Scalar;
use ogham_ir::abi::{CTX_GENERATED_BYTES, MATH_FNS, MAX_DETAILS};
use ogham_ir::op::BinOp;
use ogham_ir::types::PrimType;

/// The context record of one worker (layout: `ogham_ir::abi`, `CTX_*`).
#[repr(C)]
pub struct Ctx {
    pub site: i64,
    pub details: [i64; MAX_DETAILS],
    arena: Arena,
    /// Where a loop's carried arrays wait while the loop's memory is given back
    /// (`ogham_scratch_alloc`; the compiler's `back/cpu/reclaim.rs`).
    scratch: Arena,
}

const _: () = assert!(std::mem::offset_of!(Ctx, arena) == CTX_GENERATED_BYTES);

impl Ctx {
    /// A context for one task, with the arena the thread's previous task gave back (if any).
    pub fn new() -> Ctx {
        Ctx {
            site: -1,
            details: [0; MAX_DETAILS],
            arena: SPARE_ARENA.take(),
            scratch: Arena::default(),
        }
    }
}

impl Drop for Ctx {
    /// Gives the arena back to the thread for its next task (see [`SPARE_ARENA`]).
    fn drop(&mut self) {
        let mut arena = std::mem::take(&mut self.arena);
        arena.trim();
        SPARE_ARENA.set(arena);
    }
}

thread_local! {
    /// The arena of the thread's last finished task, reused by its next one. A kernel launch
    /// runs many tasks (`cpu::run_tasks`: `4 × workers` per launch, that many per segment of a
    /// reduction or scan over few segments), and programs launch kernels in loops; a fresh
    /// arena per task cost a zeroed 1 MiB chunk each (STL on 10 series spent more than a third
    /// of its instructions in that `memset`).
    static SPARE_ARENA: std::cell::Cell<Arena> = std::cell::Cell::new(Arena::default());
}

/// Memory for the arrays a kernel creates while it runs one point: chunks handed out by a
/// bump pointer and all taken back at the next point (`ogham_arena_reset`). Chunks are kept
/// for reuse, also by the thread's later tasks (up to [`KEEP_BYTES`]); their contents are never
/// read before generated code writes them, so stale bytes from an earlier point or task are
/// harmless (as they already were between the points of one task). The free part of the
/// current chunk is kept as an address and a count (`next`, `left`), so that an allocation
/// that fits (nearly all: a kernel makes tens of arrays per point) is a compare and two adds.
#[derive(Default)]
struct Arena {
    chunks: Vec<Vec<u128>>,
    current: usize,
    /// Address of the current chunk's first free unit (its pointer's provenance is exposed).
    next: usize,
    /// Free 16-byte units from `next` to the end of the current chunk.
    left: usize,
}

const CHUNK_BYTES: usize = 1 << 20;

/// How much of its arena a thread keeps between tasks: the chunks, in order, while their total
/// stays within this; a larger chunk made for one large per-point array is freed.
const KEEP_BYTES: usize = 8 * CHUNK_BYTES;

impl Arena {
    #[inline]
    fn alloc(&mut self, bytes: usize) -> *mut u8 {
        let units = bytes.div_ceil(16);
        if units == 0 {
            return std::ptr::NonNull::<u128>::dangling().as_ptr().cast();
        }
        if units > self.left && !self.advance(units) {
            return std::ptr::null_mut();
        }
        let p = self.next;
        self.next += units * 16;
        self.left -= units;
        std::ptr::with_exposed_provenance_mut(p)
    }

    /// [`Arena::alloc`] of the byte count generated code passes: the address, 0 when the size
    /// is negative or memory is exhausted.
    fn alloc_from_code(&mut self, bytes: i64) -> i64 {
        usize::try_from(bytes).map_or(0, |n| self.alloc(n) as i64)
    }

    /// Makes the current chunk one with at least `units` free: the next kept chunk (each
    /// later chunk is unused since the last reset), or a new one at the end. False if memory
    /// is exhausted.
    #[cold]
    #[inline(never)]
    fn advance(&mut self, units: usize) -> bool {
        while self.current + 1 < self.chunks.len() {
            self.current += 1;
            self.enter_current();
            if self.left >= units {
                return true;
            }
        }
        let size = units.max(CHUNK_BYTES / 16);
        if crate::memory::check(size, 16, "an array").is_err() {
            return false;
        }
        let mut chunk = Vec::new();
        if chunk.try_reserve_exact(size).is_err() {
            return false;
        }
        // The chunk's memory stays uninitialised (its length 0; the arena hands out its
        // capacity): generated code writes every array element before reading it, as it must
        // anyway for memory reused from an earlier point. Untouched, the pages of a fresh chunk
        // are mapped only when a kernel first uses them; zeroing the whole 1 MiB cost each
        // worker's first allocation 256 page faults (about 0.5 ms of BFAST's first kernels).
        self.chunks.push(chunk);
        self.current = self.chunks.len() - 1;
        self.enter_current();
        true
    }

    /// Points `next` and `left` at the whole of chunk `current` (none if there is no chunk).
    fn enter_current(&mut self) {
        match self.chunks.get_mut(self.current) {
            Some(chunk) => {
                self.next = chunk.as_mut_ptr().expose_provenance();
                self.left = chunk.capacity();
            }
            None => {
                self.next = 0;
                self.left = 0;
            }
        }
    }

    fn reset(&mut self) {
        self.current = 0;
        self.enter_current();
    }

    /// Where the next allocation starts: the current chunk and the bytes used in it, as one
    /// `i64` (chunk index times 2^40 plus the offset; chunks are far smaller than 2^40 bytes).
    fn mark(&self) -> i64 {
        let used = match self.chunks.get(self.current) {
            Some(chunk) => self.next - chunk.as_ptr().expose_provenance(),
            None => 0,
        };
        ((self.current as i64) << 40) | used as i64
    }

    /// Splits a [`Arena::mark`] into the chunk and the offset.
    fn at(mark: i64) -> (usize, usize) {
        ((mark >> 40) as usize, (mark & ((1 << 40) - 1)) as usize)
    }

    /// Whether `p` lies in memory handed out since `mark` (and not given back).
    fn made_since(&self, mark: i64, p: usize) -> bool {
        let (first, offset) = Arena::at(mark);
        (first..=self.current).any(|c| {
            let Some(chunk) = self.chunks.get(c) else {
                return false;
            };
            let start = chunk.as_ptr().expose_provenance();
            let from = if c == first { start + offset } else { start };
            let to = if c == self.current {
                self.next
            } else {
                start + chunk.capacity() * 16
            };
            from <= p && p < to
        })
    }

    /// Whether more than a whole chunk was handed out since `mark`.
    fn grown_since(&self, mark: i64) -> bool {
        self.current > Arena::at(mark).0 + 1
    }

    /// Gives back everything handed out since `mark`.
    fn rewind(&mut self, mark: i64) {
        let (chunk, offset) = Arena::at(mark);
        self.current = chunk;
        self.enter_current();
        if !self.chunks.is_empty() {
            self.next += offset;
            self.left -= offset / 16;
        }
    }

    /// Frees the chunks beyond the first [`KEEP_BYTES`] and resets the arena.
    fn trim(&mut self) {
        let mut kept = 0;
        let keep = self
            .chunks
            .iter()
            .take_while(|chunk| {
                kept += chunk.capacity() * 16;
                kept <= KEEP_BYTES
            })
            .count();
        self.chunks.truncate(keep);
        self.reset();
    }
}

/// A scalar of type `code` from its bits (as generated code passes them: integers widened to
/// 64 bits, floats as their bit patterns).
fn scalar(ty: i64, bits: i64) -> Scalar {
    match PrimType::ALL[ty as usize] {
        PrimType::Bool => Scalar::Bool(bits != 0),
        PrimType::I8 => Scalar::I8(bits as i8),
        PrimType::I16 => Scalar::I16(bits as i16),
        PrimType::I32 => Scalar::I32(bits as i32),
        PrimType::I64 => Scalar::I64(bits),
        PrimType::U8 => Scalar::U8(bits as u8),
        PrimType::F32 => Scalar::F32(f32::from_bits(bits as u32)),
        PrimType::F64 => Scalar::F64(f64::from_bits(bits as u64)),
    }
}

#[unsafe(no_mangle)]
extern "C" fn ogham_alloc(ctx: *mut Ctx, bytes: i64) -> i64 {
    // SAFETY: generated code passes the context record its worker owns.
    let ctx = unsafe { &mut *ctx };
    ctx.arena.alloc_from_code(bytes)
}

#[unsafe(no_mangle)]
extern "C" fn ogham_arena_reset(ctx: *mut Ctx) {
    // SAFETY: as in `ogham_alloc`.
    unsafe { &mut *ctx }.arena.reset();
}

// The helpers of `back/cpu/reclaim.rs`: a loop whose body makes arrays marks the arena before
// it and gives back what its iterations made. A loop carrying arrays, once its iterations have
// filled more than a chunk (`ogham_arena_due`), copies the carried arrays made since the mark
// to the scratch arena, rewinds, and copies them back to fresh arrays at the mark.

#[unsafe(no_mangle)]
extern "C" fn ogham_arena_mark(ctx: *mut Ctx) -> i64 {
    // SAFETY: as in `ogham_alloc`.
    unsafe { &*ctx }.arena.mark()
}

/// Whether the copies are due; when they are, the scratch arena's earlier copies are dropped.
#[unsafe(no_mangle)]
extern "C" fn ogham_arena_due(ctx: *mut Ctx, mark: i64) -> i64 {
    // SAFETY: as in `ogham_alloc`.
    let ctx = unsafe { &mut *ctx };
    let due = ctx.arena.grown_since(mark);
    if due {
        ctx.scratch.reset();
    }
    due as i64
}

#[unsafe(no_mangle)]
extern "C" fn ogham_arena_made_since(ctx: *mut Ctx, mark: i64, p: i64) -> i64 {
    // SAFETY: as in `ogham_alloc`.
    unsafe { &*ctx }.arena.made_since(mark, p as usize) as i64
}

#[unsafe(no_mangle)]
extern "C" fn ogham_arena_rewind(ctx: *mut Ctx, mark: i64) {
    // SAFETY: as in `ogham_alloc`.
    unsafe { &mut *ctx }.arena.rewind(mark);
}

#[unsafe(no_mangle)]
extern "C" fn ogham_scratch_alloc(ctx: *mut Ctx, bytes: i64) -> i64 {
    // SAFETY: as in `ogham_alloc`.
    unsafe { &mut *ctx }.scratch.alloc_from_code(bytes)
}

#[unsafe(no_mangle)]
extern "C" fn ogham_int_op(op: i64, ty: i64, x: i64, y: i64) -> i64 {
    // Division by zero is checked by the generated code before the call.
    ops::binop(BinOp::ALL[op as usize], scalar(ty, x), scalar(ty, y)).map_or(0, Scalar::slot_bits)
}

#[unsafe(no_mangle)]
extern "C" fn ogham_f32_op(op: i64, x: f32, y: f32) -> f32 {
    match ops::binop(BinOp::ALL[op as usize], Scalar::F32(x), Scalar::F32(y)) {
        Ok(Scalar::F32(r)) => r,
        _ => f32::NAN,
    }
}

#[unsafe(no_mangle)]
extern "C" fn ogham_f64_op(op: i64, x: f64, y: f64) -> f64 {
    match ops::binop(BinOp::ALL[op as usize], Scalar::F64(x), Scalar::F64(y)) {
        Ok(Scalar::F64(r)) => r,
        _ => f64::NAN,
    }
}

fn math(f: i64, x: Scalar, y: Scalar) -> Option<Scalar> {
    let f = MATH_FNS[f as usize];
    let args = [x, y];
    ops::math(f, &args[..f.arity()]).ok()
}

#[unsafe(no_mangle)]
extern "C" fn ogham_f32_math(f: i64, x: f32, y: f32) -> f32 {
    match math(f, Scalar::F32(x), Scalar::F32(y)) {
        Some(Scalar::F32(r)) => r,
        _ => f32::NAN,
    }
}

#[unsafe(no_mangle)]
extern "C" fn ogham_f64_math(f: i64, x: f64, y: f64) -> f64 {
    match math(f, Scalar::F64(x), Scalar::F64(y)) {
        Some(Scalar::F64(r)) => r,
        _ => f64::NAN,
    }
}

#[unsafe(no_mangle)]
extern "C" fn ogham_int_math(f: i64, ty: i64, x: i64, y: i64) -> i64 {
    math(f, scalar(ty, x), scalar(ty, y)).map_or(0, Scalar::slot_bits)
}

#[unsafe(no_mangle)]
extern "C" fn ogham_convert(from: i64, to: i64, x: i64) -> i64 {
    ops::convert(scalar(from, x), PrimType::ALL[to as usize]).slot_bits()
}

#[unsafe(no_mangle)]
extern "C" fn ogham_slice_ok(n: i64, start: i64, len: i64, stride: i64) -> i64 {
    // The common case, a unit-stride slice within the array, without the general check's
    // argument record and error text: `0 <= start <= start + len <= n`.
    if stride == 1 && start >= 0 && len >= 0 && start <= n.max(0) - len {
        return 1;
    }
    let arg: IdxArg = crate::ireval::eval::slice_arg(start, len, stride);
    check_index(&[n.max(0) as usize], &[arg]).is_ok() as i64
}

/// Every helper's symbol and address (for the JIT and the disk cache's loader, which bind them
/// by name; ahead-of-time objects link against the symbols).
#[cfg(feature = "jit")]
pub fn addresses() -> Vec<(&'static str, *const u8)> {
    macro_rules! named {
        ($($f:ident),* $(,)?) => {
            [$((stringify!($f), $f as *const u8)),*]
        };
    }
    let fixed = named![
        ogham_alloc,
        ogham_arena_reset,
        ogham_int_op,
        ogham_f32_op,
        ogham_f64_op,
        ogham_f32_math,
        ogham_f64_math,
        ogham_int_math,
        ogham_convert,
        ogham_slice_ok,
        ogham_sincos_f32,
        ogham_sincos_f64,
    ];
    let reclaim = named![
        ogham_arena_mark,
        ogham_arena_due,
        ogham_arena_made_since,
        ogham_arena_rewind,
        ogham_scratch_alloc,
    ];
    fixed
        .into_iter()
        .chain(LIBM.iter().copied())
        .chain(reclaim)
        .collect()
}

/// `sin x` and `cos x` (the interpreter's methods) into the slots at `out`.
#[unsafe(no_mangle)]
extern "C" fn ogham_sincos_f32(x: f32, out: *mut f32) {
    // SAFETY: generated code passes a 16-byte stack slot: slot 0 at `out`, slot 1 8 bytes on.
    unsafe {
        *out = x.sin();
        *out.add(2) = x.cos();
    }
}

#[unsafe(no_mangle)]
extern "C" fn ogham_sincos_f64(x: f64, out: *mut f64) {
    // SAFETY: as above.
    unsafe {
        *out = x.sin();
        *out.add(1) = x.cos();
    }
}

/// The [`HelperId::Libm`] helpers: the methods `ogham_ir::scalar` uses for each function.
/// `LIBM` lists them (name, address) in the order of their function ids.
macro_rules! libm_helpers {
    ($($f32:ident $f64:ident |$x:ident $(, $y:ident)?| $e:expr;)*) => {
        $(
            #[unsafe(no_mangle)]
            extern "C" fn $f32($x: f32 $(, $y: f32)?) -> f32 { $e }
            #[unsafe(no_mangle)]
            extern "C" fn $f64($x: f64 $(, $y: f64)?) -> f64 { $e }
        )*
        #[cfg(feature = "jit")]
        const LIBM: &[(&str, *const u8)] = &[
            $((stringify!($f32), $f32 as *const u8), (stringify!($f64), $f64 as *const u8),)*
        ];
    };
}

libm_helpers! {
    ogham_exp_f32 ogham_exp_f64 |x| x.exp();
    ogham_log_f32 ogham_log_f64 |x| x.ln();
    ogham_log2_f32 ogham_log2_f64 |x| x.log2();
    ogham_log10_f32 ogham_log10_f64 |x| x.log10();
    ogham_sin_f32 ogham_sin_f64 |x| x.sin();
    ogham_cos_f32 ogham_cos_f64 |x| x.cos();
    ogham_tan_f32 ogham_tan_f64 |x| x.tan();
    ogham_asin_f32 ogham_asin_f64 |x| x.asin();
    ogham_acos_f32 ogham_acos_f64 |x| x.acos();
    ogham_atan_f32 ogham_atan_f64 |x| x.atan();
    ogham_sinh_f32 ogham_sinh_f64 |x| x.sinh();
    ogham_cosh_f32 ogham_cosh_f64 |x| x.cosh();
    ogham_tanh_f32 ogham_tanh_f64 |x| x.tanh();
    ogham_atan2_f32 ogham_atan2_f64 |y, x| y.atan2(x);
    ogham_pow_f32 ogham_pow_f64 |x, y| x.powf(y);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_gives_back_what_it_handed_out_since_a_mark() {
        let mut arena = Arena::default();
        let before = arena.alloc(100) as usize;
        let mark = arena.mark();
        assert!(!arena.made_since(mark, before));
        // Three chunks' worth after the mark: the copies are due.
        let first = arena.alloc(64) as usize;
        let big: Vec<usize> = (0..3)
            .map(|_| arena.alloc(CHUNK_BYTES - 64) as usize)
            .collect();
        assert!(arena.made_since(mark, first) && big.iter().all(|&p| arena.made_since(mark, p)));
        assert!(!arena.made_since(mark, before));
        assert!(arena.grown_since(mark));
        arena.rewind(mark);
        assert!(!arena.grown_since(mark));
        // Memory handed out since the mark is handed out again, from the mark on; what the
        // rewind gave back is no longer counted as made since the mark.
        assert!(!arena.made_since(mark, big[2]));
        assert_eq!(arena.alloc(64) as usize, first);
        assert!(arena.made_since(mark, first));
        // A mark of an empty arena rewinds to the start.
        let mut empty = Arena::default();
        let mark = empty.mark();
        let p = empty.alloc(16) as usize;
        assert!(empty.made_since(mark, p));
        empty.rewind(mark);
        assert_eq!(empty.alloc(16) as usize, p);
    }
}
