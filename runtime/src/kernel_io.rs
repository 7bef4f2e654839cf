//! What the compiled executors (CPU, CUDA) share around a kernel launch: the kernel's operands
//! taken from the evaluator (scalars as 64-bit slots, arrays as views with their shapes, whose
//! host addresses are taken only by an executor that needs them; histogram destinations consumed and made unique so that the kernel may update
//! them in place), its result arrays allocated on the host, and the interpreter's error rebuilt
//! from a failed check of generated code ([`ErrorSite`] plus the recorded details).

use crate::error::{R_INTERNAL, R_NEG_SIZE, R_OUT_OF_MEMORY, R_SIZE, Res, error};
use crate::index::{IdxArg, check_index};
use crate::ireval::eval::{Array, Evaluator, Store, Val, assert_failed, div_by_zero, slice_arg};
use crate::memory;
use crate::value::ArrayData;
use ogham_ir::VarId;
use ogham_ir::abi::{ArgValue, ErrorSite, Failure, MAX_DETAILS};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::{HostOp, HostStmt, SegKind, SegOp};
use ogham_ir::sizes;
use ogham_ir::types::PrimType;
use std::collections::HashMap;

/// The position of each kernel statement (by the address of its `SegOp`, which is how a
/// launcher recognises the kernel the evaluator asks it to run).
pub(crate) fn kernel_index<'p>(
    stmts: impl Iterator<Item = &'p HostStmt>,
) -> HashMap<*const SegOp, usize> {
    stmts
        .enumerate()
        .filter_map(|(i, s)| match &s.exp {
            ogham_ir::Exp::Host(HostOp::Seg(seg)) => Some((&**seg as *const SegOp, i)),
            _ => None,
        })
        .collect()
}

/// A failed check of compiled code: its site number and the values describing it.
pub(crate) struct KernelFailure {
    pub site: i64,
    pub details: [i64; MAX_DETAILS],
}

/// One kernel input.
pub(crate) enum Operand {
    /// A scalar's bits (zero-extended).
    Scalar(u64),
    /// A contiguous row-major array: where its elements are, its size in bytes and extents.
    /// (`bytes` is read by the CUDA executor only.)
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Array {
        elems: Elems,
        bytes: usize,
        shape: Vec<usize>,
    },
}

/// Where an array operand's elements are.
pub(crate) enum Elems {
    /// A view of an array of scalars that the [`Io`] keeps alive (its host elements are read
    /// only when an executor asks for their address: a remote buffer stays remote until then).
    View(Array),
    /// A histogram destination, made unique to this launch and updated in place: the address
    /// of its first element on the host.
    Dest(u64),
}

impl Operand {
    /// The operand as a kernel argument on the host.
    pub fn arg(&self) -> ArgValue<'_> {
        match self {
            Operand::Scalar(bits) => ArgValue::Scalar(*bits),
            Operand::Array { elems, shape, .. } => ArgValue::Array {
                ptr: elems.host_ptr(),
                extents: shape,
            },
        }
    }
}

impl Elems {
    /// The address of the first element on the host (reading a remote buffer's elements).
    pub fn host_ptr(&self) -> u64 {
        match self {
            Elems::View(a) => {
                let data = prim_data(a).expect("checked by `Io::prepare`");
                data.as_ptr() as u64 + (a.range().start * data.prim_type_size()) as u64
            }
            Elems::Dest(ptr) => *ptr,
        }
    }
}

/// A kernel result on the host: its shape and (zeroed, then written) data.
pub(crate) type Output = (Vec<usize>, ArrayData);

/// A kernel launch's operands and results on the host.
pub(crate) struct Io {
    pub operands: Vec<Operand>,
    /// Every result but a histogram's.
    pub outputs: Vec<Output>,
    /// Per output, the number of elements of one point's value.
    pub rows: Vec<u64>,
    pub segments: i64,
    pub inner: i64,
    /// Reduced components (outputs with one value per segment).
    pub n_reduced: usize,
    consumed: HashMap<VarId, Array>,
    hist_dests: Vec<VarId>,
}

/// The elements of an array of scalars (all of its store's).
pub(crate) fn prim_data(a: &Array) -> Res<&ArrayData> {
    match a.store() {
        Store::Prim(d) => Ok(d),
        Store::Boxed(_) => Err(error(
            R_INTERNAL,
            Default::default(),
            "a kernel operand is not an array of scalars",
        )),
    }
}

