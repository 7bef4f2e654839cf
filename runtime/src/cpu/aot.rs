//! Ahead-of-time compilation: a library's kernels as native code in an object file
//! (`ogham build FILE -o NAME.o`), and the checks that let the runtime run that code instead of
//! compiling the kernels itself.
//!
//! The object exports one symbol, `<name>_image`, an [`Image`] (C layout; `ogham_image` in
//! `capi/include/ogham.h`): the library packed (`packed`: sources, doc comments and
//! signatures, then each entry point's kernel IR and, as the executor's text for it, its kernel
//! table — JSON: the index of its first kernel statement among the program's, in the order of
//! `ogham_compiler::back::cpu::compile`, and for each of its kernel statements what the
//! executor needs to launch it, its name, argument variables and error sites, or null where no
//! kernel was generated), the addresses of each statement's kernel and combine functions (null
//! where none), the CPU features the code was compiled for (those of the machine that built it,
//! as the JIT does) and the build id of the compiler that made it ([`crate::BUILD_ID`]). Kernels
//! call the runtime's helpers (`ogham_alloc`, `ogham_exp_f32`, ...) by symbol, so the object
//! links against the runtime (`libogham_c`), and libm.
//!
//! Opening ([`open`]) generates no code and reads no entry point: it refuses an image of another
//! format version, made by another build of the compiler (its code may not match this
//! runtime), or that needs CPU features this machine lacks, then opens the packed library
//! (which checks the skeleton's hash). An entry point's first call checks and decodes its IR
//! and kernel table and refuses a table that does not match its program.

use super::code::{Entry, host_cpu_features};
use super::packed::Packed;
use super::{Executable, KernelInfo, Launchable};
use ogham_ir::kir::Program;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ffi::{CStr, c_char};
use std::path::Path;

#[cfg(feature = "jit")]
pub use write::object;

/// Bumped whenever [`Image`] or the meaning of its fields changes (3: the library packed).
pub const IMAGE_VERSION: u64 = 3;

/// What an object made by [`object`] exports as `<name>_image`.
#[repr(C)]
pub struct Image {
    /// [`IMAGE_VERSION`].
    pub version: u64,
    /// The build id of the compiler that made the object ([`crate::build_id`]).
    pub build: u64,
    /// The packed library (`library_len` bytes).
    pub library: *const u8,
    pub library_len: u64,
    /// The Cranelift names of the CPU features the code may use, comma-separated, NUL-terminated.
    pub cpu_features: *const c_char,
    /// The number of kernel statements.
    pub kernel_count: u64,
    /// `2 * kernel_count` addresses: each statement's kernel and combine function, or null.
    pub kernels: *const *const u8,
}

/// An entry point's kernel table: its first kernel statement's index among the program's, and
/// each of its kernel statements' description (`None` where no kernel was generated).
#[derive(Serialize, Deserialize)]
struct KernelTable {
    first: usize,
    kernels: Vec<Option<KernelInfo>>,
}

/// Whether `name` can name the image's symbol: a C identifier.
pub fn valid_symbol_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Writing objects: the kernels compiled by Cranelift (only with the `jit` feature).
#[cfg(feature = "jit")]
mod write {
    use super::super::jit;
    use super::{IMAGE_VERSION, KernelInfo, KernelTable, valid_symbol_name};
    use crate::cpu::packed;
    use cranelift_module::{DataDescription, DataId, Linkage, Module};
    use cranelift_object::{ObjectBuilder, ObjectModule};
    use ogham_compiler::back::cpu as back;
    use ogham_ir::kir::Program;
    use ogham_ir::source::SourceMap;
    use std::collections::BTreeMap;

    /// The offsets of `Image`'s fields that the object fills (pointers by relocations).
    const BUILD_AT: usize = 8;
    const LIBRARY_AT: u32 = 16;
    const LIBRARY_LEN_AT: usize = 24;
    const FEATURES_AT: u32 = 32;
    const COUNT_AT: usize = 40;
    const KERNELS_AT: u32 = 48;
    const IMAGE_SIZE: usize = 56;

