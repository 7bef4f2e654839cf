//! The CUDA C writer of a kernel body: every IR variable becomes a C variable `v<id>` (a scalar,
//! or a `View<T, R>` — element pointer, extents, strides — for an array), every statement one or
//! a few C statements. What the statements become is decided by the shared walk
//! ([`crate::back::lower`]), which drives this writer through `lower.rs`; scalar operations are
//! in `scalar.rs` (the interpreter's semantics from the prelude: `og_div`, `og_f2i`, ...).
//!
//! Invariants relied on: every variable is bound once (so `v<id>` names are unique in a
//! kernel); a body that is emitted more than once (a lambda applied in several places) is
//! wrapped in its own C block, so its declarations never clash. Arrays made inside a kernel come
//! from a bump arena (`og_arena` per thread; at block level `og_block_arena`, whose addresses
//! every thread of the block computes identically), or, in a thread-level kernel whose
//! per-point arrays the `layout` pass interleaved, from the interleaved sub-arenas `og_lanes`
//! (`prelude.cuh`): such an array's view has strides `og_lanes.n` times the contiguous ones.
//! Nothing here assumes an array made in a kernel is contiguous: every access goes through
//! its view's strides.
//!
//! Block-level code (`Emit::block`): the statements outside any lambda run redundantly on every
//! thread of the block (so scalars and control flow are uniform), writes to memory are shared
//! out across the threads or done by thread 0 between barriers, and the SOACs there run across
//! the block's threads (`block.rs`).

use crate::back::lower::Checks;
pub use crate::back::lower::Res;
use crate::back::lower::bounds::Proofs;
use ogham_ir::abi::{ErrorSite, Failure};
use ogham_ir::artifact::cuda::Counting;
use ogham_ir::kir::{Function, Plans, SegOp};
use ogham_ir::source::Span;
use ogham_ir::types::PrimType;
use ogham_ir::{Const, SubExp, VarId};
use std::collections::{HashMap, HashSet};

/// The C type of a scalar: C's floats; other types by their IR names (the prelude's typedefs).
pub fn ctype(p: PrimType) -> &'static str {
    match p {
        PrimType::F32 => "float",
        PrimType::F64 => "double",
        p => p.name(),
    }
}

/// The C type of a value of IR type `ty`.
pub fn type_str(ty: &ogham_ir::Type) -> String {
    match ty {
        ogham_ir::Type::Prim(p) => ctype(*p).to_string(),
        ogham_ir::Type::Array { elem, shape } => view_type(*elem, shape.len()),
    }
}

pub fn view_type(elem: PrimType, rank: usize) -> String {
    format!("View<{}, {rank}>", ctype(elem))
}

/// A constant as a C expression of its type (non-finite floats by their bits).
pub fn literal(c: Const) -> String {
    match c {
        Const::Bool(b) => b.to_string(),
        Const::I8(x) => format!("((i8){x})"),
        Const::I16(x) => format!("((i16){x})"),
        Const::I32(i32::MIN) => "((i32)(-2147483647 - 1))".to_string(),
        Const::I32(x) => format!("((i32){x})"),
        Const::I64(i64::MIN) => "((i64)(-9223372036854775807LL - 1))".to_string(),
        Const::I64(x) => format!("((i64){x}LL)"),
        Const::U8(x) => format!("((u8){x})"),
        Const::F32(x) if x.is_finite() => format!("({x:?}f)"),
        Const::F32(x) => format!("__int_as_float((int)0x{:08x}u)", x.to_bits()),
        Const::F64(x) if x.is_finite() => format!("({x:?})"),
        Const::F64(x) => format!("__longlong_as_double((long long)0x{:016x}ull)", x.to_bits()),
    }
}

/// The C name of a variable.
pub fn var(v: VarId) -> String {
    format!("v{}", v.0)
}

/// An array: the name of its view, its rank and element type.
#[derive(Clone, Debug)]
pub struct CView {
    pub name: String,
    pub rank: usize,
    pub elem: PrimType,
}

