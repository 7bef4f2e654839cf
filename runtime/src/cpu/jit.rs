//! JIT compilation of a program's kernels with Cranelift for the host CPU, and the pieces that
//! ahead-of-time compilation (`aot.rs`) and native code for the disk cache (`native.rs`) share
//! with it: the target, the helpers' declarations and the definition of one kernel in a
//! Cranelift module. Only with the `jit` feature.

use super::code::Entry;
use super::helpers;
use cranelift_codegen::isa::{CallConv, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};
use ogham_compiler::back::cpu::CompiledSeg;
use ogham_compiler::back::cpu::helpers::all_helpers;
use std::sync::Arc;

/// Machine code of compiled kernels; freed when dropped.
pub struct Jit {
    module: Option<JITModule>,
}

// SAFETY: after `compile` finalised it, the module is only used to free its memory when the
// `Jit` is dropped; the code it holds is immutable and may run on any thread.
unsafe impl Send for Jit {}
// SAFETY: as above; a shared `Jit` gives no access to the module.
unsafe impl Sync for Jit {}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the functions are only called through `Launchable`s, which borrow `self`.
            unsafe { module.free_memory() };
        }
    }
}

/// The host CPU with all its features; position-independent code for object files.
pub(super) fn isa(pic: bool) -> Result<Arc<dyn TargetIsa>, String> {
    let mut flags = settings::builder();
    for (name, value) in [
        ("opt_level", "speed"),
        ("is_pic", if pic { "true" } else { "false" }),
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

/// The names of the CPU features `isa` may use.
pub(super) fn cpu_features(isa: &dyn TargetIsa) -> Vec<String> {
    isa.isa_flags()
        .iter()
        .filter(|flag| flag.as_bool() == Some(true))
        .map(|flag| flag.name.to_string())
        .collect()
}

/// Compiles the kernels that were generated (`Ok`) into machine code; returns their entry
/// points in the order of `segs` (`None` for the others).
pub fn compile(segs: &[CompiledSeg]) -> Result<(Jit, Vec<Option<Entry>>), String> {
    let isa = isa(false)?;
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    for (name, ptr) in helpers::addresses() {
        builder.symbol(name, ptr);
    }
    let mut module = JITModule::new(builder);
    let (ids, sizes) = define_kernels(&mut module, segs, "")?;
    module
        .finalize_definitions()
        .map_err(|e| format!("linking kernels: {e}"))?;
    write_perf_map(&module, &sizes);
    let code = |id: FuncId| module.get_finalized_function(id);
    let entries = ids
        .into_iter()
        .map(|id| {
            id.map(|(main, combine)| {
                // SAFETY: the functions were generated for one kernel.
                unsafe { Entry::from_code(code(main), combine.map_or(std::ptr::null(), code)) }
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

/// The function ids of a kernel and of its combine function.
pub(super) type KernelIds = (FuncId, Option<FuncId>);

/// Defines the generated kernels of `segs` (and their combine functions) in `module`, named
/// `<symbol_prefix><kernel>`, local to the module; returns their ids in the order of `segs`
/// (`None` where no kernel was generated) and every function's id, code size and name. The
/// helpers are declared first (imports), so that their function ids are their positions in
/// `all_helpers()`, as generated code refers to them.
#[allow(clippy::type_complexity)]
pub(super) fn define_kernels(
    module: &mut impl Module,
    segs: &[CompiledSeg],
    symbol_prefix: &str,
) -> Result<(Vec<Option<KernelIds>>, Vec<(FuncId, u32, String)>), String> {
    let call_conv = module.isa().default_call_conv();
    for h in all_helpers() {
        let mut sig = h.signature();
        sig.call_conv = call_conv;
        module
            .declare_function(h.name, Linkage::Import, &sig)
            .map_err(|e| format!("declaring {}: {e}", h.name))?;
    }
    let mut ids = Vec::new();
    let mut sizes = Vec::new();
    for seg in segs {
        let Ok(k) = &seg.kernel else {
            ids.push(None);
            continue;
        };
        let name = format!("{symbol_prefix}{}", k.name);
        let main = define(module, &k.func, &name, call_conv, &mut sizes)?;
        let combine = match &k.combine {
            Some(c) => Some(define(
                module,
                c,
                &format!("{name}_combine"),
                call_conv,
                &mut sizes,
            )?),
            None => None,
        };
        ids.push(Some((main, combine)));
    }
    Ok((ids, sizes))
}

fn define(
    module: &mut impl Module,
    func: &cranelift_codegen::ir::Function,
    name: &str,
    call_conv: CallConv,
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

#[cfg(test)]
mod tests {
    /// The runtime finds the host's CPU features without Cranelift (`code.rs`), as ahead-of-time
    /// objects record them with it: both name the same features (in their own orders).
    #[test]
    fn the_host_features_are_those_cranelift_enables() {
        let isa = super::isa(false).expect("the host is supported");
        let mut ours = super::super::code::host_cpu_features()
            .expect("the host is supported")
            .to_vec();
        let mut cranelifts = super::cpu_features(&*isa);
        ours.sort();
        cranelifts.sort();
        assert_eq!(ours, cranelifts);
    }
}