    /// An ELF object defining `<name>_image` for the library of kernel-IR `program` compiled from
    /// `sources`, with its entry points' `docs`; its kernels are compiled for this machine's CPU.
    pub fn object(
        sources: &SourceMap,
        docs: &BTreeMap<String, String>,
        program: &Program,
        name: &str,
    ) -> Result<Vec<u8>, String> {
        if !valid_symbol_name(name) {
            return Err(format!(
                "`{name}` cannot name a C symbol (letters, digits and `_`, not starting with a digit)"
            ));
        }
        let segs = back::compile(program);
        let mut infos = KernelInfo::of(&segs).into_iter();
        let sites = ogham_ir::abi::kernels(program);
        let mut tables = Vec::new();
        for f in 0..program.functions.len() {
            let table = KernelTable {
                first: sites.iter().filter(|s| s.function < f).count(),
                kernels: infos
                    .by_ref()
                    .take(sites.iter().filter(|s| s.function == f).count())
                    .collect(),
            };
            tables.push(
                serde_json::to_string(&table)
                    .map_err(|e| format!("cannot encode the kernel table: {e}"))?,
            );
        }
        let library = packed::pack(sources, docs, program, Some(&tables))?;
        let isa = jit::isa(true)?;
        let mut features = jit::cpu_features(&*isa).join(",").into_bytes();
        features.push(0);
        let builder = ObjectBuilder::new(isa, name, cranelift_module::default_libcall_names())
            .map_err(|e| format!("object file: {e}"))?;
        let mut module = ObjectModule::new(builder);
        let (ids, _) = jit::define_kernels(&mut module, &segs, &format!("{name}_"))?;

        let library = bytes_data(&mut module, &format!("{name}_library"), &library)?;
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
        for (at, value) in [
            (0, IMAGE_VERSION),
            (BUILD_AT, crate::build_id()),
            (LIBRARY_LEN_AT, library.1 as u64),
            (COUNT_AT, ids.len() as u64),
        ] {
            bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
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
}

/// The C interface's header (`capi/include/ogham.h`), which `ogham build` writes beside the
/// headers it generates (they include it).
pub const OGHAM_H: &str = include_str!("../../../capi/include/ogham.h");

/// The command that builds a C program `main.c` (which includes the object's header) with the
/// object file `object` (its header and `ogham.h` beside it) and `libogham_c` from `lib_dir`,
/// which the program finds again at run time (`-rpath`). `object` should be absolute, so that
/// the command works from any directory. Without `lib_dir` (not known), `LIBDIR` stands for it.
/// Arguments are quoted for a POSIX shell where they need it (a path with spaces or quotes).
pub fn build_line(object: &Path, lib_dir: Option<&Path>) -> String {
    let include = object.parent().unwrap_or(Path::new("."));
    let lib = lib_dir.map_or("LIBDIR".to_string(), |d| d.display().to_string());
    format!(
        "cc main.c {} {} {} {} -logham_c -lm",
        shell_word(&object.display().to_string()),
        shell_word(&format!("-I{}", include.display())),
        shell_word(&format!("-L{lib}")),
        shell_word(&format!("-Wl,-rpath,{lib}")),
    )
}

/// `word` as one word of a POSIX shell command: as it is when it holds only characters that
/// the shell leaves alone, otherwise in single quotes (a `'` inside becomes `'\''`).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=,:@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The C header of an object whose image is `<name>_image`, built from `origin`, with the
/// entry points' `signatures` and the command that builds a program with it (`build`, from
/// [`build_line`]) as a comment.
pub fn c_header(name: &str, origin: &str, signatures: &[String], build: &str) -> String {
    let guard = format!("OGHAM_{}_H", name.to_ascii_uppercase());
    let entries: String = signatures.iter().map(|s| format!(" *   {s}\n")).collect();
    let libdir = if build.contains("LIBDIR") {
        " * LIBDIR: the directory of libogham_c (`cargo build --release -p ogham-capi` makes it\n          * in target/release).\n"
    } else {
        ""
    };
    format!(
        "/* Generated by `ogham build` from {origin}: the Ogham library `{name}`, compiled for \
         the CPU of the machine that built it.\n * Open it with `ogham_open_image(&{name}_image)` \
         (see ogham.h, written beside this file). Entry points:\n{entries} * Build a program \
         main.c that includes \"{name}.h\":\n *   {build}\n{libdir} */\n#ifndef {guard}\n\
         #define {guard}\n\n#include \"ogham.h\"\n\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n\
         extern const ogham_image {name}_image;\n\n#ifdef __cplusplus\n}}\n#endif\n\n#endif\n"
    )
}

const REBUILD: &str = "rebuild the object with this runtime's version of `ogham build`";

/// The addresses of an image's code: immutable, so shared between threads.
struct Code(&'static [*const u8]);

// SAFETY: the addresses are of code that is never written.
unsafe impl Send for Code {}
// SAFETY: as for `Send`.
unsafe impl Sync for Code {}

impl Code {
    /// The kernel and combine function addresses of the `count` kernel statements from `first`.
    fn pairs(&self, first: usize, count: usize) -> Option<&[*const u8]> {
        let end = first.checked_add(count)?;
        self.0.get(2 * first..2 * end)
    }
}

/// The packed library of `image`, after the checks, whose entry points run the image's code.
///
/// # Safety
/// `image` is a valid [`Image`] whose code and data stay loaded while the library lives.
pub(crate) unsafe fn open(image: &Image) -> Result<Packed, String> {
    if image.version != IMAGE_VERSION {
        return Err(format!(
            "the image is of version {}; this runtime reads version {IMAGE_VERSION} (rebuild the \
             object with this version's `ogham build`)",
            image.version
        ));
    }
    if image.build != crate::build_id() {
        return Err(format!(
            "the object was made by another build of the compiler ({:016x}; this runtime is \
             {:016x}): {REBUILD}",
            image.build,
            crate::build_id()
        ));
    }
    // SAFETY: the caller's contract.
    let wanted = unsafe { CStr::from_ptr(image.cpu_features) }
        .to_str()
        .map_err(|_| "the image's CPU features are not UTF-8 text".to_string())?;
    let here = host_cpu_features()?;
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
    // SAFETY: the caller's contract: `library_len` bytes and `2 * kernel_count` addresses,
    // loaded while the library lives.
    let (library, code) = unsafe {
        (
            std::slice::from_raw_parts(image.library, image.library_len as usize),
            std::slice::from_raw_parts(image.kernels, 2 * image.kernel_count as usize),
        )
    };
    let code = Code(code);
    let make = move |program: Program, table: &str| {
        let table: KernelTable = serde_json::from_str(table)
            .map_err(|e| format!("the image's kernel table is not readable ({e}): {REBUILD}"))?;
        let mismatch = || format!("the image's kernel table does not match its program: {REBUILD}");
        let pairs = code
            .pairs(table.first, table.kernels.len())
            .ok_or_else(mismatch)?;
        let mut kernels = Vec::new();
        for (info, pair) in table.kernels.into_iter().zip(pairs.chunks(2)) {
            if info.is_some() == pair[0].is_null() {
                return Err(mismatch());
            }
            // SAFETY: the build id matched: the code was generated for these kernels by this
            // compiler.
            kernels.push(info.map(|info| {
                Launchable::loaded(info, unsafe { Entry::from_code(pair[0], pair[1]) })
            }));
        }
        Executable::with_kernels(program, kernels, Box::new(())).map_err(|_| mismatch())
    };
    Packed::open(Cow::Borrowed(library), 0, Box::new(make))
        .map_err(|why| format!("the image's library is damaged ({why}): {REBUILD}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_line_quotes_paths_for_the_shell() {
        let line = build_line(
            Path::new("/tmp/my dir/it's.o"),
            Some(Path::new("/opt/ogham/lib")),
        );
        assert_eq!(
            line,
            "cc main.c '/tmp/my dir/it'\\''s.o' '-I/tmp/my dir' -L/opt/ogham/lib \
             -Wl,-rpath,/opt/ogham/lib -logham_c -lm"
        );
        // The shell splits it into the intended words.
        let words = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("set -- {line}; printf '%s\\n' \"$@\""))
            .output()
            .expect("sh runs");
        let words = String::from_utf8_lossy(&words.stdout);
        assert_eq!(
            words.lines().collect::<Vec<_>>(),
            [
                "cc",
                "main.c",
                "/tmp/my dir/it's.o",
                "-I/tmp/my dir",
                "-L/opt/ogham/lib",
                "-Wl,-rpath,/opt/ogham/lib",
                "-logham_c",
                "-lm"
            ]
        );
    }
}
