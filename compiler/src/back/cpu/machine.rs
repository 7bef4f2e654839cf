//! The host machine as Cranelift targets it, and the definition of kernels in a Cranelift
//! module, which the JIT (`jit.rs`) and object files (`object.rs`) share: the target ISA (the
//! host CPU with all its features), the names of the features the code may use, and each
//! kernel's functions defined after the runtime's helpers are declared.
//!
//! Invariant relied on by generated code: the helpers are declared first, in the order of
//! [`all_helpers`], so that the function id a kernel calls is the helper's position.

use super::CompiledSeg;
use super::helpers::all_helpers;
use cranelift_codegen::isa::{CallConv, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_module::{FuncId, Linkage, Module};
use std::sync::Arc;

/// The host CPU with all its features; position-independent code for object files.
pub fn isa(pic: bool) -> Result<Arc<dyn TargetIsa>, String> {
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

/// The names of the CPU features `isa` may use (`has_avx2`, ...).
pub fn cpu_features(isa: &dyn TargetIsa) -> Vec<String> {
    isa.isa_flags()
        .iter()
        .filter(|flag| flag.as_bool() == Some(true))
        .map(|flag| flag.name.to_string())
        .collect()
}

/// The function ids of a kernel and of its combine function.
pub(super) type KernelIds = (FuncId, Option<FuncId>);

/// A defined function: its id, code size and name.
pub(super) type Defined = (FuncId, u32, String);

/// Defines the generated kernels of `segs` (and their combine functions) in `module`, named
/// `<symbol_prefix><kernel>`, local to the module; returns their ids in the order of `segs`
/// (`None` where no kernel was generated) and every function's id, code size and name. The
/// helpers are declared first (imports), so that their function ids are their positions in
/// `all_helpers()`, as generated code refers to them.
pub(super) fn define_kernels(
    module: &mut impl Module,
    segs: &[CompiledSeg],
    symbol_prefix: &str,
) -> Result<(Vec<Option<KernelIds>>, Vec<Defined>), String> {
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
    sizes: &mut Vec<Defined>,
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
