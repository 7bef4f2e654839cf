//! Compiled libraries: a program compiled once (`ogham build FILE -o LIB.ogl`) and run later on
//! the CPU backend without the compiler's front and middle end.
//!
//! ```no_run
//! use ogham_runtime::library::Library;
//! use ogham_runtime::value::{Array, Value};
//! # fn codegen() -> ogham_runtime::cpu::Codegen { unimplemented!() }
//! // `ogham::codegen::cpu::CPU`: the compiler's Cranelift backend.
//! let lib = Library::load("bfast.ogl".as_ref(), codegen())?;
//! let xs = Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).unwrap();
//! match lib.call("main", vec![Value::Array(xs)]) {
//!     Ok(outputs) => println!("{outputs:?}"),
//!     Err(e) => eprintln!("{}", lib.render(&e)),
//! }
//! # Ok::<(), String>(())
//! ```
//!
//! The file is JSON: a format tag and version, the program's source files (for error messages
//! with source locations) and its kernel IR (`ogham_ir::kir::Program`, after flattening and
//! optimisation) and its entry points' doc comments. Loading reads the version first (a file
//! of another version is refused with the command that rebuilds it, since its IR would not
//! decode), then checks the program as untrusted input (`cpu::untrusted::check_untrusted`), so a damaged or
//! hand-edited file is rejected with an error instead of misbehaving. An entry point's kernels
//! are JIT-compiled at its first call (milliseconds), by the code generator the library was
//! given (`cpu::CpuCodegen`; the runtime contains none), and the machine code is reused by
//! every later call, from any thread.
//!
//! # A library is untrusted input
//!
//! A program read from a file is checked in full before any of it runs
//! ([`crate::cpu::untrusted`]): what is then left to a library is what its sources say.
//!
//! A library compiled ahead of time (`ogham build FILE -o NAME.o`, `cpu::aot`) is an object
//! file that carries the library packed (`cpu::packed`: an entry point's IR is read at its
//! first call) and the kernels' machine code; linked into a program, it is opened with
//! [`Library::from_image`] and runs without the JIT.
//!
//! Without the `jit` feature (`ogham-capi --no-default-features`, a runtime that cannot take a
//! code generator) only ahead-of-time images open: there is no [`Library::load`], and the C
//! interface refuses a `.ogl` file with error R0713.

use crate::cpu::aot::{self, Image};
use crate::cpu::packed::Packed;
#[cfg(feature = "jit")]
use crate::cpu::{Codegen, Executable, NativeStore};
use crate::ireval::Thresholds;
use crate::value::Value;
use ogham_ir::Signature;
use ogham_ir::diag::{Diagnostic, render};
use ogham_ir::kir::Program;
use ogham_ir::kir::Threshold;
use ogham_ir::source::SourceMap;
#[cfg(feature = "jit")]
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
#[cfg(feature = "jit")]
use std::path::Path;

#[cfg(feature = "jit")]
const FORMAT: &str = "ogham-library";
/// Why a packed library cannot be written as a whole program.
#[cfg(feature = "jit")]
const NOT_WHOLE: &str = "a library opened from an object cannot be written again";
/// Bumped whenever the IR or this file's layout changes incompatibly (2: entry points' doc
/// comments; 3: kernel IR's kernels and thresholds as `Host` statements).
pub const VERSION: u32 = 3;

/// A compiled program: its sources, entry points' doc comments and kernel IR, with the kernels'
/// machine code made once (`cpu::Executable`). `Send + Sync`: calls may come from any thread.
pub struct Library {
    code: Code,
}

enum Code {
    /// The whole program in memory (compiled, or read from a `.ogl` file).
    #[cfg(feature = "jit")]
    Program {
        sources: SourceMap,
        docs: BTreeMap<String, String>,
        executable: Executable,
        codegen: Codegen,
    },
    /// A packed library (an ahead-of-time object's): entry points read at their first call.
    Packed(Packed),
}

/// The JSON layout of a library (writing borrows, reading owns; reading checks the [`Header`]
/// first).
#[cfg(feature = "jit")]
#[derive(Serialize)]
struct FileOut<'a> {
    format: &'a str,
    version: u32,
    sources: &'a SourceMap,
    docs: &'a BTreeMap<String, String>,
    program: &'a Program,
}