fn array_bytes(a: &Array) -> usize {
    let size = match a.store() {
        Store::Prim(d) => d.prim_type_size(),
        Store::Boxed(_) => 0,
    };
    a.shape().iter().product::<usize>() * size
}

/// The zeroed result buffers of a kernel over `total` points whose results are bound to `pat`
/// (the first `n_reduced` have a value per segment of the `rank`-dimensional space), with the
/// number of elements of one point's value in each.
fn allocate_results(
    ev: &Evaluator,
    pat: &[VarId],
    total: usize,
    rank: usize,
    n_reduced: usize,
) -> Res<(Vec<Output>, Vec<u64>)> {
    let mut outputs = Vec::new();
    let mut rows = Vec::new();
    for (j, v) in pat.iter().enumerate() {
        let ty = ev.ty(*v).clone();
        let shape: Vec<usize> = ty
            .shape()
            .iter()
            .map(|d| {
                if total == 0 {
                    Ok(usize::try_from(ev.int(*d)?).unwrap_or(0))
                } else {
                    ev.size(*d, "kernel result")
                }
            })
            .collect::<Res<_>>()?;
        let space_dims = if j < n_reduced { rank - 1 } else { rank };
        let count = sizes::product(&shape).unwrap_or(usize::MAX);
        memory::reserve(count, ty.elem().byte_size(), "a kernel result", ev.loc)?;
        let row: usize = shape.iter().skip(space_dims).product();
        let data = ArrayData::zeroed(ty.elem(), count).ok_or_else(|| {
            error(
                R_OUT_OF_MEMORY,
                ev.loc,
                format!("out of memory: cannot allocate a kernel result of {count} elements"),
            )
        })?;
        rows.push(row as u64);
        outputs.push((shape, data));
    }
    Ok((outputs, rows))
}

impl Io {
    /// The operands `inputs` of kernel `seg` (bound to `pat`) and its result buffers.
    pub fn prepare(ev: &mut Evaluator, seg: &SegOp, pat: &[VarId], inputs: &[VarId]) -> Res<Io> {
        let hist_dests: Vec<VarId> = match &seg.kind {
            SegKind::Hist(hists) => hists.iter().flat_map(|h| h.dests.clone()).collect(),
            _ => Vec::new(),
        };
        // Operands stay alive (and unshared, for consumed destinations) during the launch.
        let mut operands = Vec::new();
        let mut consumed: HashMap<VarId, Array> = HashMap::new();
        for v in inputs {
            if hist_dests.contains(v) {
                let mut a = ev.consume(*v)?;
                let bytes = array_bytes(&a);
                let ptr = match a.make_mut() {
                    Store::Prim(d) => d.as_mut_ptr() as u64,
                    Store::Boxed(_) => return Err(internal(ev, "a destination of boxed values")),
                };
                operands.push(Operand::Array {
                    elems: Elems::Dest(ptr),
                    bytes,
                    shape: a.shape().to_vec(),
                });
                consumed.insert(*v, a);
                continue;
            }
            let array = match ev.var(*v)? {
                Val::Prim(s) => {
                    operands.push(Operand::Scalar(s.slot_bits() as u64));
                    continue;
                }
                Val::Array(a) => a,
                _ => return Err(internal(ev, "a kernel operand is neither scalar nor array")),
            };
            prim_data(&array)?;
            operands.push(Operand::Array {
                bytes: array_bytes(&array),
                shape: array.shape().to_vec(),
                elems: Elems::View(array),
            });
        }
        let extents: Vec<usize> = seg
            .space
            .iter()
            .map(|(_, e)| ev.size(*e, "kernel space"))
            .collect::<Res<_>>()?;
        let rank = extents.len();
        let total = crate::ireval::eval::kernel_points(&extents, ev.loc)?;
        let inner = extents[rank - 1] as i64;
        let segments = extents[..rank - 1].iter().product::<usize>() as i64;
        let n_reduced = match &seg.kind {
            SegKind::Red(reds) => reds.iter().map(|r| r.neutral.len()).sum(),
            _ => 0,
        };
        let (outputs, rows) = if matches!(seg.kind, SegKind::Hist(_)) {
            (Vec::new(), Vec::new())
        } else {
            ev.reserve_rows(pat)?;
            match allocate_results(ev, pat, total, rank, n_reduced) {
                Ok(results) => results,
                // A point that fails on its own (a size made in every point) fails first.
                Err(e) if total > 0 => {
                    return Err(ev.first_point_error(seg, &extents).unwrap_or(e));
                }
                Err(e) => return Err(e),
            }
        };
        Ok(Io {
            operands,
            outputs,
            rows,
            segments,
            inner,
            n_reduced,
            consumed,
            hist_dests,
        })
    }

