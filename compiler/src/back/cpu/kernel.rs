//! The CLIF function of one kernel (and, for a segmented reduction, the function that combines
//! two partial results), around the body code of the shared lowering ([`crate::back::lower`]),
//! built by `codegen.rs`.
//!
//! A kernel function runs the points `(s, i)` for segments `s` in `seg_start..seg_end` and
//! innermost indices `i` in `i_start..i_end` (segments are the points of the space's outer
//! dimensions, row-major; a space of rank 1 has one segment). The runtime splits the space
//! across workers by segments or, when there are few segments, by ranges of `i` (reductions
//! then write partial results to `partial` and are combined by the combine function).
//!
//! Its arguments are loaded from the slots that `ogham_ir::abi::ArgSlots` lays out; what a point
//! does with its values is the shared `lower::point` (a scan's points always write: the runtime
//! runs only the ranges after the first again, with their carries; see `docs/compiler.md`,
//! "Kernel calling convention"), and histogram destinations are viewed as `[segments × bins]`
//! rows by the shared `lower::kernel_hist_dests`.

use super::Unsupported;
use super::codegen::{Gen, Res, View, clif_type, elem_size, made_by_soac};
use super::helpers::HelperId;
use super::remat;
use super::simd;
use crate::back::lower::{self, Lower};
use crate::plan::allocates;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{
    AbiParam, Function, InstBuilder, MemFlagsData, Signature, UserFuncName, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use ogham_ir::abi::{self, ArgSlots, ErrorSite};
use ogham_ir::kir::{HostStmt, SegKind, SegOp};
use ogham_ir::source::Span;
use ogham_ir::{SubExp, VarId};

/// The functions of one kernel and the layout of its argument slots.
pub struct Built {
    pub func: Function,
    pub combine: Option<Function>,
    pub inputs: Vec<VarId>,
    pub sites: Vec<ErrorSite>,
}

fn frontend_config() -> TargetFrontendConfig {
    TargetFrontendConfig {
        default_call_conv: CallConv::SystemV,
        pointer_width: target_lexicon::PointerWidth::U64,
        page_size_align_log2: 12,
    }
}

fn signature(params: usize) -> Signature {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.extend((0..params).map(|_| AbiParam::new(I64)));
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// The byte offset of argument slot `slot` ([`ArgSlots`]).
fn offset(slot: usize) -> i32 {
    8 * slot as i32
}

/// Loads the kernel's inputs from their argument slots ([`ArgSlots`]) and binds them.
fn load_inputs(g: &mut Gen, args: Value, slots: &ArgSlots, inputs: &[VarId]) {
    let flags = MemFlagsData::trusted();
    for (v, at) in inputs.iter().zip(slots.inputs()) {
        let first = offset(at.first);
        match g.f.ty(*v).clone() {
            ogham_ir::Type::Prim(p) => {
                let x = g.b.ins().load(clif_type(p), flags, args, first);
                g.bind(*v, &[x]);
            }
            ogham_ir::Type::Array { elem, .. } => {
                let ptr = g.b.ins().load(I64, flags, args, first);
                let dims = (0..at.rank)
                    .map(|d| g.b.ins().load(I64, flags, args, offset(at.extent(d))))
                    .collect();
                let view = g.contiguous(ptr, dims, elem);
                let mut vals = vec![view.ptr];
                vals.extend(&view.dims);
                vals.extend(&view.strides);
                g.bind(*v, &vals);
            }
        }
    }
}

/// An output array: its element pointer and the number of elements of one point's value.
struct Output {
    ptr: Value,
    row: Value,
    elem: ogham_ir::types::PrimType,
}

impl Output {
    /// Writes `val` (a scalar, or a view) as the value at flat position `p`.
    fn write(&self, g: &mut Gen, p: Value, val: &[Value], ty: &ogham_ir::Type) -> Res<()> {
        let size = elem_size(self.elem);
        let at = g.b.ins().imul(p, self.row);
        let bytes = g.b.ins().imul_imm_s(at, size);
        let addr = g.b.ins().iadd(self.ptr, bytes);
        if ty.rank() == 0 {
            g.b.ins().store(MemFlagsData::trusted(), val[0], addr, 0);
            return Ok(());
        }
        let r = ty.rank();
        let src = View {
            ptr: val[0],
            dims: val[1..=r].to_vec(),
            strides: val[r + 1..].to_vec(),
            elem: self.elem,
        };
        let dst = g.contiguous(addr, src.dims.clone(), self.elem);
        let flat = View {
            ptr: addr,
            dims: vec![self.row],
            strides: vec![g.iconst(1)],
            elem: self.elem,
        };
        let count = Lower::product(g, &src.dims);
        lower::check_point_result(g, count, flat.dims[0])?;
        // A result made in place (see `Gen::result_slots`) is already there.
        let elsewhere = g.b.ins().icmp(
            cranelift_codegen::ir::condcodes::IntCC::NotEqual,
            src.ptr,
            addr,
        );
        g.when(elsewhere, &mut |g| g.copy_view(&src, &dst))
    }
}

/// A builder for `func`, placed in its entry block, and that block's parameters (the function's).
fn enter<'f>(
    func: &'f mut Function,
    fctx: &'f mut FunctionBuilderContext,
) -> (FunctionBuilder<'f>, Vec<Value>) {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    (b, params)
}

/// Builds the functions of kernel `seg` (statement `stmt` of function `f`).
pub fn build(
    f: &ogham_ir::kir::Function,
    stmt: &HostStmt,
    seg: &SegOp,
    name: &str,
    unchecked: &[Span],
) -> Result<Built, Unsupported> {
    let inputs = abi::kernel_inputs(f, stmt);
    let slots = ArgSlots::of_kernel(f, seg, &inputs, &stmt.pat);
    let mut func = Function::with_name_signature(UserFuncName::testcase(name), signature(8));
    let mut fctx = FunctionBuilderContext::new();
    let (b, params) = enter(&mut func, &mut fctx);
    let mut g = Gen::new((f, seg), b, params[0], unchecked);
    kernel_body(&mut g, (seg, name), (&slots, &inputs, &stmt.pat), &params)?;
    let zero = g.b.ins().iconst(I32, 0);
    g.b.ins().return_(&[zero]);
    let mut sites = std::mem::take(&mut g.checks.sites);
    g.finish();
    g.b.seal_all_blocks();
    g.b.finalize(frontend_config());
    func.dfg.resolve_all_aliases();
    remat::loop_invariants(&mut func, params[1]);
    let combine = match &seg.kind {
        SegKind::Red(_) | SegKind::Scan(_) => {
            // The combine function numbers its error sites after the kernel's.
            let (c, combine_sites) =
                build_combine(f, seg, (&slots, &inputs), name, sites.len(), unchecked)?;
            sites.extend(combine_sites);
            Some(c)
        }
        _ => None,
    };
    Ok(Built {
        func,
        combine,
        inputs,
        sites,
    })
}

/// The body of kernel `seg`, whose argument slots `slots` hold `inputs` and the outputs bound
/// to `pat`.
fn kernel_body(
    g: &mut Gen,
    (seg, name): (&SegOp, &str),
    (slots, inputs, pat): (&ArgSlots, &[VarId], &[VarId]),
    params: &[Value],
) -> Res<()> {
    let (ctx, args) = (params[0], params[1]);
    let (seg_start, seg_end, i_start, i_end, partial, carry) = (
        params[2], params[3], params[4], params[5], params[6], params[7],
    );
    load_inputs(g, args, slots, inputs);
    let outputs = load_outputs(g, args, slots, pat);
    let extents: Vec<Value> = seg
        .space
        .iter()
        .map(|(_, e)| g.scalar(*e))
        .collect::<Res<_>>()?;
    let rank = extents.len();
    let inner = extents[rank - 1];
    let ops = seg.kind.operators();
    let resets = allocates(&seg.body);
    let hist_dests = match &seg.kind {
        SegKind::Hist(hists) => lower::kernel_hist_dests(g, hists, rank)?,
        _ => Vec::new(),
    };
    let point_types: Vec<ogham_ir::Type> = seg.ret.clone();
    let vectorised = simd::plan(g.f, seg, name);
    g.for_range(seg_start, seg_end, &mut |g, s| {
        let mut rest = s;
        for d in (0..rank - 1).rev() {
            let coord = g.b.ins().urem(rest, extents[d]);
            rest = g.b.ins().udiv(rest, extents[d]);
            g.bind(seg.space[d].0, &[coord]);
        }
        let accs = lower::accumulators(g, &ops)?;
        if let SegKind::Scan(_) = seg.kind {
            load_carry(g, carry, &accs)?;
        }
        // Four points at a time where the point's code allows it, the rest one by one.
        let first = match &vectorised {
            Some(plan) => {
                let ptrs: Vec<(Value, Value)> = outputs.iter().map(|o| (o.ptr, o.row)).collect();
                simd::vector_points(g, plan, seg, (s, inner), (i_start, i_end), &ptrs)?
            }
            None => i_start,
        };
        g.for_range(first, i_end, &mut |g, i| {
            g.bind(seg.space[rank - 1].0, &[i]);
            let row_start = g.b.ins().imul(s, inner);
            let p = g.b.ins().iadd(row_start, i);
            if resets {
                g.call(HelperId::ArenaReset, &[ctx]);
            }
            if let SegKind::Map = seg.kind {
                map_result_slots(g, seg, &outputs, p);
            }
            let vals = lower::body(g, &seg.body)?;
            lower::point(
                g,
                &seg.kind,
                &accs,
                (&hist_dests, &s),
                &vals,
                None,
                &mut |g, j, val| outputs[j].write(g, p, val, &point_types[j]),
            )?;
            Ok(())
        })?;
        if matches!(seg.kind, SegKind::Map | SegKind::Hist(_)) {
            return Ok(());
        }
        store_totals(g, &seg.kind, &accs, partial, &outputs, s)
    })
}

/// The output pointers and row sizes of the kernel's results (bound to `pat`).
fn load_outputs(g: &mut Gen, args: Value, slots: &ArgSlots, pat: &[VarId]) -> Vec<Output> {
    let flags = MemFlagsData::trusted();
    let mut outputs = Vec::new();
    for (v, at) in pat.iter().zip(slots.outputs()) {
        let ptr = g.b.ins().load(I64, flags, args, offset(at.ptr));
        let row = g.b.ins().load(I64, flags, args, offset(at.row));
        outputs.push(Output {
            ptr,
            row,
            elem: g.f.ty(*v).elem(),
        });
    }
    outputs
}

/// A scan continuing an earlier task's part starts from that part's total (at `carry`, when
/// not null).
fn load_carry(g: &mut Gen, carry: Value, accs: &[Vec<Variable>]) -> Res<()> {
    let flags = MemFlagsData::trusted();
    let has_carry =
        g.b.ins()
            .icmp_imm_s(cranelift_codegen::ir::condcodes::IntCC::NotEqual, carry, 0);
    g.when(has_carry, &mut |g| {
        for (c, var) in accs.iter().flatten().enumerate() {
            let current = g.b.use_var(*var);
            let ty = g.b.func.dfg.value_type(current);
            let v = g.b.ins().load(ty, flags, carry, 8 * c as i32);
            g.b.def_var(*var, v);
        }
        Ok(())
    })
}

/// Arrays a top-level SOAC makes as point `p`'s results go straight into the outputs.
fn map_result_slots(g: &mut Gen, seg: &SegOp, outputs: &[Output], p: Value) {
    g.result_slots.clear();
    for (j, r) in seg.body.result.iter().enumerate() {
        let SubExp::Var(v) = r else { continue };
        if seg.ret[j].rank() == 0 || !made_by_soac(&seg.body, *v) {
            continue;
        }
        let size = elem_size(outputs[j].elem);
        let at = g.b.ins().imul(p, outputs[j].row);
        let bytes = g.b.ins().imul_imm_s(at, size);
        let addr = g.b.ins().iadd(outputs[j].ptr, bytes);
        g.result_slots.insert(*v, (addr, outputs[j].row));
    }
}

/// The totals of a reduction or scan task: to `partial` when the runtime gives one, else (a
/// reduction) into the outputs at segment `s`.
fn store_totals(
    g: &mut Gen,
    kind: &SegKind,
    accs: &[Vec<Variable>],
    partial: Value,
    outputs: &[Output],
    s: Value,
) -> Res<()> {
    let flags = MemFlagsData::trusted();
    let values: Vec<Value> = accs.iter().flatten().map(|v| g.b.use_var(*v)).collect();
    let to_partial = g.b.ins().icmp_imm_s(
        cranelift_codegen::ir::condcodes::IntCC::NotEqual,
        partial,
        0,
    );
    match kind {
        SegKind::Red(_) => {
            g.if_else(
                to_partial,
                &mut |g| {
                    for (c, v) in values.iter().enumerate() {
                        g.b.ins().store(flags, *v, partial, 8 * c as i32);
                    }
                    Ok(())
                },
                &mut |g| {
                    for (c, v) in values.iter().enumerate() {
                        outputs[c].write(g, s, &[*v], &ogham_ir::Type::Prim(outputs[c].elem))?;
                    }
                    Ok(())
                },
            )?;
        }
        // A scan's task returns its total: the runtime carries it into the next tasks.
        SegKind::Scan(_) => {
            g.when(to_partial, &mut |g| {
                for (c, v) in values.iter().enumerate() {
                    g.b.ins().store(flags, *v, partial, 8 * c as i32);
                }
                Ok(())
            })?;
        }
        SegKind::Map | SegKind::Hist(_) => {}
    }
    Ok(())
}

/// `combine(ctx, args, acc, val)`: `acc = op(acc, val)` for every operator of a reduction or scan,
/// over 8-byte slots holding the components in order.
fn build_combine(
    f: &ogham_ir::kir::Function,
    seg: &SegOp,
    (slots, inputs): (&ArgSlots, &[VarId]),
    name: &str,
    first_site: usize,
    unchecked: &[Span],
) -> Result<(Function, Vec<ErrorSite>), Unsupported> {
    let mut func = Function::with_name_signature(
        UserFuncName::testcase(format!("{name}_combine")),
        signature(4),
    );
    let mut fctx = FunctionBuilderContext::new();
    let (b, params) = enter(&mut func, &mut fctx);
    let mut g = Gen::new((f, seg), b, params[0], unchecked);
    g.checks.first = first_site;
    load_inputs(&mut g, params[1], slots, inputs);
    let flags = MemFlagsData::trusted();
    let mut k = 0i32;
    for (op, neutral) in seg.kind.operators() {
        let m = neutral.len();
        let mut args = Vec::new();
        for (from, base) in [(params[2], k), (params[3], k)] {
            for (c, n) in neutral.iter().enumerate() {
                let t = clif_type(f.subexp_type(*n).elem());
                args.push(vec![g.b.ins().load(t, flags, from, 8 * (base + c as i32))]);
            }
        }
        let new = lower::apply(&mut g, op, &args)?;
        for (c, v) in new.iter().enumerate() {
            g.b.ins().store(flags, v[0], params[2], 8 * (k + c as i32));
        }
        k += m as i32;
    }
    let zero = g.b.ins().iconst(I32, 0);
    g.b.ins().return_(&[zero]);
    let sites = std::mem::take(&mut g.checks.sites);
    g.finish();
    g.b.seal_all_blocks();
    g.b.finalize(frontend_config());
    func.dfg.resolve_all_aliases();
    Ok((func, sites))
}