/// The start of a library's JSON: read first, since a program of another version does not
/// decode.
#[cfg(feature = "jit")]
#[derive(Deserialize)]
struct Header {
    format: String,
    version: u32,
}

#[cfg(feature = "jit")]
#[derive(Deserialize)]
struct FileIn {
    sources: SourceMap,
    #[serde(default)]
    docs: BTreeMap<String, String>,
    program: Program,
}

/// Making, writing and reading whole programs: with the JIT only.
#[cfg(feature = "jit")]
impl Library {
    /// A library of kernel-IR `program` compiled from `sources`, whose kernels `codegen`
    /// compiles.
    pub fn new(sources: SourceMap, program: Program, codegen: Codegen) -> Library {
        Library::of_program(sources, BTreeMap::new(), program, codegen)
    }

    fn of_program(
        sources: SourceMap,
        docs: BTreeMap<String, String>,
        program: Program,
        codegen: Codegen,
    ) -> Library {
        Library {
            code: Code::Program {
                sources,
                docs,
                executable: Executable::new(program, codegen),
                codegen,
            },
        }
    }

    /// This library with the doc comments (`-- |`) of its entry points, by name (a packed
    /// library keeps its own).
    pub fn with_docs(mut self, new: BTreeMap<String, String>) -> Library {
        if let Code::Program { docs, .. } = &mut self.code {
            *docs = new;
        }
        self
    }

    /// The library's JSON text (the contents of a `.ogl` file).
    pub fn to_json(&self) -> Result<String, String> {
        serde_json::to_string(&FileOut {
            format: FORMAT,
            version: VERSION,
            sources: self.sources(),
            docs: self.docs(),
            program: self.whole_program()?,
        })
        .map_err(|e| format!("cannot encode: {e}"))
    }

    /// The whole program; `Err` for a packed library, whose entry points are read one by one.
    fn whole_program(&self) -> Result<&Program, String> {
        self.program().ok_or_else(|| NOT_WHOLE.to_string())
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = self.to_json()?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The library of `.ogl` file `path`, whose kernels `codegen` JIT-compiles.
    pub fn load(path: &Path, codegen: Codegen) -> Result<Library, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Library::from_json(&text, &path.display().to_string(), codegen)
    }

    /// The library of JSON `text` (a `.ogl` file's contents) read from `origin` (a file name,
    /// for messages), checked as [`Library::load`] checks it.
    pub fn from_json(text: &str, origin: &str, codegen: Codegen) -> Result<Library, String> {
        let (sources, docs, program) = Library::parse(text, origin, codegen)?;
        Ok(Library::of_program(sources, docs, program, codegen))
    }

    /// This library with its entry points' native code kept in `store`: taken from there, or
    /// compiled and put there at an entry point's first call (see
    /// `cpu::Executable::with_store`). A packed library keeps its own code.
    pub fn with_store(self, store: Box<dyn NativeStore>) -> Library {
        match self.code {
            Code::Program {
                sources,
                docs,
                executable,
                codegen,
            } => Library {
                code: Code::Program {
                    sources,
                    docs,
                    executable: Executable::with_store(executable.into_program(), store, codegen),
                    codegen,
                },
            },
            Code::Packed(_) => self,
        }
    }

    /// The sources, doc comments and verified program of the library of JSON `text` read from
    /// `origin` (a file name, for messages), whose kernels `codegen` is to compile.
    fn parse(
        text: &str,
        origin: &str,
        codegen: Codegen,
    ) -> Result<(SourceMap, BTreeMap<String, String>, Program), String> {
        // The version first: another version's program does not decode.
        let header: Header = serde_json::from_str(text)
            .map_err(|e| format!("{origin} is not an Ogham library: {e}"))?;
        if header.format != FORMAT {
            return Err(format!(
                "{origin} is a `{}` file, not an Ogham library (`{FORMAT}`)",
                header.format
            ));
        }
        if header.version != VERSION {
            let by = if header.version < VERSION {
                "an older"
            } else {
                "a newer"
            };
            return Err(format!(
                "{origin} is a library of version {} built by {by} Ogham; this runtime reads \
                 version {VERSION}: rebuild it with `ogham build PROGRAM.og -o {origin}`",
                header.version
            ));
        }
        let lib: FileIn = serde_json::from_str(text)
            .map_err(|e| format!("{origin} is not an Ogham library: {e}"))?;
        crate::cpu::untrusted::check_untrusted(&lib.program, &lib.sources, Some(codegen)).map_err(
            |errors| {
                format!(
                    "{origin} holds an invalid program ({}); rebuild it with `ogham build`",
                    errors.join("; ")
                )
            },
        )?;
        Ok((lib.sources, lib.docs, lib.program))
    }

