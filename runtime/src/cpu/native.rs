//! Native code that outlives the process that compiled it (the on-disk cache of compiled
//! programs, `ogham::cache`): every kernel of an entry point compiled into a relocatable ELF
//! object by the code generator ([`crate::cpu::CpuCodegen::native`]), and a small loader that
//! maps such an object into this process without a linker.
//!
//! [`Native`] is the stored form: the object (position-dependent x86-64 code, as the JIT makes:
//! calls to the runtime's helpers and to libm go through 64-bit absolute addresses) and the
//! kernel table (JSON: what the executor needs to launch each of the entry point's kernel
//! statements, `None` where no kernel was generated; as in ahead-of-time images), made from the
//! code generator's [`NativeCode`] by [`Native::encode`]. [`load`] maps the object's allocated
//! sections into fresh pages, applies its relocations (`R_X86_64_64`, `R_X86_64_PC32`, `R_X86_64_PLT32`;
//! any other is refused), resolves the helpers `ogham_*` to their addresses in this runtime and
//! the few C library functions Cranelift calls ([`LIBCALLS`]: `memcpy`, `ceilf`, ...) with
//! `dlsym`, makes the pages executable and read-only, and finds each kernel's functions by their
//! symbol names (`<kernel>`, `<kernel>_combine`). The pages are unmapped when the [`Mapped`]
//! owning them is dropped.
//!
//! The loader runs the object's code, so callers must check that the object was made by this
//! build for this CPU by this user (the cache keys entries by build id and CPU features and
//! verifies each entry's MAC under the user's key before loading it, `ogham_runtime::cache_file`).
//! The loader itself never writes outside the pages it mapped, whatever the object holds: every
//! section, relocation and symbol is bounds-checked, and an object that imports any symbol but
//! the runtime's helpers and [`LIBCALLS`] (`system`, say) is refused. Only with the `jit`
//! feature (which brings the `object` crate that reads the object).

use super::code::Entry;
use super::{Launchable, helpers};
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionIndex,
};
use ogham_ir::artifact::cpu::{KernelInfo, NativeCode};
use std::collections::HashMap;

/// The C library functions that generated code may call (Cranelift's library calls for
/// rounding, fused multiply-add and memory operations); every other import is refused.
pub const LIBCALLS: &[&str] = &[
    "ceilf",
    "ceil",
    "floorf",
    "floor",
    "truncf",
    "trunc",
    "nearbyintf",
    "nearbyint",
    "fmaf",
    "fma",
    "memcpy",
    "memset",
    "memmove",
    "memcmp",
];

/// Whether this runtime can load native code ([`load`]).
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// The native code of an entry point's kernels.
pub struct Native {
    /// A relocatable ELF object.
    pub object: Vec<u8>,
    /// The kernel table (JSON), in the order of the entry point's kernel statements.
    pub table: String,
}

impl Native {
    /// The stored form of the code generator's native code: its kernel table as JSON.
    pub fn encode(code: NativeCode) -> Result<Native, String> {
        let table = serde_json::to_string(&code.kernels)
            .map_err(|e| format!("cannot encode the kernel table: {e}"))?;
        Ok(Native {
            object: code.object,
            table,
        })
    }
}

/// Pages holding loaded code; unmapped when dropped.
pub struct Mapped {
    base: *mut u8,
    len: usize,
}

