//! The failure record of the CUDA executor's launches (`OgCtx` in the prelude), read where the
//! host reads what the kernels made rather than after each launch (docs/cuda.md, "Residency").
//!
//! Launches are numbered from 1 in launch order (the kernel parameter `og_launch`); a failed
//! check writes its launch's number into the record, and every kernel returns at once when the
//! record names an earlier launch, so that the first failure in program order is the one the
//! record keeps, as the interpreter reports it. A launch that can fail is either waited for and
//! its record read at once ([`Failures::check`]), or left *unsettled*
//! ([`Failures::defer`]) until the host next reads ([`Failures::settle`]).
//!
//! Invariants: the record is zeroed when the launcher starts and after every failure read; a
//! record read with no failure settles every launch before it.

use super::resident::{DeviceMemory, Pool};
use super::{Device, Res, machine_error};
use crate::error::R_CUDA;
use crate::ireval::eval::Evaluator;
use crate::kernel_io::{KernelFailure, failure_diagnostic};
use ogham_ir::abi::{Failure, MAX_DETAILS};
use ogham_ir::artifact::cuda::{CudaKernel, GeneratedSeg};
use ogham_ir::diag::Diagnostic;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The record's bytes: the failed site plus one, the details, the failing point, the record's
/// lock and the failed launch's number.
const RECORD_BYTES: usize = 8 + 8 * MAX_DETAILS + 8 + 8 + 8;
/// The word of the record that holds the failed launch's number.
const LAUNCH_WORD: usize = MAX_DETAILS + 3;

/// The record every launch shares, and the launches not yet settled.
pub(super) struct Failures {
    dev: Arc<dyn Device>,
    record: DeviceMemory,
    /// The launches so far; a launch's number is the count with it.
    launches: AtomicU64,
    unsettled: Mutex<Vec<Unsettled>>,
    /// Whether launches that can run out of arena are waited for, to launch them again with
    /// more: in a run not in parts of rows, and for good once a launch not waited for has run
    /// out. Such a launch cannot be launched again (the launches after it have run), but a part
    /// of rows can be run again ([`Failures::rerun`]).
    wait_for_arenas: AtomicBool,
    /// A launch not waited for ran out of arena since [`Failures::rerun`] was last asked.
    rerun: AtomicBool,
}

/// A launch that can fail, not waited for.
struct Unsettled {
    launch: u64,
    kernel: String,
    /// Its arena's bytes per thread, if it could have been launched again with more.
    relaunchable_with: Option<i64>,
}

/// What a failure's error needs of the launcher: its kernels, and the arena sizes their next
/// launches start from (a kernel that ran out unsettled starts its next with 8 times more).
pub(super) struct Kernels<'a> {
    pub segs: &'a [GeneratedSeg],
    pub arena_strides: &'a Mutex<HashMap<String, i64>>,
}

impl Failures {
    /// A zeroed record from `pool`; `in_parts`: the entry point runs in parts of rows.
    pub fn new(pool: &Arc<Pool>, in_parts: bool) -> Res<Failures> {
        let record = pool.alloc(RECORD_BYTES)?;
        pool.device().zero(record.ptr, RECORD_BYTES)?;
        Ok(Failures {
            dev: Arc::clone(pool.device()),
            record,
            launches: AtomicU64::new(0),
            unsettled: Mutex::new(Vec::new()),
            wait_for_arenas: AtomicBool::new(!in_parts),
            rerun: AtomicBool::new(false),
        })
    }

    /// The record's device address (every kernel's first parameter).
    pub fn record(&self) -> u64 {
        self.record.ptr
    }

