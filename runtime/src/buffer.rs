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
//!
//! **Mirrors** (device residency, `docs/cuda.md`): an executor may attach a [`Mirror`], a copy
//! of the same elements in another memory (a GPU's), so that the next kernel reading the buffer
//! finds them there instead of copying them again. A buffer a kernel made can be *remote*
//! ([`Buffer::remote`]): its elements are only in the mirror, and the first read on the host
//! copies them here (once). Invariants: a mirror holds exactly the buffer's elements, so it is
//! dropped by the first write ([`Buffer::make_mut`]); a remote buffer always has its mirror; the
//! mirror's memory is never written while a buffer holds it. [`Buffer::settle`] brings the
//! elements home and drops the mirror (the executors settle every value they return, so no
//! value outlives the device it mirrors).

use std::any::Any;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

/// Elements of type `T`, owned or borrowed (see the module header).
pub struct Buffer<T> {
    repr: Repr<T>,
    /// The same elements elsewhere (see the module header).
    mirror: OnceLock<Arc<dyn Mirror>>,
}

/// A copy of a buffer's elements in another memory, kept by the executor that made it.
pub trait Mirror: Any + Send + Sync {
    /// Copies the mirrored elements' bytes into `dst` (exactly `dst.len()` of them).
    fn fetch(&self, dst: &mut [u8]) -> Result<(), String>;
}

/// Element types that a mirror's bytes can be read back into: scalars whose every bit pattern
/// is a value, and `bool`s, which compiled code writes as bytes holding 0 or 1.
pub trait Plain: Copy + Default + Send + Sync + 'static {}
impl Plain for bool {}
impl Plain for i8 {}
impl Plain for i16 {}
impl Plain for i32 {}
impl Plain for i64 {}
impl Plain for u8 {}
impl Plain for f32 {}
impl Plain for f64 {}

/// `len` elements read back from `mirror`.
fn fetch_plain<T: Plain>(mirror: &dyn Mirror, len: usize) -> Result<Vec<T>, String> {
    let mut v = vec![T::default(); len];
    // SAFETY: the byte view covers exactly the vector's initialised elements; `T` is `Plain`,
    // so the bytes the mirror writes are a valid `T` each (0/1 for `bool`, see `Plain`).
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(&v[..]))
    };
    mirror.fetch(bytes)?;
    Ok(v)
}

enum Repr<T> {
    Owned(Vec<T>),
    Borrowed {
        ptr: *const T,
        len: usize,
        /// Keeps the memory alive (e.g. a reference to the NumPy array).
        _owner: Arc<dyn Send + Sync>,
    },
    /// Elements only the mirror holds until the first read copies them into `host`.
    Remote {
        len: usize,
        host: OnceLock<Vec<T>>,
        fetch: fn(&dyn Mirror, usize) -> Result<Vec<T>, String>,
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
        Buffer::with_repr(Repr::Borrowed {
            ptr,
            len,
            _owner: owner,
        })
    }

    fn with_repr(repr: Repr<T>) -> Buffer<T> {
        Buffer {
            repr,
            mirror: OnceLock::new(),
        }
    }

    /// Whether the elements are borrowed from the caller (not yet copied).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.repr, Repr::Borrowed { .. })
    }

    /// Whether the elements are only in the mirror so far (not yet read on the host).
    pub fn is_remote(&self) -> bool {
        matches!(&self.repr, Repr::Remote { host, .. } if host.get().is_none())
    }

    /// The number of elements (without reading a remote buffer's).
    pub fn count(&self) -> usize {
        match &self.repr {
            Repr::Owned(v) => v.len(),
            Repr::Borrowed { len, .. } | Repr::Remote { len, .. } => *len,
        }
    }

    /// The mirror attached to the elements, if any.
    pub fn mirror(&self) -> Option<&Arc<dyn Mirror>> {
        self.mirror.get()
    }

    /// Attaches `mirror`, a copy of exactly these elements; false (and nothing attached) when
    /// the buffer has one already.
    pub fn attach(&self, mirror: Arc<dyn Mirror>) -> bool {
        self.mirror.set(mirror).is_ok()
    }

    /// The elements of a remote buffer, read from its mirror on the first call.
    fn remote_host<'a>(
        &'a self,
        len: usize,
        host: &'a OnceLock<Vec<T>>,
        fetch: fn(&dyn Mirror, usize) -> Result<Vec<T>, String>,
    ) -> &'a Vec<T> {
        host.get_or_init(|| {
            let mirror = self.mirror.get().expect("a remote buffer has its mirror");
            // A device that fails to copy back memory it holds has failed as a machine; the
            // executors settle their outputs through `settle`, which reports it as an error.
            fetch(&**mirror, len)
                .unwrap_or_else(|e| panic!("cannot copy an array back to the host: {e}"))
        })
    }
}

impl<T: Plain> Buffer<T> {
    /// `len` elements that only `mirror` holds: the first read copies them to the host.
    pub fn remote(len: usize, mirror: Arc<dyn Mirror>) -> Buffer<T> {
        let buffer = Buffer::with_repr(Repr::Remote {
            len,
            host: OnceLock::new(),
            fetch: fetch_plain::<T>,
        });
        buffer.attach(mirror);
        buffer
    }
}

impl<T: Clone> Buffer<T> {
    /// The elements as an owned vector to change (borrowed ones are copied first).
    /// Drops the mirror: the elements are about to change.
    pub fn make_mut(&mut self) -> &mut Vec<T> {
        self.own();
        self.mirror.take();
        match &mut self.repr {
            Repr::Owned(v) => v,
            Repr::Borrowed { .. } | Repr::Remote { .. } => unreachable!("made owned above"),
        }
    }

