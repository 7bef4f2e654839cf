//! The lowering of kernel bodies that both backends share: what a statement, an index, a
//! sequential SOAC or a run-time check becomes is decided here once, as a walk over the kernel
//! IR that drives a backend through the [`Lower`] trait. The CPU backend implements it by
//! building CLIF (`back::cpu::codegen`), the CUDA backend by writing C (`back::cuda::emit`); a
//! change of semantics (which checks exist, in which order, with which error details; how arrays
//! are allocated, sized, read and written; how an in-thread SOAC becomes a loop) is made here.
//!
//! - `stmt.rs`: statements and bodies, lambdas, indexing with its bounds checks, the checks of
//!   sizes and shapes (a kernel point's result too).
//! - `soac.rs`: SOACs run sequentially in a thread (maps, scans and reductions in one loop,
//!   scatters, histograms), accumulators, rows.
//! - `kernel.rs`: the per-point part of a kernel: what a point does with its values by the
//!   kernel's kind (writes, accumulates or updates a histogram), histogram destinations' views.
//! - `bounds.rs`: the indices proven in range, whose checks neither backend emits.
//!
//! What stays with a backend: the representation of values (SSA values or C expressions),
//! scalar operations (each backend's form of the interpreter's semantics), loops and branches,
//! memory copies, the kernel's frame (loading the arguments that `ogham_ir::abi::ArgSlots` lays
//! out; the iteration space; accumulators' initial values and partial results), and its own
//! optimisations, which it applies through the trait's hooks
//! ([`Lower::result_array`], [`Lower::screma_start`], [`Lower::rows_in_place`]) and through
//! [`Lower::if_else`] (whose branches it lowers with [`branch`], so the bounds proofs know their
//! conditions), [`Lower::run_loop`] and [`Lower::soac`], which it implements around the shared
//! walk.
//!
//! The walk calls the backend in the order the generated code needs: a backend that builds SSA
//! (the CPU's) numbers its values in that order, so the order of calls is part of the
//! generated code.

pub mod bounds;
mod kernel;
mod soac;
mod stmt;

pub use kernel::{kernel_hist_dests, point};
pub use soac::{
    accumulate, accumulators, combine_into, hist_updates, read_row, screma_arrays, screma_values,
    sequential, soac_inputs, write_row,
};
pub use stmt::{
    apply, body, branch, check_point_result, check_same_shape, check_size, dims_of, in_branch,
    index, stmt,
};

use super::Unsupported;
use bounds::Proofs;
use ogham_ir::abi::{ErrorSite, Failure, MAX_DETAILS};
use ogham_ir::math::MathFn;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::source::{FileId, Span};
use ogham_ir::types::PrimType;
use ogham_ir::{Body, Lambda, LoopForm, Soac, SubExp, VarId};

pub type Res<T> = Result<T, Unsupported>;

/// The run-time checks of a generated function: where the statement being lowered is, and the
/// sites recorded so far (numbered from `first`: a kernel's combine function numbers its sites
/// after the kernel's).
#[derive(Default)]
pub struct Checks {
    pub first: usize,
    pub sites: Vec<ErrorSite>,
    /// The source location of the statement being lowered.
    pub loc: Span,
}

impl Checks {
    /// Records a check of `failure` at the current location with `details` values; returns its
    /// number.
    pub fn record(&mut self, failure: Failure, details: usize) -> Res<usize> {
        if details > MAX_DETAILS {
            return Err(Unsupported(format!(
                "a run-time check needs {details} values (at most {MAX_DETAILS})"
            )));
        }
        let site = self.first + self.sites.len();
        self.sites.push(ErrorSite {
            loc: self.loc,
            failure,
        });
        Ok(site)
    }
}

/// Whether index bounds are checked at `loc`: everywhere but in the source ranges `unchecked`
/// of `#[unsafe]` definitions ([`ogham_ir::Program::unchecked`]).
pub fn bounds_checked(unchecked: &[Span], loc: Span) -> bool {
    !unchecked
        .iter()
        .any(|r| r.file == loc.file && r.start <= loc.start && loc.end <= r.end)
}

