//! The memory limit: the most bytes one array (or one chunk of a compiled kernel's arena) may
//! take. Every executor asks [`check`] before allocating an array whose size comes from the
//! program or its data, so that an absurd size is error `R0709` (out of memory) instead of an
//! abort of the process when the allocator fails, or an attempt that swaps the machine to a halt.
//!
//! The limit is `OGHAM_MEMORY_LIMIT` (bytes, with an optional `K`, `M`, `G` or `T` suffix for
//! powers of 1024) when set, else the machine's physical memory. [`from_env`] validates the
//! variable (the CLI calls it first, so that a malformed value is an error); a malformed value
//! seen later counts as unset.
//!
//! Arrays of 64 MiB or more within the limit are also asked of the allocator ([`check`]): an
//! allocation the process cannot get is R0709 as well, not an abort.
//!
//! Invariant: the limit is read once per process ([`limit`] caches it; [`set_limit`] may fix
//! it first); it bounds single
//! allocations, not their sum.

use std::sync::OnceLock;

/// The environment variable holding the limit.
pub const VARIABLE: &str = "OGHAM_MEMORY_LIMIT";

/// Parses a limit: a number of bytes with an optional `K`/`M`/`G`/`T` suffix (powers of 1024).
pub fn parse(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => {
                    return Err(format!(
                        "{VARIABLE}={text}: unknown unit `{c}` (use K, M, G or T)"
                    ));
                }
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1usize << shift))
        .ok_or_else(|| {
            format!("{VARIABLE}={text}: expected a number of bytes such as 4000000 or 512M")
        })
}

/// The limit `OGHAM_MEMORY_LIMIT` sets, if any; an error for a malformed value.
pub fn from_env() -> Result<Option<usize>, String> {
    match std::env::var(VARIABLE) {
        Ok(v) => parse(&v).map(Some),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{VARIABLE} is not valid text")),
    }
}

/// The machine's physical memory in bytes (`usize::MAX` when it cannot be determined).
fn physical_memory() -> usize {
    // SAFETY: `sysconf` has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    match (usize::try_from(pages), usize::try_from(page)) {
        (Ok(p), Ok(s)) if p > 0 && s > 0 => p.saturating_mul(s),
        _ => usize::MAX,
    }
}

static LIMIT: OnceLock<usize> = OnceLock::new();

/// Sets the limit of this process (for programs embedding the runtime, and test harnesses)
/// instead of `OGHAM_MEMORY_LIMIT`; `false` when the limit was already fixed otherwise (by an
/// earlier call or a first allocation check), which then stays.
pub fn set_limit(bytes: usize) -> bool {
    LIMIT.set(bytes).is_ok() || limit() == bytes
}

/// The limit in bytes.
pub fn limit() -> usize {
    *LIMIT.get_or_init(|| from_env().ok().flatten().unwrap_or_else(physical_memory))
}

/// From this size on, [`check`] also asks the allocator for the bytes.
const PROBE_BYTES: usize = 64 << 20;

/// `Ok` when an array of `elems` elements of `elem_size` bytes may be allocated; otherwise the
/// message of error `R0709`, naming `what` is allocated. An array within the limit of
/// [`PROBE_BYTES`] or more is also asked of the allocator (and given back at once: large
/// blocks are mapped and unmapped, their pages never touched), so that memory the process
/// cannot have (an address-space limit, `ulimit -v`; a kernel that refuses to overcommit) is
/// this error too instead of an abort of the process when the array is made.
pub fn check(elems: usize, elem_size: usize, what: &str) -> Result<(), String> {
    let limit = limit();
    match ogham_ir::sizes::bytes(elems, elem_size) {
        Some(b) if b >= PROBE_BYTES && b <= limit && !allocatable(b) => Err(format!(
            "out of memory: {what} of {elems} elements needs {b} bytes, which this process \
             cannot allocate"
        )),
        Some(b) if b <= limit => Ok(()),
        Some(b) => Err(format!(
            "out of memory: {what} of {elems} elements needs {b} bytes, more than the limit of \
             {limit} bytes (set {VARIABLE} to change it)"
        )),
        None => Err(format!(
            "out of memory: {what} of {elems} elements of {elem_size} bytes is larger than any \
             memory"
        )),
    }
}

/// Whether the allocator gives `bytes` bytes now.
fn allocatable(bytes: usize) -> bool {
    let mut probe = Vec::<u8>::new();
    let ok = probe.try_reserve_exact(bytes).is_ok();
    // The allocation must happen (an unused one may be optimised away, as if it succeeded).
    std::hint::black_box(&mut probe);
    ok
}

/// [`check`] as the executors report it: error `R0709` at `loc`.
pub fn reserve(
    elems: usize,
    elem_size: usize,
    what: &str,
    loc: ogham_ir::source::Span,
) -> Result<(), Box<ogham_ir::diag::Diagnostic>> {
    check(elems, elem_size, what)
        .map_err(|m| crate::error::error(crate::error::R_OUT_OF_MEMORY, loc, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse("4096"), Ok(4096));
        assert_eq!(parse(" 2K"), Ok(2048));
        assert_eq!(parse("3m"), Ok(3 << 20));
        assert_eq!(parse("1G"), Ok(1 << 30));
        assert!(parse("1X").is_err());
        assert!(parse("lots").is_err());
        assert!(parse("").is_err());
        assert!(parse("99999999999999999999T").is_err());
    }

    #[test]
    fn checks_against_the_limit() {
        assert!(check(10, 4, "an array").is_ok());
        let e = check(usize::MAX / 2, 8, "an array").unwrap_err();
        assert!(e.starts_with("out of memory"), "{e}");
    }

    #[test]
    fn asks_the_allocator_for_large_arrays() {
        assert!(allocatable(PROBE_BYTES));
        // 2^62 bytes: more than any address space (47 or 56 bits of user addresses).
        assert!(!allocatable(1 << 62));
    }
}
