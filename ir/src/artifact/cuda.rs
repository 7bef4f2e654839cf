//! The CUDA backend's artefact: for every kernel statement of a kernel-IR program, its CUDA C
//! (or why there is none) and its launch plan ([`CudaKernel`]), plus the prelude that every
//! translation unit starts with. The compiler's `back::cuda` makes it; the runtime's CUDA
//! executor compiles [`CudaProgram::source`] with NVRTC and launches the kernels by their plans.
//!
//! Invariants: the kernels are in the order of [`crate::abi::kernels`] and carry its names
//! (`<entry>_k<n>`, unique in a program), which is how the runtime finds a kernel statement's
//! plan; the text is deterministic (`ogham dev --dump-after codegen-cuda`, `snapshot { cuda }`).

use crate::VarId;
use crate::abi::ErrorSite;
use crate::kir::SegLevel;

/// Whether kernels count their float operations: `Plain` for the GPU and the emulator,
/// `Counted` for the performance model (`--backend cuda-model`), whose translation unit wraps
/// every float operation in `og_flop`/`og_special` (defined by the model's header, not by the
/// prelude: NVRTC never sees counted code). Counting changes no value: each wrapper returns its
/// argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Counting {
    Plain,
    Counted,
}

/// A generated kernel: its name and what the runtime needs to launch it (its launch plan; the
/// conventions are documented by the backend's `kernel.rs`).
#[derive(Clone, Debug)]
pub struct CudaKernel {
    pub name: String,
    pub level: SegLevel,
    /// The variables passed in the argument slots, in order.
    pub inputs: Vec<VarId>,
    /// The checks of the kernel then of its combine kernel, by number.
    pub sites: Vec<ErrorSite>,
    /// Accumulator components of a reduction or scan (slots per partial result).
    pub accumulators: usize,
    /// `<name>_combine`, for reductions and scans.
    pub combine: Option<String>,
    /// The combine kernel runs a warp per segment (reductions of integers and booleans), not a
    /// thread: its blocks must be whole warps.
    pub combine_by_warps: bool,
    /// Block level: 8-byte shared-memory slots needed per thread.
    pub shared_slots: usize,
    /// Block level: the widths of the SOACs its blocks share out, when the runtime knows them
    /// all at launch and the block's size cannot change the results; a block then takes the
    /// widest rounded up to whole warps (at most the device's block size). `None`: the
    /// device's block size.
    pub block_widths: Option<Vec<Width>>,
    /// Whether the kernel needs an arena (it makes arrays).
    pub allocates: bool,
    /// Whether the threads make arrays of their own. At block level each has a share of its
    /// block's arena region after the block's `BLOCK_ARENA_SHARES`; otherwise a block's region
    /// is those shares alone.
    pub threads_allocate: bool,
    /// Thread level, per-point arrays interleaved (`og_lanes`): how many element-size classes
    /// its sub-arenas have, each with `arena_stride` bytes per thread, so that a thread's arena
    /// is `lane_classes × arena_stride` bytes. 0: one share of `arena_stride` bytes.
    pub lane_classes: i64,
}

impl Default for CudaKernel {
    /// A thread-level kernel with no name, inputs, checks or arrays (to fill in with struct
    /// update syntax).
    fn default() -> CudaKernel {
        CudaKernel {
            name: String::new(),
            level: SegLevel::Thread,
            inputs: Vec::new(),
            sites: Vec::new(),
            accumulators: 0,
            combine: None,
            combine_by_warps: false,
            shared_slots: 0,
            block_widths: None,
            allocates: false,
            threads_allocate: false,
            lane_classes: 0,
        }
    }
}

/// A width a block-level kernel's runtime knows at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    Const(i64),
    /// The `i64` in this argument slot (a scalar input's, [`crate::abi::ArgSlots`]).
    Slot(usize),
}

/// One kernel statement of a program and its generated form (or why there is none).
#[derive(Clone, Debug)]
pub struct GeneratedSeg {
    /// Index of the entry point in [`crate::kir::Program::functions`].
    pub function: usize,
    /// The kernel statement's name ([`crate::abi::KernelSite::name`]).
    pub name: String,
    /// The kernel, or why the backend could not generate it (the runtime evaluates it on the
    /// host).
    pub kernel: Result<CudaKernel, String>,
    /// The kernel's code (or the comment saying why there is none), without the prelude.
    pub text: String,
}

