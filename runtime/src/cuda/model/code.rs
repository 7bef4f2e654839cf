//! Where in the generated code the model's accesses are: the instrumented library is built with
//! line tables (`-g1`), so a site's code offset in it (its return address, less the library's
//! load address) names a line of the translation unit, which `addr2line` (binutils, there
//! wherever `g++` is) reads. `OGHAM_PROFILE=sites` prints each launch's costliest sites with
//! their lines (`profile_lines` in `mod.rs`), so a kernel's time can be traced to the loads that
//! cause it without a GPU. An access inside a helper of the prelude that was inlined (`og_copy`)
//! is traced to the line of each call it was inlined into too.
//!
//! Invariants relied on: a site is recorded as the low 32 bits of an absolute return address
//! (`model.hpp`) and the library is smaller than 4 GiB, so `site - base` (wrapping, in 32 bits)
//! is its offset; the return address follows the hook's call, so the call is at `offset - 1`.

use std::path::PathBuf;

/// The instrumented translation unit and the file of the library it was compiled to.
#[derive(Debug, Clone)]
pub struct Code {
    pub library: PathBuf,
    /// The low 32 bits of the library's load address.
    pub base: u32,
    pub unit: String,
}

impl Code {
    /// The code of the library that holds the address `symbol`, compiled from `unit`; `None`
    /// when the system cannot say which file the address is in.
    pub fn of(symbol: usize, unit: String) -> Option<Code> {
        let mut info = std::mem::MaybeUninit::<libc::Dl_info>::uninit();
        // SAFETY: `dladdr` only reads the address and fills `info`; a non-zero result means
        // `info` is initialised, with `dli_fname` a NUL-terminated string owned by the loader.
        let info = unsafe {
            if libc::dladdr(symbol as *const std::ffi::c_void, info.as_mut_ptr()) == 0 {
                return None;
            }
            info.assume_init()
        };
        if info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: checked non-null above; the loader keeps the string while the library is open.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        Some(Code {
            library: PathBuf::from(name.to_string_lossy().into_owned()),
            base: info.dli_fbase as usize as u32,
            unit,
        })
    }

    /// The offset in the library of the access recorded as `site`.
    pub fn offset(&self, site: u32) -> u64 {
        u64::from(site.wrapping_sub(self.base))
    }

    /// The lines of the translation unit (from 1) of each of `offsets` (sites' offsets): the
    /// access's own line, then, where it was inlined from a helper (the prelude's `og_copy`),
    /// the lines of the calls it was inlined into, innermost first; empty where the line
    /// tables do not say. An error when `addr2line` does not run.
    pub fn lines(&self, offsets: &[u64]) -> Result<Vec<Vec<usize>>, String> {
        if offsets.is_empty() {
            return Ok(Vec::new());
        }
        let out = std::process::Command::new("addr2line")
            .args(["-a", "-i", "-e"])
            .arg(&self.library)
            .args(
                offsets
                    .iter()
                    .map(|o| format!("{:#x}", o.saturating_sub(1))),
            )
            .output()
            .map_err(|e| format!("running addr2line: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "addr2line failed on {}: {}",
                self.library.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        // `-a` prints each address on a line of its own, then its frames' `FILE:LINE`.
        let mut places: Vec<Vec<usize>> = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if line.starts_with("0x") {
                places.push(Vec::new());
            } else if let (Some(frames), Some(n)) = (places.last_mut(), line_number(line)) {
                frames.push(n);
            }
        }
        if places.len() != offsets.len() {
            return Err(format!(
                "addr2line gave {} places for {} addresses",
                places.len(),
                offsets.len()
            ));
        }
        Ok(places)
    }

    /// The text of line `line` (from 1) of the translation unit, without its indentation.
    pub fn text(&self, line: usize) -> &str {
        self.unit
            .lines()
            .nth(line.wrapping_sub(1))
            .map_or("", str::trim)
    }
}

/// The line number of one line of `addr2line`'s output (`FILE:LINE`, maybe followed by
/// ` (discriminator N)`; `??:0` or `FILE:?` when unknown).
fn line_number(out: &str) -> Option<usize> {
    let location = out.split(" (").next()?;
    let (_, line) = location.rsplit_once(':')?;
    line.parse().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::line_number;

    #[test]
    fn addr2line_output_is_read() {
        assert_eq!(line_number("/tmp/x/abc.cpp:1234"), Some(1234));
        assert_eq!(line_number("/tmp/x/abc.cpp:77 (discriminator 3)"), Some(77));
        assert_eq!(line_number("??:0"), None);
        assert_eq!(line_number("/tmp/x/abc.cpp:?"), None);
    }
}
