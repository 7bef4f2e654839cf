//! Deep evaluation on a thread of its own: the reference interpreter and the IR evaluator
//! recurse along the nesting of the program (deeply nested, e.g. generated, programs make that
//! deep), so they run on a scoped thread with a large stack.
//!
//! Invariant: the closure runs to completion before [`on_large_stack`] returns (a scoped
//! thread), so it may borrow from the caller; a panic in it resumes in the caller.

/// Stack size of an evaluation thread.
const STACK_SIZE: usize = 256 << 20;

/// Runs `run` on a thread named `name` with a large stack and returns its result, or the
/// operating system's reason when the thread cannot start.
pub fn on_large_stack<T: Send>(name: &str, run: impl FnOnce() -> T + Send) -> Result<T, String> {
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new()
            .name(name.into())
            .stack_size(STACK_SIZE);
        match thread.spawn_scoped(s, run) {
            Ok(handle) => Ok(handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))),
            Err(e) => Err(e.to_string()),
        }
    })
}
