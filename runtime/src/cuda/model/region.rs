//! The model's device memory: one reserved range of address space (`MAP_NORESERVE`, so only
//! the pages a kernel touches take memory), handed out first-fit in 256-byte aligned pieces
//! (as `cuMemAlloc` aligns). The instrumentation tells device memory from everything else by
//! this range alone. Freed pieces give their pages back (`MADV_DONTNEED`, which also makes them
//! read as zeros again) and return to the free list.

use std::collections::BTreeMap;
use std::sync::Mutex;

const ALIGN: u64 = 256;

pub struct Region {
    base: u64,
    len: u64,
    /// Free pieces: start → length, disjoint and not adjacent.
    free: Mutex<BTreeMap<u64, u64>>,
    /// Pieces in use: start → length.
    used: Mutex<BTreeMap<u64, u64>>,
}

impl Region {
    /// Reserves `len` bytes of address space, or says why it cannot.
    pub fn reserve(len: u64) -> Result<Region, String> {
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "cannot reserve {} GiB of address space for the model's device memory: {}",
                len >> 30,
                std::io::Error::last_os_error()
            ));
        }
        Ok(Region {
            base: base as u64,
            len,
            free: Mutex::new(BTreeMap::from([(base as u64, len)])),
            used: Mutex::new(BTreeMap::new()),
        })
    }

    /// The range's first and one-past-last addresses.
    pub fn bounds(&self) -> (u64, u64) {
        (self.base, self.base + self.len)
    }

    /// A zeroed piece of at least `bytes` bytes, or `None` when no free piece is large enough.
    pub fn alloc(&self, bytes: usize) -> Option<u64> {
        let want = (bytes.max(1) as u64).div_ceil(ALIGN) * ALIGN;
        let mut free = self.free.lock().expect("no panics while locked");
        let (&start, &len) = free.iter().find(|(_, len)| **len >= want)?;
        free.remove(&start);
        if len > want {
            free.insert(start + want, len - want);
        }
        self.used
            .lock()
            .expect("no panics while locked")
            .insert(start, want);
        Some(start)
    }

    /// Frees the piece at `ptr` (ignored when it is not one).
    pub fn free(&self, ptr: u64) {
        let Some(len) = self
            .used
            .lock()
            .expect("no panics while locked")
            .remove(&ptr)
        else {
            return;
        };
        // SAFETY: the piece lies inside the mapping and nothing uses it any more.
        unsafe { libc::madvise(ptr as *mut libc::c_void, len as usize, libc::MADV_DONTNEED) };
        let mut free = self.free.lock().expect("no panics while locked");
        let (mut start, mut len) = (ptr, len);
        if let Some((&before, &before_len)) = free.range(..start).next_back()
            && before + before_len == start
        {
            free.remove(&before);
            start = before;
            len += before_len;
        }
        if let Some(after_len) = free.remove(&(start + len)) {
            len += after_len;
        }
        free.insert(start, len);
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping made by `reserve`; the model's memory is not used after this.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_aligned_zeroed_reused_and_merged() {
        let r = Region::reserve(1 << 30).unwrap();
        let a = r.alloc(10).unwrap();
        let b = r.alloc(1000).unwrap();
        assert_eq!((a % 256, b - a), (0, 256));
        // SAFETY: `b` is a piece of 1024 bytes.
        unsafe { std::ptr::write_bytes(b as *mut u8, 7, 1000) };
        r.free(b);
        r.free(a);
        let c = r.alloc(1 << 29).unwrap();
        assert_eq!(c, a, "the freed pieces merged with the rest");
        // SAFETY: `c` covers the old piece `b`.
        assert_eq!(unsafe { *((b + 5) as *const u8) }, 0);
        assert!(r.alloc(1 << 30).is_none());
    }
}
