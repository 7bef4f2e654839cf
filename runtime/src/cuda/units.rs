//! NVRTC's work on an entry point's kernels, split and shared out between threads. The kernels
//! are compiled as separate translation units ([`CudaProgram::units`]: the data kernels', then
//! one per generated kernel, each after the prelude), each at most once and when it is needed:
//!
//! - a launch asks for its kernel's unit ([`Units::get`]); a unit no thread has started is
//!   compiled on the asking thread, one being compiled is waited for;
//! - meanwhile helper threads (the machine's cores less the launching thread's, at least one)
//!   compile the units ahead of the launches, in statement order, so that a kernel is often
//!   ready before its first launch and the large units compile side by side;
//! - when the run ends ([`Compiling`] dropped) the helpers take no more units: a version of a
//!   kernel that the run's thresholds never chose costs at most a helper's otherwise idle time,
//!   never the launching thread's.
//!
//! What a unit compiles to (a CUBIN for the GPU, ptxas's report for the performance model) is
//! the caller's; so is its caching. NVRTC's time grows faster than linearly with a unit's size
//! (docs/cuda.md, "Compiling the kernels"), and the prelude alone compiles in milliseconds, so
//! splitting costs little and lets the largest kernel's compilation overlap the others'.

use ogham_ir::artifact::cuda::{CudaProgram, Unit};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Compiles one unit (its result may be an error).
type Compile<T> = dyn Fn(&Unit) -> T + Send + Sync;

/// The units of one program and what each compiled to, once it has.
pub struct Units<T> {
    units: Vec<Unit>,
    /// The unit defining each kernel.
    by_kernel: HashMap<String, usize>,
    done: Vec<OnceLock<T>>,
    /// The next unit a helper takes.
    next: AtomicUsize,
    stopped: AtomicBool,
    compile: Box<Compile<T>>,
}

/// A program's units being compiled; dropping it stops the helpers at their current unit.
pub struct Compiling<T>(Arc<Units<T>>);

impl<T: Send + Sync + 'static> Compiling<T> {
    /// Starts the helper threads on `program`'s units, each compiled by `compile`.
    pub fn start(
        program: &CudaProgram,
        compile: impl Fn(&Unit) -> T + Send + Sync + 'static,
    ) -> Compiling<T> {
        let units = program.units();
        let by_kernel = units
            .iter()
            .enumerate()
            .flat_map(|(k, u)| u.kernels.iter().map(move |name| (name.clone(), k)))
            .collect();
        let shared = Arc::new(Units {
            done: units.iter().map(|_| OnceLock::new()).collect(),
            units,
            by_kernel,
            next: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
            compile: Box::new(compile),
        });
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for _ in 0..helpers(cores, shared.units.len()) {
            let units = Arc::clone(&shared);
            std::thread::spawn(move || units.help());
        }
        Compiling(shared)
    }
}

/// How many helper threads compile ahead: one core is the launching thread's; at least one
/// helper (so that a one-core machine still overlaps compiling with running), and none idle.
fn helpers(cores: usize, units: usize) -> usize {
    cores.saturating_sub(1).max(1).min(units)
}

impl<T> Compiling<T> {
    /// The unit defining kernel `name`, compiled (on this thread if no helper has started it).
    pub fn unit_of(&self, name: &str) -> Option<(&Unit, &T)> {
        let &k = self.0.by_kernel.get(name)?;
        Some((&self.0.units[k], self.0.get(k)))
    }
}

impl<T> Units<T> {
    fn get(&self, k: usize) -> &T {
        self.done[k].get_or_init(|| (self.compile)(&self.units[k]))
    }

    /// A helper's loop: the next unit no helper has taken, until none is left or the run ends.
    fn help(&self) {
        while !self.stopped.load(Ordering::Relaxed) {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k >= self.units.len() {
                return;
            }
            self.get(k);
        }
    }
}

impl<T> Drop for Compiling<T> {
    fn drop(&mut self) {
        self.0.stopped.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ogham_ir::artifact::cuda::{CudaKernel, GeneratedSeg};
    use std::sync::Mutex;

    fn program(kernels: &[&str]) -> CudaProgram {
        let seg = |name: &str| GeneratedSeg {
            function: 0,
            name: name.to_string(),
            kernel: Ok(CudaKernel {
                name: name.to_string(),
                ..CudaKernel::default()
            }),
            text: format!("// {name}\n"),
        };
        CudaProgram {
            prelude: "prelude\n".to_string(),
            data_kernels: "data\n".to_string(),
            segs: kernels.iter().map(|k| seg(k)).collect(),
        }
    }

    #[test]
    fn every_unit_compiles_once_whoever_asks() {
        let compiled = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&compiled);
        let units = Compiling::start(&program(&["a_k0", "a_k1", "a_k2"]), move |u: &Unit| {
            log.lock().unwrap().push(u.source.clone());
            u.source.len()
        });
        let (unit, size) = units.unit_of("a_k1").expect("a_k1 has a unit");
        assert_eq!(unit.source, "prelude\n\n// a_k1\n");
        assert_eq!(*size, unit.source.len());
        assert!(units.unit_of("og_iota").is_some());
        assert!(units.unit_of("a_k9").is_none());
        for name in ["a_k0", "a_k2", "og_iota"] {
            units.unit_of(name);
        }
        let mut sources = compiled.lock().unwrap().clone();
        assert_eq!(sources.len(), 4);
        sources.sort();
        sources.dedup();
        assert_eq!(sources.len(), 4);
    }

    #[test]
    fn helpers_leave_the_launching_core() {
        assert_eq!(helpers(1, 10), 1);
        assert_eq!(helpers(2, 10), 1);
        assert_eq!(helpers(16, 10), 10);
        assert_eq!(helpers(16, 3), 3);
    }
}