pub struct Emit<'f> {
    pub f: &'f Function,
    /// The plans of the kernel being emitted (`SegOp::plans`).
    pub(super) plans: &'f Plans,
    /// Conditions fixed while a copy of an unswitched loop is emitted (`plan/unswitch.rs`): an
    /// `if` on one of them emits only the branch it takes.
    pub(super) unswitched: HashMap<VarId, bool>,
    out: String,
    depth: usize,
    /// The checks emitted so far and the location of the statement being emitted.
    pub checks: Checks,
    pub(super) unchecked: &'f [Span],
    /// Whether float operations are wrapped in the performance model's counters.
    pub(super) counting: Counting,
    /// Indices proven in range, whose bounds checks are omitted (`back/lower/bounds.rs`).
    pub(super) proofs: Proofs,
    fresh: usize,
    /// Block-level code: statements outside lambdas are shared by the block's threads.
    pub block: bool,
    /// How many lambdas (per-thread code) enclose the current statement.
    pub(super) lambdas: usize,
    /// The most accumulator components a block-level reduction or scan keeps in shared memory.
    pub shared_slots: usize,
    /// The widths (C expressions) of the loops shared out across the block so far; `None` once
    /// one of them combines floats across the threads (a reduction or scan of floats), whose
    /// results depend on the block's size.
    pub block_widths: Option<Vec<String>>,
    /// Whether the code allocates from an arena.
    allocates: bool,
    /// How many allocations the code so far makes, per arena ([`Emit::arena_name`]): a loop
    /// compares the counts before and after its body (`reclaim.rs`).
    allocations: HashMap<&'static str, usize>,
    /// Per-point arrays are interleaved across the threads (`og_lanes`; thread-level kernels).
    pub lanes: bool,
    /// The element-size classes allocated from `og_lanes` (bit c: elements of 2^c bytes).
    lane_classes: u8,
    /// Extents that are the same in every thread of the kernel (its scalar inputs and its array
    /// inputs' extents, as C expressions): an array of such extents is *uniform*
    /// (`og_alloc_lanes_uniform`).
    pub(super) uniform_extents: HashSet<String>,
    /// The kernel's array inputs: the same arrays in every thread.
    pub(super) shared_arrays: HashSet<VarId>,
    /// For each block opened and not yet closed, the number of the loop it is the body of
    /// ([`Emit::open_loop`]), if it is one.
    open_loops: Vec<Option<usize>>,
    /// Loops opened so far.
    loops: usize,
}

/// What [`Emit`] produced.
pub struct Emitted {
    pub text: String,
    pub sites: Vec<ErrorSite>,
    pub shared_slots: usize,
    pub block_widths: Option<Vec<String>>,
    pub allocates: bool,
    /// Whether the code allocates from the thread's own arena, `og_arena` (at block level: in
    /// the code of the block's threads, as opposed to `og_block_arena`).
    pub thread_arena: bool,
    /// The element-size classes allocated from `og_lanes` (bit c: elements of 2^c bytes).
    pub lane_classes: u8,
}

