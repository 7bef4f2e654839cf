//! JIT compilation of the kernels of a CLIF module (the `codegen-cpu` artefact, usually one
//! entry point's) with Cranelift into this process's memory ([`jit`]), binding the runtime's helpers to the addresses the runtime gives (the compiler
//! does not know the runtime: the caller passes every helper's name and address).
//!
//! Invariants: the machine code lives as long as the returned [`JitCode`]'s `memory`, which
//! frees it when dropped (the runtime drops the entry points' addresses with it); every helper
//! of [`all_helpers`] must have an address, or compilation fails before any code is made.
//! With `OGHAM_PERF_MAP` set the kernels' addresses also go to `/tmp/perf-<pid>.map`; with
//! `OGHAM_PERF_MAP=code` their machine code too, a file per function in a directory this process
//! creates, `/tmp/perf-<pid>.code/` (for `objdump`, against per-address profiles).

use super::helpers::all_helpers;
use super::{ClifModule, machine};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::FuncId;
use ogham_ir::artifact::cpu::{JitCode, JitKernel};

/// Machine code of compiled kernels; freed when dropped.
struct Jit {
    module: Option<JITModule>,
}

// SAFETY: after `jit` finalised it, the module is only used to free its memory when the `Jit`
// is dropped; the code it holds is immutable and may run on any thread.
unsafe impl Send for Jit {}
// SAFETY: as above; a shared `Jit` gives no access to the module.
unsafe impl Sync for Jit {}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the owner of the `JitCode` drops its addresses with it (module header).
            unsafe { module.free_memory() };
        }
    }
}

/// JIT-compiles the kernels of `clif` for the host CPU; their calls to helpers go to `helpers`
/// (each helper's symbol and address in this process).
pub fn jit(clif: &ClifModule, helpers: &[(&str, *const u8)]) -> Result<JitCode, String> {
    if let Some(h) = all_helpers()
        .into_iter()
        .find(|h| !helpers.iter().any(|(name, _)| *name == h.name))
    {
        return Err(format!("no address for the helper {}", h.name));
    }
    let segs = &clif.segs;
    let isa = machine::isa(false)?;
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    for &(name, ptr) in helpers {
        builder.symbol(name, ptr);
    }
    let mut module = JITModule::new(builder);
    let (ids, sizes) = machine::define_kernels(&mut module, segs, "")?;
    module
        .finalize_definitions()
        .map_err(|e| format!("linking kernels: {e}"))?;
    write_perf_map(&module, &sizes);
    let code = |id: FuncId| module.get_finalized_function(id);
    let kernels = segs
        .iter()
        .zip(ids)
        .map(|(seg, id)| {
            let (Ok(kernel), Some((main, combine))) = (&seg.kernel, id) else {
                return None;
            };
            Some(JitKernel {
                info: kernel.info(),
                kernel: code(main),
                combine: combine.map_or(std::ptr::null(), code),
            })
        })
        .collect();
    Ok(JitCode {
        kernels,
        memory: Box::new(Jit {
            module: Some(module),
        }),
    })
}

/// With `OGHAM_PERF_MAP` set, the kernels' addresses, sizes and names go to
/// `/tmp/perf-<pid>.map`, so that `perf report` names JIT-compiled kernels; with
/// `OGHAM_PERF_MAP=code`, each function's machine code also goes to
/// `/tmp/perf-<pid>.code/<address>-<name>.bin` (see [`write_code`]).
fn write_perf_map(module: &JITModule, functions: &[machine::Defined]) {
    let Some(setting) = std::env::var_os("OGHAM_PERF_MAP") else {
        return;
    };
    use std::io::Write;
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let code = setting == "code";
    for (id, size, name) in functions {
        let addr = module.get_finalized_function(*id);
        let _ = writeln!(file, "{:x} {size:x} {name}", addr as usize);
        if code {
            // SAFETY: a finalized function is `size` bytes of machine code at its address,
            // which lives as long as `module`.
            let bytes = unsafe { std::slice::from_raw_parts(addr, *size as usize) };
            write_code(&format!("{:x}-{name}.bin", addr as usize), bytes);
        }
    }
}

/// Writes `bytes` to `name` in `/tmp/perf-<pid>.code/`, a directory only this user may enter,
/// which this process creates at its first call: when a directory of that name was there
/// already (someone else's, or a link), nothing is written. Each file is new (never through a
/// link left there). Failures are ignored, as the map's are: profiling aids must not stop a run.
#[cfg(unix)]
fn write_code(name: &str, bytes: &[u8]) {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    use std::sync::OnceLock;
    static DIR: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::path::PathBuf::from(format!("/tmp/perf-{}.code", std::process::id()));
        let made = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        made.is_ok().then_some(dir)
    });
    let Some(dir) = dir else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join(name));
    if let Ok(mut file) = file {
        let _ = file.write_all(bytes);
    }
}

/// Only on Unix (the permissions above).
#[cfg(not(unix))]
fn write_code(_: &str, _: &[u8]) {}

#[cfg(test)]
mod tests {
    /// Code that would call a helper at an unknown address is never made.
    #[test]
    fn every_helper_needs_an_address() {
        let text = "entry main [n_0] (xs_1: [n_0]f32) : [n_0]f32 =\n  in (xs_1)\n";
        let program = ogham_ir::parse::parse_program(text).expect("an IR program");
        let clif = super::super::compile_function(&program, 0);
        let err = super::jit(&clif, &[("ogham_alloc", std::ptr::null())])
            .err()
            .expect("refused");
        assert_eq!(err, "no address for the helper ogham_arena_reset");
    }
}
