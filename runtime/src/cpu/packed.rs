//! Packed libraries: a compiled library laid out so that opening it reads only what every call
//! needs, and each entry point's kernel IR is read, checked and decoded at its first call. The
//! on-disk cache of `ogham` (`src/cache/disk.rs`) and ahead-of-time objects (`cpu::aot`) hold
//! their programs in this form.
//!
//! Layout ([`pack`]): two little-endian `u64`s — the length of the skeleton's JSON text and its
//! hash ([`crate::content_hash`]) — then the skeleton (sources, doc comments, thresholds,
//! unchecked ranges, and per entry point its name, signature and where its texts are), then the
//! entry points' texts. Each entry point has two texts, each with its hash in the skeleton: its
//! kernel IR (a `ogham_ir::Function` in postcard's binary encoding of its serde form, which
//! decodes 4.6 times faster than JSON: STL's `main_f64` took 34.7 M instructions, about 8 ms,
//! as JSON) and what the executor that made the library needs besides (an object's kernel
//! table; empty in the disk cache). The encoding is tied to the build: objects and cache entries of another build are
//! refused or recompiled before their texts are read (`cpu::aot`, `ogham::cache`).
//!
//! Opening ([`Packed::open`]) checks the skeleton's hash, parses it and checks that every text
//! lies inside the bytes; an entry point's first call checks its texts' hashes, decodes its IR
//! into a program of that entry point alone, checks that program as untrusted input
//! (`cpu::untrusted::check_untrusted`, as a `.ogl` file's: the hashes find damage, not edits) and makes
//! its executable with the function the opener gave. A damaged or edited text is an error of
//! the calls that need it, never a panic.

use super::untrusted::check_untrusted;
use super::{Codegen, Executable};
use crate::error::{R_INTERNAL, error};
use crate::ireval::Thresholds;
use crate::value::Value;
use ogham_ir::Signature;
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::Program;
use ogham_ir::kir::Threshold;
use ogham_ir::source::{SourceMap, Span};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The length of the two `u64`s before the skeleton.
const HEADER: usize = 16;

/// What a packed library holds besides its entry points' texts: everything needed before an
/// entry point runs.
#[derive(Serialize, Deserialize)]
struct Skeleton {
    sources: SourceMap,
    docs: BTreeMap<String, String>,
    thresholds: Vec<Threshold>,
    unchecked: Vec<Span>,
    /// The functions (entry points) in order.
    functions: Vec<FunctionAt>,
}

#[derive(Serialize, Deserialize)]
struct FunctionAt {
    name: String,
    signature: Signature,
    /// Its kernel IR (postcard).
    ir: Text,
    /// The executor's text for it.
    code: Text,
}

/// Where a text is among the entry points' texts, and its hash.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Text {
    start: u64,
    len: u64,
    hash: u64,
}

/// The packed form of the library of `program` compiled from `sources`, with its entry points'
/// `docs`; `code[f]` is the executor's text for function `f` (none: empty texts).
pub fn pack(
    sources: &SourceMap,
    docs: &BTreeMap<String, String>,
    program: &Program,
    code: Option<&[String]>,
) -> Result<Vec<u8>, String> {
    let mut texts = Vec::new();
    let mut add = |bytes: &[u8]| {
        let text = Text {
            start: texts.len() as u64,
            len: bytes.len() as u64,
            hash: crate::content_hash(bytes),
        };
        texts.extend_from_slice(bytes);
        text
    };
    let mut functions = Vec::new();
    for (i, f) in program.functions.iter().enumerate() {
        let ir =
            postcard::to_allocvec(f).map_err(|e| format!("cannot encode `{}`: {e}", f.name))?;
        let code = code.and_then(|c| c.get(i)).map_or("", String::as_str);
        functions.push(FunctionAt {
            name: f.name.clone(),
            signature: f.signature.clone(),
            ir: add(&ir),
            code: add(code.as_bytes()),
        });
    }
    let skeleton = Skeleton {
        sources: sources.clone(),
        docs: docs.clone(),
        thresholds: program.thresholds.clone(),
        unchecked: program.unchecked.clone(),
        functions,
    };
    let skeleton = serde_json::to_vec(&skeleton).map_err(|e| format!("cannot encode: {e}"))?;
    let mut bytes = Vec::with_capacity(HEADER + skeleton.len() + texts.len());
    bytes.extend((skeleton.len() as u64).to_le_bytes());
    bytes.extend(crate::content_hash(&skeleton).to_le_bytes());
    bytes.extend(skeleton);
    bytes.extend(texts);
    Ok(bytes)
}

/// How an opener makes the executable of a program of one entry point from that program and
/// the executor's text for it.
pub type MakeExecutable = Box<dyn Fn(Program, &str) -> Result<Executable, String> + Send + Sync>;

