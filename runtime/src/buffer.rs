//! The element storage of an array ([`crate::value::ArrayData`]): a vector Ogham owns, or memory
//! borrowed from the caller (a NumPy array passed to the Python package) without a copy.
//!
//! Borrowed memory is read-only to Ogham: the first write through a [`Buffer`] (`DerefMut`,
//! [`Buffer::make_mut`]) copies it into an owned vector first (copy on write), so a caller's
//! array is never modified, even by an entry point that consumes its argument (`*[n]f32`).
//! Cloning a borrowed buffer shares the memory.
//!
//! Invariants of a borrowed buffer (the contract of [`Buffer::borrowed`]): the memory holds `len`
//! initialised, aligned elements; it stays valid while `owner` lives; nobody writes to it while
//! any clone of the buffer lives.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// Elements of type `T`, owned or borrowed (see the module header).
pub struct Buffer<T> {
    repr: Repr<T>,
}

enum Repr<T> {
    Owned(Vec<T>),
    Borrowed {
        ptr: *const T,
        len: usize,
        /// Keeps the memory alive (e.g. a reference to the NumPy array).
        _owner: Arc<dyn Send + Sync>,
    },
}

// SAFETY: a borrowed buffer is a shared, read-only view of memory kept alive by `owner` (which
// is `Send + Sync`) and written by nobody while the buffer lives; an owned one is a `Vec<T>`.
unsafe impl<T: Send + Sync> Send for Buffer<T> {}
// SAFETY: as above; `&Buffer` only gives `&[T]`.
unsafe impl<T: Send + Sync> Sync for Buffer<T> {}

impl<T> Buffer<T> {
    /// A buffer over `len` elements at `ptr` that `owner` keeps alive, without a copy.
    ///
    /// # Safety
    /// `ptr` points to `len` initialised elements of `T`, aligned for `T`; they stay valid and
    /// unmodified while `owner` (or any clone of the buffer) lives.
    pub unsafe fn borrowed(ptr: *const T, len: usize, owner: Arc<dyn Send + Sync>) -> Buffer<T> {
        if len == 0 {
            return Buffer::from(Vec::new());
        }
        Buffer {
            repr: Repr::Borrowed {
                ptr,
                len,
                _owner: owner,
            },
        }
    }

    /// Whether the elements are borrowed from the caller (not yet copied).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.repr, Repr::Borrowed { .. })
    }
}

impl<T: Clone> Buffer<T> {
    /// The elements as an owned vector to change (borrowed ones are copied first).
    pub fn make_mut(&mut self) -> &mut Vec<T> {
        if let Repr::Borrowed { .. } = self.repr {
            self.repr = Repr::Owned(self.deref().to_vec());
        }
        match &mut self.repr {
            Repr::Owned(v) => v,
            Repr::Borrowed { .. } => unreachable!("made owned above"),
        }
    }

    /// The elements as a vector (borrowed ones copied).
    pub fn into_vec(self) -> Vec<T> {
        match self.repr {
            Repr::Owned(v) => v,
            Repr::Borrowed { .. } => self.deref().to_vec(),
        }
    }
}

impl<T> Deref for Buffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            // SAFETY: the contract of `borrowed` (non-empty, aligned, initialised, alive).
            Repr::Borrowed { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

impl<T: Clone> DerefMut for Buffer<T> {
    /// Copies borrowed elements first (copy on write).
    fn deref_mut(&mut self) -> &mut [T] {
        self.make_mut()
    }
}

impl<T> From<Vec<T>> for Buffer<T> {
    fn from(v: Vec<T>) -> Buffer<T> {
        Buffer {
            repr: Repr::Owned(v),
        }
    }
}

impl<T> FromIterator<T> for Buffer<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Buffer<T> {
        Buffer::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Clone> Clone for Buffer<T> {
    /// Owned elements are copied; borrowed ones are shared.
    fn clone(&self) -> Buffer<T> {
        match &self.repr {
            Repr::Owned(v) => Buffer::from(v.clone()),
            Repr::Borrowed { ptr, len, _owner } => Buffer {
                repr: Repr::Borrowed {
                    ptr: *ptr,
                    len: *len,
                    _owner: Arc::clone(_owner),
                },
            },
        }
    }
}

impl<T: PartialEq> PartialEq for Buffer<T> {
    fn eq(&self, other: &Buffer<T>) -> bool {
        self.deref() == other.deref()
    }
}

impl<T: fmt::Debug> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.deref().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_buffer_is_copied_on_its_first_write_and_never_writes_the_callers_memory() {
        let caller = Arc::new(vec![1.0f32, 2.0, 3.0]);
        // SAFETY: `caller` holds three floats, kept alive by the owner and not written.
        let mut b = unsafe { Buffer::borrowed(caller.as_ptr(), 3, caller.clone()) };
        let shared = b.clone();
        assert!(b.is_borrowed() && shared.is_borrowed());
        assert_eq!(b.as_ptr(), caller.as_ptr(), "no copy on creation or read");
        b[1] = 20.0;
        assert!(!b.is_borrowed());
        assert_eq!(&b[..], &[1.0, 20.0, 3.0]);
        assert_eq!(&caller[..], &[1.0, 2.0, 3.0]);
        assert_eq!(&shared[..], &[1.0, 2.0, 3.0]);
        assert_eq!(shared.into_vec(), vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn an_empty_borrowed_buffer_is_owned() {
        let owner: Arc<dyn Send + Sync> = Arc::new(());
        // SAFETY: zero elements.
        let b = unsafe { Buffer::<f64>::borrowed(std::ptr::null(), 0, owner) };
        assert!(!b.is_borrowed() && b.is_empty());
    }
}
