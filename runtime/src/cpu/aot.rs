//! Ahead-of-time compilation: a library's kernels as native code in an object file
//! (`ogham build FILE -o NAME.o`), and the checks that let the runtime run that code instead of
//! compiling the kernels itself.
//!
//! The object exports one symbol, `<name>_image`, an [`Image`] (C layout; `ogham_image` in
//! `capi/include/ogham.h`): the library's JSON text (as in a `.ogl` file: sources and kernel
//! IR), for each kernel statement of the program in the order of
//! `ogham_compiler::back::cpu::compile` the addresses of its kernel and combine functions (null
//! where none was generated), a fingerprint of the kernels' Cranelift IR, and the CPU features
//! the code was compiled for (those of the machine that built it, as the JIT does). Kernels call
//! the runtime's helpers (`ogham_alloc`, `ogham_exp_f32`, ...) by symbol, so the object links
//! against the runtime (`libogham_c`), and libm.
//!
//! Loading ([`entries`]) regenerates the kernels' Cranelift IR from the kernel IR (it gives the
//! argument layouts and error sites the executor needs; no machine code is made) and refuses an
//! image of another format version, whose fingerprint differs (the object was made by another
//! version of the compiler, so its code may not match), whose kernel table does not match the
//! program, or that needs CPU features this machine lacks.

use super::Launchable;
use super::jit::{self, Entry};
use cranelift_codegen::isa::TargetIsa;
use cranelift_module::{DataDescription, DataId, Linkage, Module};
use cranelift_object::{ObjectBuilder, ObjectModule};
use ogham_compiler::back::cpu::{self as back, CompiledSeg};
use ogham_compiler::ir::Program;
use std::ffi::{CStr, c_char};

/// Bumped whenever [`Image`] or the meaning of its fields changes.
pub const IMAGE_VERSION: u64 = 1;

/// What an object made by [`object`] exports as `<name>_image`.
#[repr(C)]
pub struct Image {
    /// [`IMAGE_VERSION`].
    pub version: u64,
    /// [`fingerprint`] of the kernels the code was compiled from.
    pub fingerprint: u64,
    /// The library's JSON text (`library_len` bytes).
    pub library: *const u8,
    pub library_len: u64,
    /// The Cranelift names of the CPU features the code may use, comma-separated, NUL-terminated.
    pub cpu_features: *const c_char,
    /// The number of kernel statements.
    pub kernel_count: u64,
    /// `2 * kernel_count` addresses: each statement's kernel and combine function, or null.
    pub kernels: *const *const u8,
}

/// A library's kernels whose machine code is linked into this process, in the order of
/// `ogham_compiler::back::cpu::compile` (`None` where no kernel was generated).
pub struct Precompiled(pub(super) Vec<Option<Launchable>>);

/// The offsets of `Image`'s pointer fields (filled by relocations in the object).
const LIBRARY_AT: u32 = 16;
const FEATURES_AT: u32 = 32;
const KERNELS_AT: u32 = 48;
const IMAGE_SIZE: usize = 56;

/// A hash of every kernel statement's name and generated Cranelift IR (or the reason it has
/// none): equal for the same program compiled by the same code generator.
fn fingerprint(segs: &[CompiledSeg]) -> u64 {
    let mut text = String::new();
    for seg in segs {
        text.push_str(&seg.name);
        match &seg.kernel {
            Ok(k) => {
                text.push_str(&k.func.display().to_string());
                if let Some(c) = &k.combine {
                    text.push_str(&c.display().to_string());
                }
            }
            Err(reason) => text.push_str(&format!("not generated: {reason:?}")),
        }
    }
    crate::fnv1a(text.as_bytes())
}

/// The names of the CPU features `isa` may use.
fn cpu_features(isa: &dyn TargetIsa) -> Vec<String> {
    isa.isa_flags()
        .iter()
        .filter(|flag| flag.as_bool() == Some(true))
        .map(|flag| flag.name.to_string())
        .collect()
}

/// Whether `name` can name the image's symbol: a C identifier.
pub fn valid_symbol_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An ELF object defining `<name>_image` for the library whose JSON text is `library` and whose
/// kernel IR is `program`; its kernels are compiled for this machine's CPU.
pub fn object(library: &str, program: &Program, name: &str) -> Result<Vec<u8>, String> {
    if !valid_symbol_name(name) {
        return Err(format!(
            "`{name}` cannot name a C symbol (letters, digits and `_`, not starting with a digit)"
        ));
    }
    let segs = back::compile(program);
    let isa = jit::isa(true)?;
    let mut features = cpu_features(&*isa).join(",").into_bytes();
    features.push(0);
    let builder = ObjectBuilder::new(isa, name, cranelift_module::default_libcall_names())
        .map_err(|e| format!("object file: {e}"))?;
    let mut module = ObjectModule::new(builder);
    let (ids, _) = jit::define_kernels(&mut module, &segs, &format!("{name}_"))?;

    let library = bytes_data(&mut module, &format!("{name}_library"), library.as_bytes())?;
    let features = bytes_data(&mut module, &format!("{name}_cpu_features"), &features)?;

    let table = declare(&mut module, &format!("{name}_kernels"), Linkage::Local)?;
    let mut desc = DataDescription::new();
    desc.define(vec![0u8; 16 * ids.len().max(1)].into_boxed_slice());
    for (i, kernel) in ids.iter().enumerate() {
        let Some((main, combine)) = *kernel else {
            continue;
        };
        for (slot, id) in [(0, Some(main)), (1, combine)] {
            if let Some(id) = id {
                let func = module.declare_func_in_data(id, &mut desc);
                desc.write_function_addr((16 * i + 8 * slot) as u32, func);
            }
        }
    }
    define(&mut module, table, &desc)?;

    let image = declare(&mut module, &format!("{name}_image"), Linkage::Export)?;
    let mut bytes = vec![0u8; IMAGE_SIZE];
    bytes[0..8].copy_from_slice(&IMAGE_VERSION.to_le_bytes());
    bytes[8..16].copy_from_slice(&fingerprint(&segs).to_le_bytes());
    bytes[24..32].copy_from_slice(&(library.1 as u64).to_le_bytes());
    bytes[40..48].copy_from_slice(&(ids.len() as u64).to_le_bytes());
    let mut desc = DataDescription::new();
    desc.define(bytes.into_boxed_slice());
    desc.set_align(8);
    for (at, data) in [
        (LIBRARY_AT, library.0),
        (FEATURES_AT, features.0),
        (KERNELS_AT, table),
    ] {
        let target = module.declare_data_in_data(data, &mut desc);
        desc.write_data_addr(at, target, 0);
    }
    define(&mut module, image, &desc)?;
    module
        .finish()
        .emit()
        .map_err(|e| format!("object file: {e}"))
}