// SAFETY: the pages are read-only after loading and only unmapped on drop.
unsafe impl Send for Mapped {}
// SAFETY: as above.
unsafe impl Sync for Mapped {}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: `base..base+len` was mapped by `load` and nothing refers to it any more (the
        // launchables that point into it are owned next to it and dropped first).
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

impl Mapped {
    /// Fresh zeroed read-write pages for `len` bytes.
    fn new(len: usize) -> Result<Mapped, String> {
        let len = len.max(1).next_multiple_of(page_size());
        // SAFETY: an anonymous private mapping; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "cannot map {len} bytes for code: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Mapped {
            base: base.cast(),
            len,
        })
    }

    /// Makes the pages executable and read-only.
    fn seal(&self) -> Result<(), String> {
        // SAFETY: the pages were mapped by `new`.
        let status = unsafe {
            libc::mprotect(
                self.base.cast(),
                self.len,
                libc::PROT_READ | libc::PROT_EXEC,
            )
        };
        if status != 0 {
            return Err(format!(
                "cannot make code executable: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(4096)
}

const SHF_WRITE: u64 = 1;
const SHF_ALLOC: u64 = 2;

/// Where the allocated sections of an object go in its mapping: every allocated section at its
/// alignment, one after the other. `sizes` holds each placed section's size, which bounds every
/// write and symbol inside it.
struct Layout {
    placed: HashMap<SectionIndex, usize>,
    sizes: HashMap<SectionIndex, usize>,
    len: usize,
}

impl Layout {
    /// The layout of `file`'s allocated sections; a writable one is refused.
    fn of(file: &object::File<'_>) -> Result<Layout, String> {
        let mut placed = HashMap::new();
        let mut sizes = HashMap::new();
        let mut len = 0usize;
        for section in file.sections() {
            let object::SectionFlags::Elf { sh_flags } = section.flags() else {
                return Err("not an ELF object".to_string());
            };
            if sh_flags & SHF_ALLOC == 0 {
                continue;
            }
            if sh_flags & SHF_WRITE != 0 {
                return Err(format!(
                    "writable section {} in generated code",
                    section.name().unwrap_or("?")
                ));
            }
            let too_large = || "a section too large for this process".to_string();
            let align = usize::try_from(section.align().max(1)).map_err(|_| too_large())?;
            let start = len.checked_next_multiple_of(align).ok_or_else(too_large)?;
            let size = usize::try_from(section.size()).map_err(|_| too_large())?;
            placed.insert(section.index(), start);
            sizes.insert(section.index(), size);
            len = start.checked_add(size).ok_or_else(too_large)?;
        }
        Ok(Layout { placed, sizes, len })
    }

    /// The place of `width` bytes at `offset` in section `index` (a placed one), if they lie
    /// inside it.
    fn inside(&self, index: SectionIndex, offset: u64, width: usize) -> Result<usize, String> {
        let (start, size) = (self.placed[&index], self.sizes[&index]);
        usize::try_from(offset)
            .ok()
            .filter(|&o| o.checked_add(width).is_some_and(|end| end <= size))
            .map(|o| start + o)
            .ok_or_else(|| "a relocation or symbol outside its section".to_string())
    }
}

/// Loads `code` (made by [`Native::encode`]) into this process: the launchable code of the entry
/// point's kernel statements and the pages holding it.
pub(crate) fn load(code: &Native) -> Result<(Vec<Option<Launchable>>, Mapped), String> {
    if !SUPPORTED {
        return Err("loading native code is only implemented for x86-64".to_string());
    }
    let infos: Vec<Option<KernelInfo>> =
        serde_json::from_str(&code.table).map_err(|e| format!("kernel table: {e}"))?;
    let file = object::File::parse(&*code.object).map_err(|e| format!("object file: {e}"))?;
    if file.architecture() != object::Architecture::X86_64 {
        return Err(format!("object file for {:?}", file.architecture()));
    }
    let layout = Layout::of(&file)?;
    let (placed, sizes) = (&layout.placed, &layout.sizes);
    let inside = |index, offset, width| layout.inside(index, offset, width);
    let mapped = Mapped::new(layout.len)?;
    let at = |offset: usize| mapped.base.wrapping_add(offset);
    for section in file.sections() {
        let Some(&start) = placed.get(&section.index()) else {
            continue;
        };
        let data = section.data().map_err(|e| format!("object file: {e}"))?;
        if data.len() > sizes[&section.index()] {
            return Err("a section's data is larger than the section".to_string());
        }
        // SAFETY: the section's range was reserved in the mapping and holds `data` (checked
        // above); an uninitialized section has no data and stays zero.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), at(start), data.len()) };
    }
    let helpers: HashMap<&str, *const u8> = helpers::addresses().into_iter().collect();
    let address = |target: RelocationTarget| -> Result<u64, String> {
        let (index, offset) = match target {
            RelocationTarget::Section(index) => (index, 0),
            RelocationTarget::Symbol(index) => {
                let symbol = file
                    .symbol_by_index(index)
                    .map_err(|e| format!("object file: {e}"))?;
                match symbol.section_index() {
                    Some(section) => (section, symbol.address()),
                    None => {
                        let name = symbol.name().map_err(|e| format!("object file: {e}"))?;
                        return external(&helpers, name).map(|a| a as u64);
                    }
                }
            }
            RelocationTarget::Absolute => return Ok(0),
            _ => return Err("unknown relocation target".to_string()),
        };
        if !placed.contains_key(&index) {
            return Err("relocation against a section that is not loaded".to_string());
        }
        Ok(at(inside(index, offset, 0)?) as u64)
    };
    for section in file.sections() {
        if !placed.contains_key(&section.index()) {
            continue;
        }
        for (offset, reloc) in section.relocations() {
            let RelocationFlags::Elf { r_type } = reloc.flags() else {
                return Err("not an ELF relocation".to_string());
            };
            let width = match r_type {
                object::elf::R_X86_64_64 => 8,
                object::elf::R_X86_64_PC32 | object::elf::R_X86_64_PLT32 => 4,
                other => return Err(format!("unsupported relocation type {other}")),
            };
            let place = at(inside(section.index(), offset, width)?);
            let value = (address(reloc.target())? as i64).wrapping_add(reloc.addend());
            if width == 8 {
                // SAFETY: the place's 8 bytes lie inside the section's mapped range (`inside`).
                unsafe { place.cast::<i64>().write_unaligned(value) }
            } else {
                let relative = i32::try_from(value.wrapping_sub(place as i64))
                    .map_err(|_| "a 32-bit relative relocation out of range".to_string())?;
                // SAFETY: as above, for 4 bytes.
                unsafe { place.cast::<i32>().write_unaligned(relative) }
            }
        }
    }
    mapped.seal()?;
    // Where each defined function is; checked to lie inside its section when looked up.
    let mut symbols = HashMap::new();
    for symbol in file.symbols() {
        if let (Ok(name), Some(section)) = (symbol.name(), symbol.section_index())
            && placed.contains_key(&section)
        {
            symbols.insert(name, (section, symbol.address()));
        }
    }
    let function = |name: &str| -> Result<Option<*const u8>, String> {
        symbols
            .get(name)
            .map(|&(section, offset)| Ok(at(inside(section, offset, 1)?).cast_const()))
            .transpose()
    };
    let mut kernels = Vec::new();
    for info in infos {
        let Some(info) = info else {
            kernels.push(None);
            continue;
        };
        let kernel = function(&info.name)?
            .ok_or_else(|| format!("the object has no kernel {}", info.name))?;
        let combine = function(&format!("{}_combine", info.name))?.unwrap_or(std::ptr::null());
        // SAFETY: the functions were compiled from this kernel by the code generator (the
        // caller's checks) and live in `mapped`, which the caller keeps with the launchables.
        let entry = unsafe { Entry::from_code(kernel, combine) };
        kernels.push(Some(Launchable::loaded(info, entry)));
    }
    Ok((kernels, mapped))
}

/// The address of a symbol the object imports: a runtime helper, or one of [`LIBCALLS`] in this
/// process's C library.
fn external(helpers: &HashMap<&str, *const u8>, name: &str) -> Result<*const u8, String> {
    if let Some(&address) = helpers.get(name) {
        return Ok(address);
    }
    if !LIBCALLS.contains(&name) {
        return Err(format!(
            "the object imports `{name}`, which generated code never calls"
        ));
    }
    let c_name = std::ffi::CString::new(name).map_err(|_| format!("symbol name {name:?}"))?;
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the process's global symbols.
    let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c_name.as_ptr()) };
    if address.is_null() {
        return Err(format!(
            "the object needs `{name}`, which this process lacks"
        ));
    }
    Ok(address.cast_const().cast())
}