/// Whether running `body` may make arrays: a statement at any depth that binds an array and is
/// not a view of another (an index, a transposition), an alias, an in-place update, or a loop or
/// `if` (whose own statements are looked at). A loop whose body makes none keeps its arena as
/// it is (`back/cpu/reclaim.rs`).
pub fn makes_arrays(f: &ogham_ir::kir::Function, body: &Body) -> bool {
    let mut makes = false;
    ogham_ir::traverse::for_each_stmt(body, &mut |stmt| {
        let binds_array = stmt.pat.iter().any(|&v| f.ty(v).rank() > 0);
        let passes = matches!(
            stmt.exp,
            ogham_ir::Exp::Index(..)
                | ogham_ir::Exp::Rearrange(..)
                | ogham_ir::Exp::SubExp(..)
                | ogham_ir::Exp::Update(..)
                | ogham_ir::Exp::Loop { .. }
                | ogham_ir::Exp::If { .. }
        );
        makes |= binds_array && !passes;
    });
    makes
}

/// The source ranges of the `#[unsafe]` definitions of source file `file` with `text`, as the
/// front end finds them when it compiles the file (the ranges [`bounds_checked`] exempts): for
/// checking the unchecked ranges of a library read from a file against its embedded sources
/// (`ogham_runtime`'s `cpu::untrusted`). A text that does not parse has none.
pub fn unsafe_ranges(file: FileId, text: &str) -> Vec<Span> {
    crate::syntax::parse_module(file, text, &mut 0)
        .map(|decls| crate::lower::unsafe_spans(&decls))
        .unwrap_or_default()
}

/// Where an index leads: an element (its place) or a view.
pub enum Place<E, V> {
    Element(E),
    View(V),
}

/// What a backend provides to the shared walk. Values are the backend's own: `S` a scalar,
/// `Val` any IR value (a scalar or an array), `View` an array as element pointer, extents and
/// strides.
pub trait Lower: Sized {
    type S: Clone;
    type Val: Clone;
    type View: Clone;
    /// The place of an element or of a row (to load, store or copy into).
    type Elem;
    /// An index being lowered: the offset and the extents and strides kept so far.
    type At;
    /// A conjunction of conditions being built.
    type Conj;
    /// A sum of extents being built.
    type Sum;
    /// An accumulator variable.
    type Acc: Clone;
    /// A counted loop's index variable, chosen before the loop's setup.
    type Loop;
    /// The rows of a SOAC's inputs being walked.
    type Rows;
    /// A lambda's application being lowered.
    type Frame;
    /// Rows placed in a SOAC's results for one iteration ([`Lower::rows_in_place`]).
    type Placed;

    fn f(&self) -> &ogham_ir::kir::Function;
    /// The order in which to emit `body`'s statements (their positions in `body.stmts`), or
    /// `None` for their own order. A backend may move statements that are pure and cannot fail
    /// earlier, never before a statement that defines one of their operands.
    fn order(&self, _body: &Body) -> Option<Vec<usize>> {
        None
    }
    fn checks(&mut self) -> &mut Checks;
    /// The source ranges whose bounds checks are omitted.
    fn unchecked(&self) -> &[Span];

    // ----- values -----

    fn operand(&mut self, se: SubExp) -> Res<Self::Val>;
    fn scalar(&mut self, se: SubExp) -> Res<Self::S>;
    fn val(s: Self::S) -> Self::Val;
    /// The scalar a scalar value holds.
    fn scalar_of(&self, v: &Self::Val) -> Self::S;
    fn int(&mut self, n: i64) -> Self::S;
    fn bind(&mut self, v: VarId, val: Self::Val);
    fn view(&mut self, v: VarId) -> Res<Self::View>;
    /// An array value of element type `elem` and rank `rank` as a view.
    fn as_view(&self, val: &Self::Val, elem: PrimType, rank: usize) -> Self::View;
    fn values(&self, view: &Self::View) -> Self::Val;
    fn dims(&self, view: &Self::View) -> Vec<Self::S>;
    /// The strides of `view`'s dimensions, in elements.
    fn strides(&self, view: &Self::View) -> Vec<Self::S>;
    /// A view of `of`'s elements with extents `dims` and strides `strides`; `name` names it
    /// where the backend names its values.
    fn view_of(
        &mut self,
        name: &str,
        of: &Self::View,
        dims: Vec<Self::S>,
        strides: Vec<Self::S>,
    ) -> Self::View;
    fn rank(view: &Self::View) -> usize;
    fn elem(view: &Self::View) -> PrimType;

    // ----- scalar operations (the interpreter's semantics) -----

