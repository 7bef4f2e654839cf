//! JIT compilation of a program's kernels with Cranelift for the host CPU.

use super::helpers;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};
use ogham_compiler::back::cpu::CompiledSeg;
use ogham_compiler::back::cpu::helpers::all_helpers;

/// `kernel(ctx, args, seg_start, seg_end, i_start, i_end, partial, carry) -> status`.
pub type KernelFn = unsafe extern "C" fn(
    *mut helpers::Ctx,
    *const u64,
    i64,
    i64,
    i64,
    i64,
    *mut u64,
    *const u64,
) -> i32;
/// `combine(ctx, args, acc, val) -> status`.
pub type CombineFn =
    unsafe extern "C" fn(*mut helpers::Ctx, *const u64, *mut u64, *const u64) -> i32;

/// Machine code of compiled kernels; freed when dropped.
pub struct Jit {
    module: Option<JITModule>,
}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the functions are only called through `Launchable`s, which borrow `self`.
            unsafe { module.free_memory() };
        }
    }
}

/// A kernel's entry points.
#[derive(Clone, Copy)]
pub struct Entry {
    pub kernel: KernelFn,
    pub combine: Option<CombineFn>,
}

fn isa() -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, String> {
    let mut flags = settings::builder();
    for (name, value) in [
        ("opt_level", "speed"),
        ("is_pic", "false"),
        ("use_colocated_libcalls", "false"),
    ] {
        flags
            .set(name, value)
            .map_err(|e| format!("cranelift setting {name}: {e}"))?;
    }
    let builder = cranelift_native::builder().map_err(|e| format!("host CPU: {e}"))?;
    builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("host CPU: {e}"))
}

/// Compiles the kernels that were generated (`Ok`) into machine code; returns their entry
/// points in the order of `segs` (`None` for the others).
pub fn compile(segs: &[CompiledSeg]) -> Result<(Jit, Vec<Option<Entry>>), String> {
    let isa = isa()?;
    let call_conv = isa.default_call_conv();
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    for (name, ptr) in helpers::addresses() {
        builder.symbol(name, ptr);
    }
    let mut module = JITModule::new(builder);
    // Helpers first, so that their function ids are their positions in `all_helpers()`.
    for h in all_helpers() {
        let mut sig = h.signature();
        sig.call_conv = call_conv;
        module
            .declare_function(h.name, Linkage::Import, &sig)
            .map_err(|e| format!("declaring {}: {e}", h.name))?;
    }
    let mut ids: Vec<Option<(FuncId, Option<FuncId>)>> = Vec::new();
    let mut sizes = Vec::new();
    for seg in segs {
        let Ok(k) = &seg.kernel else {
            ids.push(None);
            continue;
        };
        let main = define(&mut module, &k.func, &k.name, call_conv, &mut sizes)?;
        let combine = match &k.combine {
            Some(c) => Some(define(
                &mut module,
                c,
                &format!("{}_combine", k.name),
                call_conv,
                &mut sizes,
            )?),
            None => None,
        };
        ids.push(Some((main, combine)));
    }
    module
        .finalize_definitions()
        .map_err(|e| format!("linking kernels: {e}"))?;
    write_perf_map(&module, &sizes);
    let entries = ids
        .into_iter()
        .map(|id| {
            id.map(|(main, combine)| {
                // SAFETY: the functions were generated with these signatures (see
                // `ogham_compiler::back::cpu`).
                unsafe {
                    Entry {
                        kernel: std::mem::transmute::<*const u8, KernelFn>(
                            module.get_finalized_function(main),
                        ),
                        combine: combine.map(|c| {
                            std::mem::transmute::<*const u8, CombineFn>(
                                module.get_finalized_function(c),
                            )
                        }),
                    }
                }
            })
        })
        .collect();
    Ok((
        Jit {
            module: Some(module),
        },
        entries,
    ))
}

/// With `OGHAM_PERF_MAP` set, the kernels' addresses, sizes and names go to
/// `/tmp/perf-<pid>.map`, so that `perf report` names JIT-compiled kernels.
fn write_perf_map(module: &JITModule, functions: &[(FuncId, u32, String)]) {
    if std::env::var_os("OGHAM_PERF_MAP").is_none() {
        return;
    }
    use std::io::Write;
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    for (id, size, name) in functions {
        let addr = module.get_finalized_function(*id) as usize;
        let _ = writeln!(file, "{addr:x} {size:x} {name}");
    }
}

fn define(
    module: &mut JITModule,
    func: &cranelift_codegen::ir::Function,
    name: &str,
    call_conv: cranelift_codegen::isa::CallConv,
    sizes: &mut Vec<(FuncId, u32, String)>,
) -> Result<FuncId, String> {
    let mut func = func.clone();
    func.signature.call_conv = call_conv;
    for sig in func.dfg.signatures.values_mut() {
        sig.call_conv = call_conv;
    }
    let id = module
        .declare_function(name, Linkage::Local, &func.signature)
        .map_err(|e| format!("declaring {name}: {e}"))?;
    let mut ctx = cranelift_codegen::Context::for_function(func);
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("compiling {name}: {e:?}"))?;
    let size = ctx
        .compiled_code()
        .map_or(0, |code| code.code_info().total_size);
    sizes.push((id, size, name.to_string()));
    Ok(id)
}
