//! Checked size arithmetic: the one definition of a valid run-time size and of the products of
//! sizes, shared by the reference interpreter, the IR evaluator, the runtime of compiled code
//! and the checks that the backends generate (which compare against [`MAX_ELEMS`]).
//!
//! Invariants: a size that passes [`count`] is at most [`MAX_ELEMS`], so the sum or product of
//! two of them fits in 64 bits; every other product of sizes goes through [`product`] or
//! [`bytes`], which report overflow instead of wrapping. The error codes that go with a failure
//! are the interpreter's (`docs/errors.md`): `R0706` for a bad count, `R0704` for sizes that
//! do not match, `R0709` when the bytes exceed the memory limit.

/// The largest number of elements (or rows) `iota`, `replicate`, `hist` and `unflatten`
/// accept: a larger size is an error (`R0706`) on every backend, never an attempt to
/// allocate it.
pub const MAX_ELEMS: usize = 1 << 32;

/// Why a run-time size is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeError {
    Negative(i64),
    TooLarge(i64),
}

impl SizeError {
    /// The interpreter's message, `what` naming the construct (`iota`, `replicate`, ...).
    pub fn message(self, what: &str) -> String {
        match self {
            SizeError::Negative(n) => format!("{what}: negative size {n}"),
            SizeError::TooLarge(n) => format!("{what}: size {n} is too large"),
        }
    }
}

/// A run-time size `n` as a count of elements: `0 <= n <= MAX_ELEMS`.
pub fn count(n: i64) -> Result<usize, SizeError> {
    match usize::try_from(n) {
        Err(_) => Err(SizeError::Negative(n)),
        Ok(k) if k > MAX_ELEMS => Err(SizeError::TooLarge(n)),
        Ok(k) => Ok(k),
    }
}

/// The elements of `n` copies of a row of `row` elements (`replicate`), at most [`MAX_ELEMS`];
/// `None` beyond (error `R0706`, "the result is too large").
pub fn replicated(n: usize, row: usize) -> Option<usize> {
    n.checked_mul(row).filter(|&t| t <= MAX_ELEMS)
}

/// The number of elements of an array of extents `dims`; `None` on overflow.
pub fn product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// The bytes of `elems` elements of `elem_size` bytes each, at most `isize::MAX` (the most any
/// allocation may ask for); `None` beyond.
pub fn bytes(elems: usize, elem_size: usize) -> Option<usize> {
    elems
        .checked_mul(elem_size)
        .filter(|&b| b <= isize::MAX as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count(0), Ok(0));
        assert_eq!(count(MAX_ELEMS as i64), Ok(MAX_ELEMS));
        assert_eq!(count(-1), Err(SizeError::Negative(-1)));
        assert_eq!(
            count(MAX_ELEMS as i64 + 1),
            Err(SizeError::TooLarge(MAX_ELEMS as i64 + 1))
        );
        assert_eq!(
            count(-1).unwrap_err().message("iota"),
            "iota: negative size -1"
        );
    }

    #[test]
    fn products_and_bytes_do_not_wrap() {
        assert_eq!(product(&[1 << 32, 1 << 32]), None);
        assert_eq!(product(&[0, 1 << 32, 1 << 32]), Some(0));
        assert_eq!(product(&[]), Some(1));
        assert_eq!(product(&[3, 4]), Some(12));
        assert_eq!(bytes(1 << 62, 4), None);
        assert_eq!(bytes(10, 8), Some(80));
    }
}
