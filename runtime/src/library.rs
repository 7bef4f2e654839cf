//! Compiled libraries: a program compiled once (`ogham build FILE -o LIB.ogl`) and run later on
//! the CPU backend without the compiler's front and middle end.
//!
//! ```no_run
//! use ogham_runtime::library::Library;
//! use ogham_runtime::value::{Array, Value};
//! let lib = Library::load("bfast.ogl".as_ref())?;
//! let xs = Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).unwrap();
//! match lib.call("main", vec![Value::Array(xs)]) {
//!     Ok(outputs) => println!("{outputs:?}"),
//!     Err(e) => eprintln!("{}", lib.render(&e)),
//! }
//! # Ok::<(), String>(())
//! ```
//!
//! The file is JSON: a format tag and version, the program's source files (for error messages
//! with source locations) and its kernel IR (`ogham_compiler::ir::Program`, after flattening and
//! optimisation). Loading verifies the IR, so a damaged or hand-edited file is rejected with an
//! error instead of misbehaving. Kernels are JIT-compiled at each call (milliseconds).
//!
//! A library compiled ahead of time (`ogham build FILE -o NAME.o`, `cpu::aot`) is an object
//! file that carries the same JSON and the kernels' machine code; linked into a program, it is
//! opened with [`Library::from_image`] and runs without the JIT.

use crate::cpu::aot::{self, Image, Precompiled};
use crate::ireval::Thresholds;
use crate::value::Value;
use ogham_compiler::diag::{Diagnostic, render};
use ogham_compiler::ir::verify::{Form, verify};
use ogham_compiler::ir::{Program, Signature};
use ogham_compiler::source::SourceMap;
use serde::{Deserialize, Serialize};
use std::path::Path;

const FORMAT: &str = "ogham-library";
/// Bumped whenever the IR or this file's layout changes incompatibly.
pub const VERSION: u32 = 1;

/// A compiled program.
#[derive(Serialize, Deserialize)]
pub struct Library {
    format: String,
    version: u32,
    sources: SourceMap,
    program: Program,
    /// The kernels' machine code when the library was compiled ahead of time.
    #[serde(skip)]
    precompiled: Option<Precompiled>,
}

impl Library {
    /// A library of kernel-IR `program` compiled from `sources`.
    pub fn new(sources: SourceMap, program: Program) -> Library {
        Library {
            format: FORMAT.to_string(),
            version: VERSION,
            sources,
            program,
            precompiled: None,
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string(self).map_err(|e| format!("cannot encode: {e}"))?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    pub fn load(path: &Path) -> Result<Library, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Library::from_json(&text, &path.display().to_string())
    }

    /// Opens a library compiled ahead of time and linked into this process (`<name>_image` of
    /// an object made by `ogham build FILE -o NAME.o`); its kernels then run as that code.
    ///
    /// # Safety
    /// `image` is the image of such an object, whose code stays loaded while the library lives.
    pub unsafe fn from_image(image: &Image) -> Result<Library, String> {
        // SAFETY: the caller's contract.
        let text = unsafe { aot::library_text(image) }?;
        let mut library = Library::from_json(text, "the object's library")?;
        // SAFETY: the caller's contract.
        library.precompiled = Some(unsafe { aot::entries(image, &library.program) }?);
        Ok(library)
    }

    /// The library of JSON `text` read from `origin` (a file name, for messages).
    fn from_json(text: &str, origin: &str) -> Result<Library, String> {
        let lib: Library = serde_json::from_str(text)
            .map_err(|e| format!("{origin} is not an Ogham library: {e}"))?;
        if lib.format != FORMAT || lib.version != VERSION {
            return Err(format!(
                "{origin} is a `{}` file of version {}; this runtime reads `{FORMAT}` version \
                 {VERSION} (rebuild it with `ogham build`)",
                lib.format, lib.version
            ));
        }
        verify(&lib.program, Form::Kernel).map_err(|errors| {
            format!(
                "{origin} holds an invalid program ({}); rebuild it with `ogham build`",
                errors.join("; ")
            )
        })?;
        Ok(lib)
    }

    /// This library as an object file whose symbol `<name>_image` is its image for
    /// [`Library::from_image`]: the JSON of a `.ogl` file and the kernels compiled for this
    /// machine's CPU.
    pub fn object(&self, name: &str) -> Result<Vec<u8>, String> {
        let text = serde_json::to_string(self).map_err(|e| format!("cannot encode: {e}"))?;
        aot::object(&text, &self.program, name)
    }

    /// The entry points and their signatures.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Signature)> {
        self.program
            .functions
            .iter()
            .map(|f| (f.name.as_str(), &f.signature))
    }

    /// Runs entry point `entry` on the CPU backend (thresholds at their CPU defaults).
    pub fn call(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, Box<Diagnostic>> {
        self.call_tuned(entry, args, &Thresholds::default())
    }

    /// Runs entry point `entry` with the given thresholds (see `ogham_compiler::kir::tuning`).
    pub fn call_tuned(
        &self,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        crate::cpu::run_kernels(
            &self.program,
            self.precompiled.as_ref(),
            entry,
            args,
            thresholds,
        )
    }

    /// A diagnostic of this library's program, rendered with its source lines.
    pub fn render(&self, diagnostic: &Diagnostic) -> String {
        render(&self.sources, std::slice::from_ref(diagnostic))
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }
}
