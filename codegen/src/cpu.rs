//! The CPU executor's code generator ([`ogham_runtime::cpu::CpuCodegen`]) implemented with the
//! compiler's Cranelift backend ([`ogham_compiler::back::cpu`]): [`CPU`] is what every
//! executable, library and disk cache entry of this crate compiles its kernels with. Each
//! request runs the pipeline's last pass, `codegen-cpu` (`back::cpu::compile`, here for one
//! entry point), then turns its artefact, the CLIF module, into machine code.

use ogham_compiler::back::cpu::{compile, compile_function, jit, object};
use ogham_compiler::back::lower::unsafe_ranges;
use ogham_ir::artifact::cpu::{JitCode, MakeImage, NativeCode};
use ogham_ir::kir::Program;
use ogham_ir::source::{FileId, Span};
use ogham_runtime::cpu::{Codegen, CpuCodegen};

/// The Cranelift backend.
struct Cranelift;

/// The code generator of the CPU backend.
pub static CPU: Codegen = &Cranelift;

impl CpuCodegen for Cranelift {
    fn jit(
        &self,
        program: &Program,
        function: usize,
        helpers: &[(&str, *const u8)],
    ) -> Result<JitCode, String> {
        jit::jit(&compile_function(program, function), helpers)
    }

    fn native(&self, program: &Program, function: usize) -> Result<NativeCode, String> {
        object::native(&compile_function(program, function))
    }

    fn object(
        &self,
        program: &Program,
        name: &str,
        image: &mut MakeImage,
    ) -> Result<Vec<u8>, String> {
        object::image_object(&compile(program), name, image)
    }

    fn unsafe_ranges(&self, file: FileId, text: &str) -> Vec<Span> {
        unsafe_ranges(file, text)
    }
}

#[cfg(test)]
mod tests {
    use ogham_compiler::back::cpu::machine;

    /// The runtime finds the host's CPU features without Cranelift, as the disk cache's key and
    /// ahead-of-time objects record them with it: both name the same features (in their own
    /// orders).
    #[test]
    fn the_host_features_are_those_cranelift_enables() {
        let isa = machine::isa(false).expect("the host is supported");
        let mut ours = ogham_runtime::cpu::host_cpu_features()
            .expect("the host is supported")
            .to_vec();
        let mut cranelifts = machine::cpu_features(&*isa);
        ours.sort();
        cranelifts.sort();
        assert_eq!(ours, cranelifts);
    }
}