    /// This library as an object file whose symbol `<name>_image` is its image for
    /// [`Library::from_image`]: the library packed and its kernels compiled for this machine's
    /// CPU by its code generator.
    pub fn object(&self, name: &str) -> Result<Vec<u8>, String> {
        match &self.code {
            Code::Program {
                sources,
                docs,
                executable,
                codegen,
            } => aot::object(*codegen, sources, docs, executable.program(), name),
            Code::Packed(_) => Err(NOT_WHOLE.to_string()),
        }
    }
}

impl Library {
    /// Opens a library compiled ahead of time and linked into this process (`<name>_image` of
    /// an object made by `ogham build FILE -o NAME.o`); its kernels then run as that code.
    ///
    /// # Safety
    /// `image` is the image of such an object, whose code stays loaded while the library lives.
    pub unsafe fn from_image(image: &Image) -> Result<Library, String> {
        Ok(Library {
            // SAFETY: the caller's contract.
            code: Code::Packed(unsafe { aot::open(image) }?),
        })
    }

    /// The entry points and their signatures, in source order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Signature)> {
        let entries: Vec<(&str, &Signature)> = match &self.code {
            #[cfg(feature = "jit")]
            Code::Program { executable, .. } => executable
                .program()
                .functions
                .iter()
                .map(|f| (f.name.as_str(), &f.signature))
                .collect(),
            Code::Packed(packed) => packed.entries().collect(),
        };
        entries.into_iter()
    }

    /// The doc comments of the entry points that have one, by name.
    pub fn docs(&self) -> &BTreeMap<String, String> {
        match &self.code {
            #[cfg(feature = "jit")]
            Code::Program { docs, .. } => docs,
            Code::Packed(packed) => packed.docs(),
        }
    }

    /// The doc comment (`-- |` lines) of entry point `entry`, if it has one.
    pub fn doc(&self, entry: &str) -> Option<&str> {
        self.docs().get(entry).map(String::as_str)
    }

    /// The program's tunable thresholds.
    pub fn thresholds(&self) -> &[Threshold] {
        match &self.code {
            #[cfg(feature = "jit")]
            Code::Program { executable, .. } => &executable.program().thresholds,
            Code::Packed(packed) => packed.thresholds(),
        }
    }

    /// Runs entry point `entry` on the CPU backend (thresholds at their CPU defaults).
    pub fn call(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, Box<Diagnostic>> {
        self.call_tuned(entry, args, &Thresholds::default())
    }

    /// Runs entry point `entry` with the given thresholds (see `ogham_ir::kir::tuning`).
    pub fn call_tuned(
        &self,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        match &self.code {
            #[cfg(feature = "jit")]
            Code::Program { executable, .. } => executable.call(entry, args, thresholds),
            Code::Packed(packed) => packed.call(entry, args, thresholds),
        }
    }

    /// A diagnostic of this library's program, rendered with its source lines.
    pub fn render(&self, diagnostic: &Diagnostic) -> String {
        render(self.sources(), std::slice::from_ref(diagnostic))
    }

    /// The whole kernel-IR program; `None` for a packed library (see [`Packed::program`]).
    pub fn program(&self) -> Option<&Program> {
        match &self.code {
            #[cfg(feature = "jit")]
            Code::Program { executable, .. } => Some(executable.program()),
            Code::Packed(_) => None,
        }
    }

    pub fn sources(&self) -> &SourceMap {
        match &self.code {
            #[cfg(feature = "jit")]
            Code::Program { sources, .. } => sources,
            Code::Packed(packed) => packed.sources(),
        }
    }
}
