//! Ahead-of-time compilation: a library's kernels as native code in an object file
//! (`ogham build FILE -o NAME.o`; [`object`] packs the library and its kernel tables, and the
//! code generator, [`crate::cpu::CpuCodegen::object`], compiles the kernels and writes the
//! object), and the checks that let the runtime run that code instead of compiling the kernels
//! itself.
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
use super::packed::{self, Packed};
use super::{Codegen, Executable, Launchable};
use ogham_ir::artifact::cpu::{self as artifact, ImageData, KernelInfo};
use ogham_ir::kir::Program;
use ogham_ir::source::SourceMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::{CStr, c_char};
use std::mem::offset_of;
use std::path::Path;

/// Bumped whenever [`Image`] or the meaning of its fields changes (3: the library packed).
pub const IMAGE_VERSION: u64 = 3;

/// What an object made by [`object`] exports as `<name>_image` (the layout
/// `ogham_ir::artifact::cpu` describes to the code generator).
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

// The code generator writes the record at the offsets of `ogham_ir::artifact::cpu`.
const _: () = assert!(
    offset_of!(Image, version) == artifact::IMAGE_VERSION_AT
        && offset_of!(Image, build) == artifact::IMAGE_BUILD_AT
        && offset_of!(Image, library) == artifact::IMAGE_LIBRARY_AT
        && offset_of!(Image, library_len) == artifact::IMAGE_LIBRARY_LEN_AT
        && offset_of!(Image, cpu_features) == artifact::IMAGE_FEATURES_AT
        && offset_of!(Image, kernel_count) == artifact::IMAGE_COUNT_AT
        && offset_of!(Image, kernels) == artifact::IMAGE_KERNELS_AT
        && size_of::<Image>() == artifact::IMAGE_SIZE
);

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

/// An ELF object defining `<name>_image` for the library of kernel-IR `program` compiled from
/// `sources`, with its entry points' `docs`: the library packed with its kernel tables, and its
/// kernels compiled for this machine's CPU by `codegen`.
pub fn object(
    codegen: Codegen,
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
    codegen.object(program, name, &mut |infos| {
        let mut infos = infos.iter().cloned();
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
        Ok(ImageData {
            version: IMAGE_VERSION,
            build: crate::build_id(),
            library: packed::pack(sources, docs, program, Some(&tables))?,
        })
    })
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
    Packed::open(Cow::Borrowed(library), 0, None, Box::new(make))
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