    /// `x op y`; integer division is only reached with a non-zero divisor.
    fn binop(&mut self, op: BinOp, t: PrimType, x: &Self::S, y: &Self::S) -> Res<Self::S>;
    fn unop(&mut self, op: UnOp, t: PrimType, x: &Self::S) -> Self::S;
    fn math(&mut self, f: MathFn, t: PrimType, args: &[Self::S]) -> Self::S;
    fn convert(&mut self, from: PrimType, to: PrimType, x: &Self::S) -> Self::S;
    fn nonzero(&mut self, x: &Self::S) -> Self::S;
    fn equal(&mut self, x: &Self::S, y: &Self::S) -> Self::S;
    /// `a * b + c` (`i64`, wrapping).
    fn mul_add(&mut self, a: &Self::S, b: &Self::S, c: &Self::S) -> Self::S;
    /// `0 <= i < n`.
    fn in_bounds(&mut self, i: &Self::S, n: &Self::S) -> Self::S;
    /// `0 <= n <= MAX_ELEMS` (see `ogham_ir::sizes::count`).
    fn count_ok(&mut self, n: &Self::S) -> Self::S;
    /// Whether `view` has as many elements as extents `dims` describe (which may be invalid).
    fn same_count(&mut self, view: &Self::View, dims: &[Self::S]) -> Self::S;

    fn conj(&mut self) -> Self::Conj;
    fn conj_add(&mut self, conj: &mut Self::Conj, c: Self::S);
    fn conj_end(&mut self, conj: Self::Conj) -> Self::S;
    fn sum(&mut self) -> Self::Sum;
    fn sum_add(&mut self, sum: &mut Self::Sum, x: &Self::S);
    fn sum_end(&mut self, sum: Self::Sum) -> Self::S;
    /// The product of `xs` (`i64`, wrapping; at least one).
    fn product(&mut self, xs: &[Self::S]) -> Self::S;

    // ----- checks -----

    /// Continues when `ok` holds; otherwise records `failure` ([`Checks::record`]) with
    /// `details` and leaves the generated function.
    fn check(&mut self, ok: Self::S, failure: Failure, details: &[Self::S]) -> Res<()>;

    /// The bounds proofs where code is being generated (`bounds.rs`): the checks of indices
    /// they prove in range are omitted. A backend lowers the branches of its `if`s with
    /// [`branch`] (unless it runs both, as a select).
    fn proofs(&mut self) -> &mut Proofs;

    // ----- indexing -----

    fn index_start(&mut self, view: &Self::View) -> Self::At;
    /// The bounds condition of index `i` into dimension `k` ([`Lower::in_bounds`]).
    fn index_in_bounds(&mut self, view: &Self::View, k: usize, i: &Self::S) -> Self::S;
    fn index_fix(&mut self, at: &mut Self::At, view: &Self::View, k: usize, i: &Self::S);
    /// Whether slice `start`, `len`, `stride` of dimension `k` is valid.
    fn slice_ok(&mut self, view: &Self::View, k: usize, slice: &[Self::S; 3]) -> Self::S;
    fn index_slice(&mut self, at: &mut Self::At, view: &Self::View, k: usize, slice: &[Self::S; 3]);
    /// The element or view an index leads to, `fixed` dimensions of `view` consumed.
    fn index_end(
        &mut self,
        at: Self::At,
        view: &Self::View,
        fixed: usize,
    ) -> Place<Self::Elem, Self::View>;
    /// Before an in-place update (the CUDA backend's barrier at block level).
    fn before_update(&mut self) {}

    // ----- memory -----

    /// A fresh contiguous array of extents `dims`.
    fn alloc(&mut self, elem: PrimType, dims: Vec<Self::S>) -> Res<Self::View>;
    /// The array of a SOAC's result `v`: fresh, or where its consumer wants it.
    fn result_array(&mut self, v: VarId, elem: PrimType, dims: Vec<Self::S>) -> Res<Self::View>;
    fn load(&mut self, elem: &Self::Elem) -> Self::Val;
    fn store(&mut self, elem: &Self::Elem, val: &Self::Val);
    /// The place of row `i` of `view` (unchecked).
    fn row_place(&mut self, view: &Self::View, i: &Self::S) -> Self::Elem;
    /// The row of `view` at `place` as a view (rank 2 or more).
    fn row_view(&mut self, place: &Self::Elem, view: &Self::View) -> Self::Val;
    /// Copies `src` to row `place` of `dst` (same extents, already checked).
    fn copy_row(&mut self, src: &Self::View, dst: &Self::View, place: &Self::Elem) -> Res<()>;
    /// Copies every element of `src` to the same position of `dst` (same extents).
    fn copy(&mut self, src: &Self::View, dst: &Self::View) -> Res<()>;
    /// Copies `parts` one after the other into the rows of `out`.
    fn copy_parts(&mut self, out: &Self::View, parts: &[Self::View]) -> Res<()>;
    /// `out[k] = k` for `k < n`.
    fn fill_iota(&mut self, out: &Self::View, n: &Self::S) -> Res<()>;
    /// `out[k] = val` for `k < n`.
    fn fill_rows(&mut self, out: &Self::View, n: &Self::S, val: &Self::Val) -> Res<()>;
    /// The elements of the contiguous `copy` with extents `dims`.
    fn reshaped(&mut self, copy: &Self::View, dims: &[Self::S]) -> Self::Val;
    /// Binds `v` to `arr` with its dimensions permuted.
    fn rearrange(&mut self, v: VarId, arr: VarId, perm: &[usize]) -> Res<()>;