    /// Whether the kernel has points to run (a reduction over empty segments still writes
    /// their neutral elements).
    pub fn runs(&self) -> bool {
        self.segments > 0 && (self.inner > 0 || self.n_reduced > 0)
    }

    /// The statement's values: the updated destinations of a histogram, else the results.
    pub fn finish(mut self) -> Vec<Val> {
        // The operands' views go first: the destinations are then unshared again.
        drop(std::mem::take(&mut self.operands));
        if !self.hist_dests.is_empty() {
            return self
                .hist_dests
                .iter()
                .map(|d| {
                    Val::Array(
                        self.consumed
                            .remove(d)
                            .expect("every destination is an input"),
                    )
                })
                .collect();
        }
        self.outputs
            .into_iter()
            .map(|(shape, data)| {
                if shape.is_empty() {
                    Val::Prim(data.get(0))
                } else {
                    Val::Array(Array::new(shape, Store::Prim(data)))
                }
            })
            .collect()
    }
}

pub(crate) fn internal(ev: &Evaluator, what: &str) -> Box<Diagnostic> {
    error(R_INTERNAL, ev.loc, what.to_string())
}

fn shape_text(shape: &[i64]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// The interpreter's error for a failed check of compiled code.
pub(crate) fn failure_diagnostic(
    ev: &mut Evaluator,
    kernel: &str,
    sites: &[ErrorSite],
    site: i64,
    details: &[i64],
) -> Box<Diagnostic> {
    let Some(ErrorSite { loc, failure }) = usize::try_from(site).ok().and_then(|s| sites.get(s))
    else {
        return internal(
            ev,
            &format!("kernel {kernel} failed at unknown check {site}"),
        );
    };
    let loc = *loc;
    ev.loc = loc;
    match failure {
        Failure::Index { rank, idx, .. } => {
            let shape: Vec<usize> = details[..*rank].iter().map(|d| *d as usize).collect();
            let mut k = *rank;
            let mut args = Vec::new();
            for d in idx {
                match d {
                    ogham_ir::DimIndex::Fix(_) => {
                        args.push(IdxArg::At(details[k]));
                        k += 1;
                    }
                    ogham_ir::DimIndex::Slice { .. } => {
                        args.push(slice_arg(details[k], details[k + 1], details[k + 2]));
                        k += 3;
                    }
                }
            }
            match check_index(&shape, &args) {
                Err(e) => error(e.code, loc, e.message),
                Ok(()) => internal(ev, "a bounds check failed on a valid index"),
            }
        }
        Failure::DivByZero { op } => div_by_zero(loc, op.symbol()),
        Failure::Assert { message, kind } => assert_failed(loc, message, *kind),
        Failure::NegativeSize { what } => match sizes::count(details[0]) {
            Err(e) => error(R_NEG_SIZE, loc, e.message(what)),
            Ok(_) => internal(ev, "a size check failed on a valid size"),
        },
        Failure::Reshape { array, dims } => {
            let r = ev.ty(*array).rank();
            let from: Vec<usize> = details[..r].iter().map(|d| *d as usize).collect();
            let to = &details[r..r + dims.len()];
            if let Some(&n) = to.iter().find(|&&n| n < 0) {
                return error(R_NEG_SIZE, loc, format!("reshape: negative size {n}"));
            }
            let to: Vec<usize> = to.iter().map(|d| *d as usize).collect();
            match ev.check_reshape(&from, dims, &to) {
                Err(e) => e,
                Ok(()) => internal(ev, "a reshape check failed on a valid shape"),
            }
        }
        Failure::ShapeMismatch { what, rank } => error(
            R_SIZE,
            loc,
            format!(
                "{what} of shape {} where shape {} was expected",
                shape_text(&details[..*rank]),
                shape_text(&details[*rank..2 * rank])
            ),
        ),
        Failure::OutOfMemory => error(
            R_OUT_OF_MEMORY,
            loc,
            format!("out of memory: cannot allocate {} bytes", details[0]),
        ),
    }
}

impl ArrayData {
    /// The size in bytes of one element.
    pub(crate) fn prim_type_size(&self) -> usize {
        match self.prim_type() {
            PrimType::Bool | PrimType::I8 | PrimType::U8 => 1,
            PrimType::I16 => 2,
            PrimType::I32 | PrimType::F32 => 4,
            PrimType::I64 | PrimType::F64 => 8,
        }
    }
}