/// An opened packed library. `Send + Sync`: calls may come from any thread.
pub struct Packed {
    skeleton: Skeleton,
    /// The bytes; the packed library starts at `start`, the entry points' texts at `texts_at`.
    bytes: Cow<'static, [u8]>,
    texts_at: usize,
    /// The code generator that compiles the entry points' kernels, if any.
    codegen: Option<Codegen>,
    make: MakeExecutable,
    /// Per function: the executable of a program of that function alone.
    executables: Vec<OnceLock<Result<Executable, String>>>,
}

impl Packed {
    /// The packed library in `bytes` from `start` on (made by [`pack`]), whose entry points'
    /// executables `make` makes, with their kernels compiled by `codegen` (`None`: the code is
    /// made already, as in an ahead-of-time image); `Err` says why the bytes are not one.
    pub fn open(
        bytes: Cow<'static, [u8]>,
        start: usize,
        codegen: Option<Codegen>,
        make: MakeExecutable,
    ) -> Result<Packed, String> {
        let packed = bytes.get(start..).unwrap_or_default();
        let field = |i: usize| {
            packed
                .get(8 * i..8 * i + 8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        };
        let (Some(len), Some(hash)) = (field(0), field(1)) else {
            return Err("truncated".to_string());
        };
        let skeleton = usize::try_from(len)
            .ok()
            .and_then(|len| packed.get(HEADER..HEADER.checked_add(len)?))
            .ok_or("truncated")?;
        if crate::content_hash(skeleton) != hash {
            return Err("its contents do not match their hash".to_string());
        }
        // Text rather than bytes: the IR's deserializer is then the one `.ogl` files use.
        let skeleton = std::str::from_utf8(skeleton).map_err(|e| e.to_string())?;
        let skeleton: Skeleton = serde_json::from_str(skeleton).map_err(|e| e.to_string())?;
        let texts_at = start + HEADER + len as usize;
        let texts_len = (bytes.len() - texts_at) as u64;
        let inside = |t: &Text| {
            t.start
                .checked_add(t.len)
                .is_some_and(|end| end <= texts_len)
        };
        if !skeleton
            .functions
            .iter()
            .all(|f| inside(&f.ir) && inside(&f.code))
        {
            return Err("an entry point's text outside the bytes".to_string());
        }
        Ok(Packed {
            executables: skeleton.functions.iter().map(|_| OnceLock::new()).collect(),
            skeleton,
            bytes,
            texts_at,
            codegen,
            make,
        })
    }

    pub fn sources(&self) -> &SourceMap {
        &self.skeleton.sources
    }

    pub fn docs(&self) -> &BTreeMap<String, String> {
        &self.skeleton.docs
    }

    /// The entry points and their signatures, in source order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Signature)> {
        self.skeleton
            .functions
            .iter()
            .map(|f| (f.name.as_str(), &f.signature))
    }

    pub fn thresholds(&self) -> &[Threshold] {
        &self.skeleton.thresholds
    }

    /// The kernel-IR program of entry point `entry` alone, once a call has decoded it.
    pub fn program(&self, entry: &str) -> Option<&Program> {
        let i = self.position(entry)?;
        match self.executables[i].get()? {
            Ok(executable) => Some(executable.program()),
            Err(_) => None,
        }
    }

    fn position(&self, entry: &str) -> Option<usize> {
        self.skeleton.functions.iter().position(|f| f.name == entry)
    }

    /// The bytes of the text at `at`, checked against its hash.
    fn text(&self, at: &Text, what: &str) -> Result<&[u8], String> {
        let start = self.texts_at + at.start as usize;
        let bytes = &self.bytes[start..start + at.len as usize];
        if crate::content_hash(bytes) == at.hash {
            Ok(bytes)
        } else {
            Err(format!("{what} is damaged (it does not match its hash)"))
        }
    }

    /// The executable of function `i` alone.
    fn executable(&self, i: usize) -> Result<Executable, String> {
        let at = &self.skeleton.functions[i];
        let what = format!("the library's entry point `{}`", at.name);
        let function = postcard::from_bytes(self.text(&at.ir, &what)?)
            .map_err(|e| format!("{what} cannot be read: {e}"))?;
        let program = Program {
            functions: vec![function],
            thresholds: self.skeleton.thresholds.clone(),
            unchecked: self.skeleton.unchecked.clone(),
        };
        check_untrusted(&program, &self.skeleton.sources, self.codegen)
            .map_err(|errors| format!("{what} is not a valid program: {}", errors.join("; ")))?;
        let code = std::str::from_utf8(self.text(&at.code, &what)?)
            .map_err(|_| format!("{what} is damaged (its code is not text)"))?;
        (self.make)(program, code)
    }