/// The CUDA code of a program's kernels: of every entry point, or of the one the runtime asked
/// for.
#[derive(Clone, Debug)]
pub struct CudaProgram {
    /// What every translation unit starts with (types, the failure record, scalar semantics,
    /// the arena allocator).
    pub prelude: String,
    /// The data kernels the executor launches itself ([`crate::abi::cuda_data_kernels`]),
    /// written after the prelude.
    pub data_kernels: String,
    pub segs: Vec<GeneratedSeg>,
}

/// A translation unit NVRTC compiles on its own ([`CudaProgram::units`]): its source and the
/// `__global__` functions it defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    pub source: String,
    pub kernels: Vec<String>,
    /// The level of the generated kernel the unit defines; `None` for the data kernels' unit.
    pub level: Option<SegLevel>,
}

impl CudaProgram {
    /// The kernels, without the prelude: the artefact's text.
    pub fn kernels_text(&self) -> String {
        self.segs.iter().map(|s| s.text.as_str()).collect()
    }

    /// The whole translation unit: the prelude, the data kernels, then every kernel.
    pub fn source(&self) -> String {
        format!(
            "{}{}\n{}",
            self.prelude,
            self.data_kernels,
            self.kernels_text()
        )
    }

    /// The translation units the CUDA runtime compiles separately (in parallel, each when it
    /// is first needed): the data kernels' (the prelude and the data kernels), then one per
    /// generated kernel, in statement order (the prelude and the kernel with its combine
    /// kernel). Each is [`CudaProgram::source`] less the other units' kernels: generated
    /// kernels call only the prelude, never each other.
    pub fn units(&self) -> Vec<Unit> {
        let data = Unit {
            source: format!("{}{}", self.prelude, self.data_kernels),
            kernels: crate::abi::cuda_data_kernels().map(String::from).collect(),
            level: None,
        };
        let kernels = self.segs.iter().filter_map(|s| {
            let kernel = s.kernel.as_ref().ok()?;
            Some(Unit {
                source: format!("{}\n{}", self.prelude, s.text),
                kernels: kernel.functions(),
                level: Some(kernel.level),
            })
        });
        std::iter::once(data).chain(kernels).collect()
    }

    /// The `__global__` functions of [`CudaProgram::source`]: every generated kernel and its
    /// combine kernel, then the data kernels.
    pub fn kernel_names(&self) -> Vec<String> {
        self.segs
            .iter()
            .filter_map(|s| s.kernel.as_ref().ok())
            .flat_map(CudaKernel::functions)
            .chain(crate::abi::cuda_data_kernels().map(String::from))
            .collect()
    }
}

impl CudaKernel {
    /// Its `__global__` functions: the kernel and its combine kernel.
    pub fn functions(&self) -> Vec<String> {
        std::iter::once(self.name.clone())
            .chain(self.combine.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(name: &str, combine: Option<&str>) -> GeneratedSeg {
        GeneratedSeg {
            function: 0,
            name: name.to_string(),
            kernel: Ok(CudaKernel {
                name: name.to_string(),
                combine: combine.map(String::from),
                ..CudaKernel::default()
            }),
            text: format!("// kernel {name}\n"),
        }
    }

    #[test]
    fn each_kernel_is_a_unit_after_the_prelude() {
        let mut not_generated = seg("a_k2", None);
        not_generated.kernel = Err("why".to_string());
        let program = CudaProgram {
            prelude: "P\n".to_string(),
            data_kernels: "D\n".to_string(),
            segs: vec![
                seg("a_k0", Some("a_k0_combine")),
                seg("a_k1", None),
                not_generated,
            ],
        };
        assert_eq!(
            program.source(),
            "P\nD\n\n// kernel a_k0\n// kernel a_k1\n// kernel a_k2\n"
        );
        let units = program.units();
        assert_eq!(units.len(), 3);
        assert_eq!(units[0].source, "P\nD\n");
        assert_eq!(units[0].kernels[0], crate::abi::CUDA_IOTA);
        assert_eq!(units[1].source, "P\n\n// kernel a_k0\n");
        assert_eq!(units[1].kernels, ["a_k0", "a_k0_combine"]);
        assert_eq!(units[2].kernels, ["a_k1"]);
        let names = program.kernel_names();
        assert_eq!(names[..3], ["a_k0", "a_k0_combine", "a_k1"]);
        assert_eq!(names.len(), 3 + crate::abi::cuda_data_kernels().count());
    }
}