    // ----- control flow -----

    fn new_loop(&mut self) -> Self::Loop;
    /// `for i in start..end`; `body` lowers the loop body.
    fn for_range(
        &mut self,
        var: &Self::Loop,
        start: Self::S,
        end: Self::S,
        body: &mut dyn FnMut(&mut Self, Self::S) -> Res<()>,
    ) -> Res<()>;
    /// Runs `then` only when `cond` holds.
    fn when(&mut self, cond: Self::S, then: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()>;
    /// Runs `body` on one thread (code shared by a block's threads otherwise runs on each).
    fn single(&mut self, body: &mut dyn FnMut(&mut Self) -> Res<()>) -> Res<()>;
    fn if_else(
        &mut self,
        pat: &[VarId],
        cond: SubExp,
        then_body: &Body,
        else_body: &Body,
        ret: &[ogham_ir::Type],
    ) -> Res<()>;
    fn run_loop(
        &mut self,
        pat: &[VarId],
        params: &[(VarId, SubExp)],
        form: &LoopForm,
        body: &Body,
    ) -> Res<()>;
    /// A SOAC ([`sequential`], or the backend's parallel form).
    fn soac(&mut self, soac: &Soac, pat: &[VarId]) -> Res<()>;
    fn enter_lambda(&mut self, ret: &[ogham_ir::Type]) -> Self::Frame;
    fn leave_lambda(&mut self, frame: Self::Frame, vals: Vec<Self::Val>) -> Vec<Self::Val>;

    // ----- sequential SOACs -----

    /// An accumulator of type `t` holding `init`.
    fn new_acc(&mut self, t: PrimType, init: Self::S) -> Self::Acc;
    fn acc_get(&mut self, acc: &Self::Acc) -> Self::S;
    fn acc_set(&mut self, acc: &Self::Acc, v: Self::S);
    fn rows(&mut self, inputs: &[Self::View]) -> Self::Rows;
    /// The inputs' rows `i` (scalars for rank 1, else views).
    fn current_rows(&mut self, rows: &Self::Rows, i: &Self::S) -> Vec<Self::Val>;
    /// After an iteration.
    fn next_rows(&mut self, rows: &Self::Rows);
    /// Where a Screma's loop starts (iterations before it done otherwise, e.g. interleaved, as
    /// the kernel's plans for the statement `(pat, soac)` say: they are keyed by `pat[0]`).
    /// `accs`: the accumulators of the Screma's scans and reductions, which iterations done
    /// otherwise update.
    fn screma_start(
        &mut self,
        stmt: (&[VarId], &Soac),
        width: &Self::S,
        rows: &Self::Rows,
        arrays: &[Self::View],
        accs: &[Vec<Self::Acc>],
    ) -> Res<Self::S>;
    /// Emits `emit_loop`, the setup and loop of the Screma binding `pat` with lambda `map`:
    /// once, or, when it is planned [`ogham_ir::kir::Plan::Unswitch`], once per value of the
    /// condition (`plan/unswitch.rs`).
    fn unswitched(
        &mut self,
        pat: &[VarId],
        map: &Lambda,
        emit_loop: &mut dyn FnMut(&mut Self) -> Res<()>,
    ) -> Res<()>;
    /// Before iteration `i` of a map: lets the rows that the lambda's results `results` are
    /// made by a SOAC go straight into `arrays` (the map's result arrays).
    fn rows_in_place(
        &mut self,
        map: &Lambda,
        results: &[SubExp],
        arrays: &[Self::View],
        i: &Self::S,
    ) -> Self::Placed;
    /// After the lambda's application.
    fn rows_placed(&mut self, placed: Self::Placed);
}