impl<'f> Emit<'f> {
    pub fn new(
        (f, seg): (&'f Function, &'f SegOp),
        unchecked: &'f [Span],
        counting: Counting,
        depth: usize,
    ) -> Emit<'f> {
        Emit {
            f,
            plans: &seg.plans,
            unswitched: HashMap::new(),
            out: String::new(),
            depth,
            checks: Checks::default(),
            unchecked,
            counting,
            proofs: Proofs::of(f, seg),
            fresh: 0,
            block: false,
            lambdas: 0,
            shared_slots: 0,
            block_widths: Some(Vec::new()),
            allocates: false,
            allocations: HashMap::new(),
            lanes: false,
            lane_classes: 0,
            uniform_extents: HashSet::new(),
            shared_arrays: HashSet::new(),
            open_loops: Vec::new(),
            loops: 0,
        }
    }

    pub fn finish(self) -> Emitted {
        let thread_arena = self.thread_arena();
        Emitted {
            text: self.out,
            sites: self.checks.sites,
            shared_slots: self.shared_slots,
            block_widths: self.block_widths,
            allocates: self.allocates,
            thread_arena,
            lane_classes: self.lane_classes,
        }
    }

    // ----- text -----

    /// The length of the text so far: where [`Emitted::text`] can take a declaration later.
    pub fn mark(&self) -> usize {
        self.out.len()
    }

    /// Inserts `s` as a line at `at` (a [`Emit::mark`] taken at the start of a line, with no
    /// insertion before it since), indented for `depth`.
    pub(super) fn insert_line(&mut self, at: usize, depth: usize, s: &str) {
        self.insert_lines(at, depth, &[s]);
    }

    /// Inserts `lines`, in order, as [`Emit::insert_line`] inserts one.
    pub(super) fn insert_lines(&mut self, at: usize, depth: usize, lines: &[&str]) {
        let indent = "  ".repeat(depth);
        let text: String = lines.iter().map(|s| format!("{indent}{s}\n")).collect();
        self.out.insert_str(at, &text);
    }

    /// Whether the code so far allocates from the thread's own arena, `og_arena`
    /// ([`Emitted::thread_arena`]).
    pub(super) fn thread_arena(&self) -> bool {
        self.allocations("og_arena") > 0
    }

    /// The element-size classes allocated from `og_lanes` so far (bit c: elements of 2^c
    /// bytes).
    pub(super) fn lane_classes(&self) -> u8 {
        self.lane_classes
    }

    /// The current indentation depth.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    pub fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    pub fn open(&mut self, header: impl AsRef<str>) {
        let h = header.as_ref();
        if h.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{h} {{"));
        }
        self.depth += 1;
        self.open_loops.push(None);
    }

    /// Opens a loop (`header`: its `for` or `while`). In the performance model's counted code
    /// its iterations are marked (`OG_LOOP_*`, `model.hpp`), so that a warp's request groups its
    /// lanes' accesses of the same iterations only.
    pub fn open_loop(&mut self, header: impl AsRef<str>) {
        let counted = self.counting == Counting::Counted;
        let n = self.loops;
        self.loops += 1;
        if counted {
            self.line(format!("OG_LOOP_ENTER({n})"));
        }
        self.open(header);
        if counted {
            *self.open_loops.last_mut().expect("just opened") = Some(n);
            self.line(format!("OG_LOOP_ITER({n})"));
        }
    }

    pub fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
        if let Some(Some(n)) = self.open_loops.pop() {
            self.line(format!("OG_LOOP_EXIT({n})"));
        }
    }

    /// `} else {` between the branches of an `if` opened with [`Emit::open`].
    pub fn else_branch(&mut self) {
        self.depth -= 1;
        self.line("} else {");
        self.depth += 1;
    }

    /// A fresh C name.
    pub fn temp(&mut self, hint: &str) -> String {
        self.fresh += 1;
        format!("t{}_{hint}", self.fresh)
    }

    pub fn operand(&self, se: SubExp) -> String {
        match se {
            SubExp::Const(c) => literal(c),
            SubExp::Var(v) => var(v),
        }
    }

    /// `ty v<id> = init;`
    pub fn declare(&mut self, v: VarId, init: &str) {
        let ty = type_str(self.f.ty(v));
        self.line(format!("{ty} {} = {init};", var(v)));
    }

    /// Shared out across the block's threads (block level, outside lambdas)?
    pub(super) fn cooperative(&self) -> bool {
        self.block && self.lambdas == 0
    }

    /// The first row and the step of a loop over `width` rows (a C expression) that the
    /// block's threads share when the code is cooperative.
    pub(super) fn par(&mut self, width: &str) -> (&'static str, &'static str) {
        if self.cooperative() {
            self.shares_out(width);
            ("threadIdx.x", "blockDim.x")
        } else {
            ("0", "1")
        }
    }

    /// Records the width (a C expression) of a loop whose rows the block's threads share.
    pub(super) fn shares_out(&mut self, width: &str) {
        if let Some(widths) = &mut self.block_widths {
            widths.push(width.to_string());
        }
    }

    pub(super) fn barrier(&mut self) {
        if self.cooperative() {
            self.line("__syncthreads();");
        }
    }

    fn arena(&self) -> &'static str {
        if self.cooperative() {
            "og_block_arena"
        } else {
            "og_arena"
        }
    }

    /// The arena the current statement's arrays come from: [`Emit::arena`], or the interleaved
    /// sub-arenas `og_lanes`.
    pub(super) fn arena_name(&self) -> &'static str {
        if self.lanes { "og_lanes" } else { self.arena() }
    }

    /// How many allocations from `arena` the code so far makes.
    pub(super) fn allocations(&self, arena: &str) -> usize {
        self.allocations.get(arena).copied().unwrap_or(0)
    }

    // ----- checks -----

    /// Continues when `cond` holds; otherwise records `failure` with `details` (`i64`
    /// expressions) in the context, at the kernel's current point `og_at`, and leaves the
    /// kernel.
    pub fn check(&mut self, cond: &str, failure: Failure, details: &[String]) -> Res<()> {
        let site = self.checks.record(failure, details.len())?;
        self.open(format!("if (!({cond}))"));
        if details.is_empty() {
            self.line(format!("og_fail(ctx, og_launch, og_at, {site}, 0, 0);"));
        } else {
            let list: Vec<String> = details.iter().map(|d| format!("(i64)({d})")).collect();
            self.line(format!("const i64 og_d[] = {{{}}};", list.join(", ")));
            self.line(format!(
                "og_fail(ctx, og_launch, og_at, {site}, {}, og_d);",
                details.len()
            ));
        }
        self.line("return;");
        self.close();
        Ok(())
    }

    // ----- memory -----

    pub(super) fn dims(view: &str, rank: usize) -> Vec<String> {
        (0..rank).map(|k| format!("{view}.d[{k}]")).collect()
    }

    /// Whether the extent `d` (a C expression) is the same in every thread: a kernel input's
    /// ([`Emit::uniform_extents`]) or an `i64` constant.
    fn uniform_extent(&self, d: &str) -> bool {
        let constant = d.strip_prefix("((i64)").and_then(|d| d.strip_suffix("LL)"));
        self.uniform_extents.contains(d)
            || constant.is_some_and(|c| {
                c.trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
    }

    /// A fresh array of the given extents from the arena (interleaved from `og_lanes` when
    /// [`Emit::lanes`], otherwise contiguous); returns its view's name.
    pub fn alloc(&mut self, elem: PrimType, dims: &[String]) -> Res<String> {
        self.allocates = true;
        *self.allocations.entry(self.arena_name()).or_default() += 1;
        let name = self.temp("a");
        let t = ctype(elem);
        if dims.is_empty() {
            self.line(format!("const i64 {name}_bytes = (i64)sizeof({t});"));
        } else {
            self.line(format!(
                "const i64 {name}_bytes = og_bytes<{}>({{{}}}, (i64)sizeof({t}));",
                dims.len(),
                dims.join(", ")
            ));
        }
        if self.lanes {
            self.lane_classes |= 1 << elem.byte_size().trailing_zeros();
            let uniform = dims.iter().all(|d| self.uniform_extent(d));
            let from = if uniform { "_uniform" } else { "" };
            self.line(format!(
                "{t}* {name}_p = og_alloc_lanes{from}<{t}>(og_lanes, {name}_bytes);"
            ));
        } else {
            self.line(format!(
                "{t}* {name}_p = ({t}*)og_alloc({}, {name}_bytes);",
                self.arena()
            ));
        }
        self.check(
            &format!("{name}_p != 0"),
            Failure::OutOfMemory,
            &[format!("{name}_bytes")],
        )?;
        let view = self.arena_view(elem, &format!("{name}_p"), dims);
        self.line(format!("{} {name} = {view};", view_type(elem, dims.len())));
        Ok(name)
    }

    /// The row-major view of the elements at `p` (an array [`Emit::alloc`] made) with extents
    /// `dims`: interleaved when [`Emit::lanes`].
    pub(super) fn arena_view(&self, elem: PrimType, p: &str, dims: &[String]) -> String {
        let unit = if self.lanes { ", og_lanes.n" } else { "" };
        format!(
            "og_view<{}, {}>({p}, {{{}}}{unit})",
            ctype(elem),
            dims.len(),
            dims.join(", ")
        )
    }

    /// Row `i` of a view of rank `rank`: the element (rank 1) or a view.
    pub(super) fn row(view: &str, rank: usize, i: &str) -> String {
        if rank == 1 {
            format!("{view}.p[({i}) * {view}.s[0]]")
        } else {
            format!("og_row({view}, {i})")
        }
    }

    /// Copies view `src` into view `dst` (same extents), shared out at block level.
    pub(super) fn copy(&mut self, dst: &str, src: &str) {
        let (first, step) = self.par(&format!("{src}.d[0]"));
        self.line(format!("og_copy({dst}, {src}, {first}, {step});"));
        self.barrier();
    }

    // ----- control flow -----

    /// Runs `emit` on one thread (thread 0 at block level, between barriers).
    pub(super) fn single(&mut self, emit: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()> {
        if !self.cooperative() {
            return emit(self);
        }
        self.line("__syncthreads();");
        self.open("if (threadIdx.x == 0)");
        self.lambdas += 1;
        emit(self)?;
        self.lambdas -= 1;
        self.close();
        self.line("__syncthreads();");
        Ok(())
    }
}