/// The C header of an object whose image is `<name>_image`, built from `origin`, with the
/// entry points' `signatures` as a comment.
pub fn c_header(name: &str, origin: &str, signatures: &[String]) -> String {
    let guard = format!("OGHAM_{}_H", name.to_ascii_uppercase());
    let entries: String = signatures.iter().map(|s| format!(" *   {s}\n")).collect();
    format!(
        "/* Generated by `ogham build` from {origin}: the Ogham library `{name}`, compiled for \
         the CPU of the machine that built it.\n * Link {name}.o with libogham_c (`-logham_c \
         -lm`); open it with `ogham_open_image(&{name}_image)` (see ogham.h).\n * Entry \
         points:\n{entries} */\n#ifndef {guard}\n#define {guard}\n\n#include \"ogham.h\"\n\n\
         #ifdef __cplusplus\nextern \"C\" {{\n#endif\n\nextern const ogham_image \
         {name}_image;\n\n#ifdef __cplusplus\n}}\n#endif\n\n#endif\n"
    )
}

fn declare(module: &mut ObjectModule, name: &str, linkage: Linkage) -> Result<DataId, String> {
    module
        .declare_data(name, linkage, false, false)
        .map_err(|e| format!("declaring {name}: {e}"))
}

fn define(module: &mut ObjectModule, id: DataId, desc: &DataDescription) -> Result<(), String> {
    module
        .define_data(id, desc)
        .map_err(|e| format!("object file: {e}"))
}

/// A local read-only data object holding `bytes`; its id and length.
fn bytes_data(
    module: &mut ObjectModule,
    name: &str,
    bytes: &[u8],
) -> Result<(DataId, usize), String> {
    let id = declare(module, name, Linkage::Local)?;
    let mut desc = DataDescription::new();
    desc.define(bytes.to_vec().into_boxed_slice());
    define(module, id, &desc)?;
    Ok((id, bytes.len()))
}

/// The library text of `image`.
///
/// # Safety
/// `image` is a valid [`Image`].
pub(crate) unsafe fn library_text(image: &Image) -> Result<&str, String> {
    if image.version != IMAGE_VERSION {
        return Err(format!(
            "the image is of version {}; this runtime reads version {IMAGE_VERSION} (rebuild the \
             object with this version's `ogham build`)",
            image.version
        ));
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(image.library, image.library_len as usize) };
    std::str::from_utf8(bytes).map_err(|_| "the image's library is not UTF-8 text".to_string())
}

/// The kernels' entry points of `image`, whose library holds `program`.
///
/// # Safety
/// `image` is a valid [`Image`] whose code stays loaded while the entries are used.
pub(crate) unsafe fn entries(image: &Image, program: &Program) -> Result<Precompiled, String> {
    let rebuild = "rebuild the object with this runtime's version of `ogham build`";
    // SAFETY: the caller's contract.
    let wanted = unsafe { CStr::from_ptr(image.cpu_features) }
        .to_str()
        .map_err(|_| "the image's CPU features are not UTF-8 text".to_string())?;
    let here = cpu_features(&*jit::isa(false)?);
    let missing: Vec<&str> = wanted
        .split(',')
        .filter(|f| !f.is_empty() && !here.iter().any(|h| h == f))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the object was compiled for a CPU with features this one lacks ({}); build it on \
             this machine",
            missing.join(", ")
        ));
    }
    let segs = back::compile(program);
    if image.kernel_count != segs.len() as u64 || image.fingerprint != fingerprint(&segs) {
        return Err(format!(
            "the image's kernels do not match its program (made by another version of the \
             compiler): {rebuild}"
        ));
    }
    // SAFETY: the caller's contract: `2 * kernel_count` addresses.
    let code = unsafe { std::slice::from_raw_parts(image.kernels, 2 * segs.len()) };
    let mut kernels = Vec::new();
    for (seg, pair) in segs.into_iter().zip(code.chunks(2)) {
        if seg.kernel.is_ok() == pair[0].is_null() {
            return Err(format!(
                "the image's kernel table does not match its program at {}: {rebuild}",
                seg.name
            ));
        }
        // SAFETY: the fingerprint matched: the code was generated from these kernels.
        let entry = (!pair[0].is_null()).then(|| unsafe { Entry::from_code(pair[0], pair[1]) });
        kernels.push(Launchable::new(seg.kernel, entry));
    }
    Ok(Precompiled(kernels))
}