    /// Runs entry point `entry` (see `library::Library::call_tuned`).
    pub fn call(
        &self,
        entry: &str,
        args: Vec<Value>,
        thresholds: &Thresholds,
    ) -> Result<Vec<Value>, Box<Diagnostic>> {
        let Some(i) = self.position(entry) else {
            return Err(crate::boundary::no_entry(
                entry,
                self.entries().map(|(name, _)| name),
            ));
        };
        match self.executables[i].get_or_init(|| self.executable(i)) {
            Ok(executable) => executable.call(entry, args, thresholds),
            Err(message) => Err(error(R_INTERNAL, Span::default(), message.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        let text = "entry main [n_0] (xs_1: [n_0]f32) : [n_0]f32 =\n  in (xs_1)\n";
        ogham_ir::parse::parse_program(text).expect("an IR program")
    }

    fn open(bytes: Vec<u8>) -> Result<Packed, String> {
        Packed::open(
            Cow::Owned(bytes),
            3,
            None,
            Box::new(|program, code| {
                assert_eq!(code, "code of main");
                // No kernel statements, so no code: as an ahead-of-time image opens it.
                Executable::with_kernels(program, Vec::new(), Box::new(()))
            }),
        )
    }

    #[test]
    fn a_packed_library_opens_and_damage_is_found() {
        let program = program();
        let code = ["code of main".to_string()];
        let mut bytes = b"pre".to_vec();
        bytes.extend(
            pack(
                &SourceMap::default(),
                &BTreeMap::new(),
                &program,
                Some(&code),
            )
            .unwrap(),
        );
        let packed = open(bytes.clone()).expect("opens");
        assert_eq!(
            packed.entries().map(|(n, _)| n).collect::<Vec<_>>(),
            ["main"]
        );
        assert!(
            packed.program("main").is_none(),
            "not decoded before its first call"
        );
        let xs = crate::value::Array::from_f32(vec![2], vec![1.0, 2.0]).unwrap();
        let out = packed.call(
            "main",
            vec![Value::Array(xs.clone())],
            &Thresholds::default(),
        );
        assert_eq!(out.expect("runs"), [Value::Array(xs)]);
        assert!(packed.program("main").is_some());

        // A changed byte in the skeleton, a truncation: not opened.
        let mut damaged = bytes.clone();
        damaged[3 + HEADER + 2] ^= 1;
        assert!(open(damaged).is_err());
        assert!(open(bytes[..bytes.len() / 2].to_vec()).is_err());
        assert!(open(bytes[..10].to_vec()).is_err());
        // A changed byte in the entry point's text: opened, the call fails.
        let mut damaged = bytes.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        let packed = open(damaged).expect("the skeleton is intact");
        let err = packed
            .call("main", vec![], &Thresholds::default())
            .unwrap_err();
        assert!(err.message.contains("damaged"), "{}", err.message);
    }

    /// An entry point whose IR passes the hashes but not the checks of untrusted programs (an
    /// `if` declared `[n]f32` returning an array of size `m`, which a kernel then reads at the
    /// indices of `n`) is refused at its first call.
    #[test]
    fn a_packed_entry_point_is_verified_before_it_runs() {
        let text = "entry main [n_0, m_1] (xs_2: [n_0]f32, ys_3: [m_1]f32) : [n_0]f32 =\n\
                    \x20 let c_4: bool = n_0 < m_1\n\
                    \x20 let zs_5: [n_0]f32 = if c_4 : [n_0]f32 then {\n\
                    \x20   in ys_3\n\
                    \x20 } else {\n\
                    \x20   in ys_3\n\
                    \x20 }\n\
                    \x20 in zs_5\n";
        let program: Program = ogham_ir::parse::parse_program(text).expect("an IR program");
        let bytes = pack(&SourceMap::default(), &BTreeMap::new(), &program, None).unwrap();
        let packed = Packed::open(
            Cow::Owned(bytes),
            0,
            None,
            Box::new(|program, _| Executable::with_kernels(program, Vec::new(), Box::new(()))),
        )
        .expect("the skeleton is intact");
        let xs = crate::value::Array::from_f32(vec![3], vec![1.0; 3]).unwrap();
        let ys = crate::value::Array::from_f32(vec![1], vec![2.0]).unwrap();
        let args = vec![Value::Array(xs), Value::Array(ys)];
        let err = packed
            .call("main", args, &Thresholds::default())
            .unwrap_err();
        assert!(
            err.message.contains("is not a valid program")
                && err.message.contains("result 0 of the then branch"),
            "{}",
            err.message
        );
    }
}
