//! What the CPU executor needs from a code generator, which the runtime does not contain (it
//! depends on the IR only; the crate that wires the pipeline, `ogham`, implements
//! [`CpuCodegen`] with the compiler's Cranelift backend and hands it to the runtime): kernels
//! JIT-compiled into this process, an entry point's kernels as native code for the disk
//! cache, a library's kernels as an ahead-of-time object, and the source ranges where the
//! generated code omits bounds checks (which a library read from a file must not widen).
//!
//! Contract: the code follows the calling convention of the CPU backend, calls the helpers at
//! the addresses given (or, in objects, by their symbols) and is described by the artefacts of
//! `ogham_ir::artifact::cpu` in the order of the kernel statements (`ogham_ir::abi::kernels`).

use ogham_ir::artifact::cpu::{JitCode, MakeImage, NativeCode};
use ogham_ir::kir::Program;
use ogham_ir::source::{FileId, Span};

/// A code generator for the CPU executor. Entry points' kernels are generated lazily, at an
/// entry point's first call, from any thread.
pub trait CpuCodegen: Send + Sync {
    /// The kernels of entry point `function` (an index in `program.functions`) JIT-compiled
    /// into this process; their calls to the runtime's helpers go to `helpers` (every helper's
    /// symbol and address).
    fn jit(
        &self,
        program: &Program,
        function: usize,
        helpers: &[(&str, *const u8)],
    ) -> Result<JitCode, String>;

    /// The kernels of entry point `function` as a relocatable object for this machine (the
    /// disk cache's native code, which `cpu::native::load` maps).
    fn native(&self, program: &Program, function: usize) -> Result<NativeCode, String>;

    /// An object file defining `<name>_image` for `program`: its kernels compiled for this
    /// machine and the image record whose other values `image` gives from the descriptions of
    /// the program's kernel statements.
    fn object(
        &self,
        program: &Program,
        name: &str,
        image: &mut MakeImage,
    ) -> Result<Vec<u8>, String>;

    /// The source ranges of the `#[unsafe]` definitions of source file `file` with `text`, in
    /// which the generated code omits bounds checks.
    fn unsafe_ranges(&self, file: FileId, text: &str) -> Vec<Span>;
}

/// The code generator an executable or library keeps (one for the whole process).
pub type Codegen = &'static dyn CpuCodegen;
