//! Native code that outlives the process that compiled it (the on-disk cache of compiled
//! programs, `ogham::cache`): every kernel of a program compiled by Cranelift into a relocatable
//! ELF object, and a small loader that maps such an object into this process without a linker.
//!
//! [`compile`] makes, for one entry point, the object (position-dependent x86-64 code, as the JIT
//! makes: calls to the runtime's helpers and to libm go through 64-bit absolute addresses) and
//! the kernel table (JSON: what the executor needs to launch each of the entry point's kernel
//! statements, `None` where no kernel was generated; as in ahead-of-time images). [`load`] maps the object's allocated sections into
//! fresh pages, applies its relocations (`R_X86_64_64`, `R_X86_64_PC32`, `R_X86_64_PLT32`;
//! any other is refused), resolves the helpers `ogham_*` to their addresses in this runtime and
//! other symbols (`memcpy`, `ceilf`, ...) with `dlsym`, makes the pages executable and
//! read-only, and finds each kernel's functions by their symbol names (`<kernel>`,
//! `<kernel>_combine`). The pages are unmapped when the [`Mapped`] owning them is dropped.
//!
//! The loader trusts the object's code: callers check that the object was made by this build
//! for this CPU and is intact (the cache keys entries by build id and CPU features and verifies
//! a hash of each entry's contents before loading it). Only with the `jit` feature.

use super::code::Entry;
use super::jit;
use super::{KernelInfo, Launchable, helpers};
use cranelift_object::{ObjectBuilder, ObjectModule};
use object::{Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget};
use ogham_compiler::back::cpu as back;
use ogham_ir::kir::Program;
use std::collections::HashMap;

/// Whether this runtime can load native code ([`load`]).
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// The native code of an entry point's kernels.
pub struct Native {
    /// A relocatable ELF object.
    pub object: Vec<u8>,
    /// The kernel table (JSON), in the order of the entry point's kernel statements.
    pub table: String,
}

/// The kernels of entry point `function` of `program` as native code.
pub fn compile(program: &Program, function: usize) -> Result<Native, String> {
    let segs = back::compile_function(program, function);
    let table = serde_json::to_string(&KernelInfo::of(&segs))
        .map_err(|e| format!("cannot encode the kernel table: {e}"))?;
    let isa = jit::isa(false)?;
    let builder = ObjectBuilder::new(isa, "ogham", cranelift_module::default_libcall_names())
        .map_err(|e| format!("object file: {e}"))?;
    let mut module = ObjectModule::new(builder);
    jit::define_kernels(&mut module, &segs, "")?;
    let object = module
        .finish()
        .emit()
        .map_err(|e| format!("object file: {e}"))?;
    Ok(Native { object, table })
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

/// Loads `code` (made by [`compile`]) into this process: the launchable code of the entry
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
    // Layout: every allocated section at its alignment, one after the other.
    let mut placed = HashMap::new();
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
        let align = usize::try_from(section.align().max(1)).map_err(|e| e.to_string())?;
        let start = len.next_multiple_of(align);
        let size = usize::try_from(section.size()).map_err(|e| e.to_string())?;
        placed.insert(section.index(), start);
        len = start + size;
    }
    let mapped = Mapped::new(len)?;
    let at = |offset: usize| mapped.base.wrapping_add(offset);
    for section in file.sections() {
        let Some(&start) = placed.get(&section.index()) else {
            continue;
        };
        let data = section.data().map_err(|e| format!("object file: {e}"))?;
        // SAFETY: the section's range was reserved in the mapping; an uninitialized section
        // has no data and stays zero.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), at(start), data.len()) };
    }
    let helpers: HashMap<&str, *const u8> = helpers::addresses().into_iter().collect();
    let address = |target: RelocationTarget| -> Result<u64, String> {
        let section = match target {
            RelocationTarget::Section(index) => Some((index, 0)),
            RelocationTarget::Symbol(index) => {
                let symbol = file
                    .symbol_by_index(index)
                    .map_err(|e| format!("object file: {e}"))?;
                match symbol.section_index() {
                    Some(section) => Some((section, symbol.address())),
                    None => {
                        let name = symbol.name().map_err(|e| format!("object file: {e}"))?;
                        return external(&helpers, name).map(|a| a as u64);
                    }
                }
            }
            RelocationTarget::Absolute => None,
            _ => return Err("unknown relocation target".to_string()),
        };
        match section {
            None => Ok(0),
            Some((index, offset)) => match placed.get(&index) {
                Some(&start) => Ok(at(start) as u64 + offset),
                None => Err("relocation against a section that is not loaded".to_string()),
            },
        }
    };
    for section in file.sections() {
        let Some(&start) = placed.get(&section.index()) else {
            continue;
        };
        for (offset, reloc) in section.relocations() {
            let place = at(start + usize::try_from(offset).map_err(|e| e.to_string())?);
            let value = (address(reloc.target())? as i64).wrapping_add(reloc.addend());
            let RelocationFlags::Elf { r_type } = reloc.flags() else {
                return Err("not an ELF relocation".to_string());
            };
            match r_type {
                object::elf::R_X86_64_64 => {
                    // SAFETY: the place is inside the section (the object says so).
                    unsafe { place.cast::<i64>().write_unaligned(value) }
                }
                object::elf::R_X86_64_PC32 | object::elf::R_X86_64_PLT32 => {
                    let relative = i32::try_from(value.wrapping_sub(place as i64))
                        .map_err(|_| "a 32-bit relative relocation out of range".to_string())?;
                    // SAFETY: as above.
                    unsafe { place.cast::<i32>().write_unaligned(relative) }
                }
                other => return Err(format!("unsupported relocation type {other}")),
            }
        }
    }
    mapped.seal()?;
    let mut symbols = HashMap::new();
    for symbol in file.symbols() {
        if let (Ok(name), Some(section)) = (symbol.name(), symbol.section_index())
            && let Some(&start) = placed.get(&section)
        {
            symbols.insert(name, at(start + symbol.address() as usize).cast_const());
        }
    }
    let mut kernels = Vec::new();
    for info in infos {
        let Some(info) = info else {
            kernels.push(None);
            continue;
        };
        let &kernel = symbols
            .get(info.name.as_str())
            .ok_or_else(|| format!("the object has no kernel {}", info.name))?;
        let combine = symbols
            .get(format!("{}_combine", info.name).as_str())
            .copied()
            .unwrap_or(std::ptr::null());
        // SAFETY: the functions were compiled from this kernel by `compile` (the caller's
        // checks) and live in `mapped`, which the caller keeps with the launchables.
        let entry = unsafe { Entry::from_code(kernel, combine) };
        kernels.push(Some(Launchable::loaded(info, entry)));
    }
    Ok((kernels, mapped))
}

/// The address of a symbol the object imports: a runtime helper, or one of this process (libm,
/// libc).
fn external(helpers: &HashMap<&str, *const u8>, name: &str) -> Result<*const u8, String> {
    if let Some(&address) = helpers.get(name) {
        return Ok(address);
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