    /// Makes the elements an owned vector (copying borrowed ones, reading remote ones).
    fn own(&mut self) {
        if let Repr::Remote { len, host, fetch } = &self.repr {
            self.remote_host(*len, host, *fetch);
        }
        let owned = match &mut self.repr {
            Repr::Owned(_) => return,
            Repr::Remote { host, .. } => host.take().expect("read above"),
            Repr::Borrowed { .. } => self.deref().to_vec(),
        };
        self.repr = Repr::Owned(owned);
    }

    /// Brings a remote buffer's elements to the host and drops the mirror: what an executor
    /// does to the values it returns. The error is the device's, when the copy fails.
    pub fn settle(&mut self) -> Result<(), String> {
        if let Repr::Remote { len, host, fetch } = &mut self.repr
            && host.get().is_none()
        {
            let mirror = self.mirror.get().expect("a remote buffer has its mirror");
            self.repr = Repr::Owned(fetch(&**mirror, *len)?);
        }
        self.own();
        self.mirror.take();
        Ok(())
    }

    /// The elements as a vector (borrowed ones copied).
    pub fn into_vec(mut self) -> Vec<T> {
        self.own();
        match self.repr {
            Repr::Owned(v) => v,
            Repr::Borrowed { .. } | Repr::Remote { .. } => unreachable!("made owned above"),
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
            Repr::Remote { len, host, fetch } => self.remote_host(*len, host, *fetch),
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
        Buffer::with_repr(Repr::Owned(v))
    }
}

impl<T> FromIterator<T> for Buffer<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Buffer<T> {
        Buffer::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Clone> Clone for Buffer<T> {
    /// Owned elements are copied; borrowed ones and the mirror are shared; a remote buffer not
    /// yet read stays remote.
    fn clone(&self) -> Buffer<T> {
        let repr = match &self.repr {
            Repr::Owned(v) => Repr::Owned(v.clone()),
            Repr::Borrowed { ptr, len, _owner } => Repr::Borrowed {
                ptr: *ptr,
                len: *len,
                _owner: Arc::clone(_owner),
            },
            Repr::Remote { host, .. } if host.get().is_some() => Repr::Owned(self.to_vec()),
            Repr::Remote { len, fetch, .. } => Repr::Remote {
                len: *len,
                host: OnceLock::new(),
                fetch: *fetch,
            },
        };
        Buffer {
            repr,
            mirror: self.mirror.clone(),
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

    /// A mirror in host memory that counts its fetches (or fails them).
    struct Held {
        bytes: Vec<u8>,
        fetches: std::sync::atomic::AtomicUsize,
        fails: bool,
    }

    impl Mirror for Held {
        fn fetch(&self, dst: &mut [u8]) -> Result<(), String> {
            self.fetches
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if self.fails {
                return Err("the device is gone".into());
            }
            dst.copy_from_slice(&self.bytes);
            Ok(())
        }
    }

    fn held(values: &[i32], fails: bool) -> Arc<Held> {
        Arc::new(Held {
            bytes: values.iter().flat_map(|v| v.to_ne_bytes()).collect(),
            fetches: Default::default(),
            fails,
        })
    }

    fn fetches(m: &Held) -> usize {
        m.fetches.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn a_remote_buffer_is_fetched_once_on_its_first_read_and_keeps_its_mirror() {
        let mirror = held(&[4, 5, 6], false);
        let b = Buffer::<i32>::remote(3, mirror.clone());
        assert!(b.is_remote() && b.count() == 3 && fetches(&mirror) == 0);
        let copy = b.clone();
        assert_eq!(&b[..], &[4, 5, 6]);
        assert_eq!(b[2], 6);
        assert_eq!(fetches(&mirror), 1, "read once");
        assert!(
            !b.is_remote() && b.mirror().is_some(),
            "the device copy is still good"
        );
        assert!(
            copy.is_remote() && copy.mirror().is_some(),
            "a clone shares the mirror"
        );
        assert_eq!(copy.into_vec(), vec![4, 5, 6]);
        assert_eq!(fetches(&mirror), 2);
    }

    #[test]
    fn a_write_drops_the_mirror_and_settling_brings_the_elements_home() {
        let mirror = held(&[1, 2], false);
        let mut written = Buffer::<i32>::remote(2, mirror.clone());
        written[0] = 10;
        assert!(
            written.mirror().is_none(),
            "a written buffer no longer matches its mirror"
        );
        assert_eq!(&written[..], &[10, 2]);

        let mut settled = Buffer::<i32>::remote(2, mirror.clone());
        settled.settle().expect("the mirror answers");
        assert!(settled.mirror().is_none() && !settled.is_remote());
        assert_eq!(&settled[..], &[1, 2]);

        let mut failing = Buffer::<i32>::remote(2, held(&[1, 2], true));
        assert_eq!(failing.settle(), Err("the device is gone".to_string()));
    }

    #[test]
    fn a_buffer_takes_one_mirror() {
        let b = Buffer::from(vec![1i32, 2]);
        assert!(b.attach(held(&[1, 2], false)));
        assert!(
            !b.attach(held(&[1, 2], false)),
            "a second mirror is refused"
        );
    }

    #[test]
    fn an_empty_borrowed_buffer_is_owned() {
        let owner: Arc<dyn Send + Sync> = Arc::new(());
        // SAFETY: zero elements.
        let b = unsafe { Buffer::<f64>::borrowed(std::ptr::null(), 0, owner) };
        assert!(!b.is_borrowed() && b.is_empty());
    }
}