    /// The next launch's number.
    pub fn number(&self) -> u64 {
        self.launches.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Whether a launch that could be launched again with a larger arena (`relaunch`: its
    /// arena's bytes per thread) must be waited for.
    pub fn must_wait(&self, relaunch: Option<i64>) -> bool {
        relaunch.is_some() && self.wait_for_arenas.load(Ordering::Relaxed)
    }

    /// Launch `launch` of `kernel` can fail and was not waited for.
    pub fn defer(&self, launch: u64, kernel: &str, relaunchable_with: Option<i64>) {
        self.unsettled().push(Unsettled {
            launch,
            kernel: kernel.to_string(),
            relaunchable_with,
        });
    }

    /// Waits for launch `launch` (and those before it) and reads the record: its own failure,
    /// or the error of an earlier unsettled launch's.
    pub fn check(
        &self,
        ev: &mut Evaluator,
        launch: u64,
        kernels: &Kernels,
    ) -> Res<Option<KernelFailure>> {
        match self.read()? {
            None => {
                self.unsettled().clear();
                Ok(None)
            }
            Some((failed, f)) if failed == launch => {
                self.unsettled().clear();
                Ok(Some(f))
            }
            Some((failed, f)) => Err(self.unsettled_failure(ev, failed, f, kernels)),
        }
    }

    /// Reads the record if launches are unsettled: a failure is the error of the first launch
    /// that failed (the launches after it did nothing).
    pub fn settle(&self, ev: &mut Evaluator, kernels: &Kernels) -> Res<()> {
        if self.unsettled().is_empty() {
            return Ok(());
        }
        match self.read()? {
            None => {
                self.unsettled().clear();
                Ok(())
            }
            Some((failed, f)) => Err(self.unsettled_failure(ev, failed, f, kernels)),
        }
    }

    /// Whether a launch not waited for has run out of arena since the last call: the part of
    /// rows it was in is to run again.
    pub fn rerun(&self) -> bool {
        self.rerun.swap(false, Ordering::Relaxed)
    }

    /// The error of unsettled launch `failed`, which failed with `f`. When it ran out of an
    /// arena it could have had more of, launches that can run out are waited for from now on,
    /// its kernel's next launch starts with 8 times more, and the part of rows it was in fails
    /// with this error and runs again.
    fn unsettled_failure(
        &self,
        ev: &mut Evaluator,
        failed: u64,
        f: KernelFailure,
        kernels: &Kernels,
    ) -> Box<Diagnostic> {
        let unsettled = std::mem::take(&mut *self.unsettled());
        let Some(launch) = unsettled.iter().find(|u| u.launch == failed) else {
            return machine_error(
                R_CUDA,
                format!("CUDA: the failure record names launch {failed}, not one in flight"),
            );
        };
        let Some(kernel) = kernels
            .segs
            .iter()
            .filter_map(|g| g.kernel.as_ref().ok())
            .find(|k| k.name == launch.kernel)
        else {
            return machine_error(R_CUDA, format!("CUDA: no kernel {}", launch.kernel));
        };
        if let (true, Some(stride)) = (ran_out(kernel, &f), launch.relaunchable_with) {
            self.wait_for_arenas.store(true, Ordering::Relaxed);
            self.rerun.store(true, Ordering::Relaxed);
            kernels
                .arena_strides
                .lock()
                .expect("no panics while locked")
                .insert(kernel.name.clone(), stride * 8);
        }
        kernel_error(ev, kernel, &f)
    }

    fn unsettled(&self) -> MutexGuard<'_, Vec<Unsettled>> {
        self.unsettled.lock().expect("no panics while locked")
    }

    /// Waits for the launches so far and reads the record: the failed launch's number and its
    /// failure, zeroing the record, or `None`.
    fn read(&self) -> Res<Option<(u64, KernelFailure)>> {
        let mut record = [0u8; RECORD_BYTES];
        self.dev.download(&mut record, self.record.ptr)?;
        let word =
            |k: usize| u64::from_le_bytes(record[8 * k..8 * k + 8].try_into().expect("8 bytes"));
        if word(0) == 0 {
            return Ok(None);
        }
        self.dev.zero(self.record.ptr, RECORD_BYTES)?;
        let mut details = [0i64; MAX_DETAILS];
        for (k, d) in details.iter_mut().enumerate() {
            *d = word(k + 1) as i64;
        }
        let failure = KernelFailure {
            site: word(0) as i64 - 1,
            details,
        };
        Ok(Some((word(LAUNCH_WORD), failure)))
    }
}

/// Whether failure `f` of `kernel` is its arena running out.
pub(super) fn ran_out(kernel: &CudaKernel, f: &KernelFailure) -> bool {
    usize::try_from(f.site)
        .ok()
        .and_then(|s| kernel.sites.get(s))
        .is_some_and(|s| s.failure == Failure::OutOfMemory)
}

/// The interpreter's error for failure `f` of `kernel`, with its source location.
pub(super) fn kernel_error(
    ev: &mut Evaluator,
    kernel: &CudaKernel,
    f: &KernelFailure,
) -> Box<Diagnostic> {
    failure_diagnostic(ev, &kernel.name, &kernel.sites, f.site, &f.details)
}
