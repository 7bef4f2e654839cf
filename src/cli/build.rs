//! `ogham build`: compiles a file into a library (`.ogl`, JSON) or, for an output ending in
//! `.o`, an ahead-of-time object with its C header and `ogham.h`.
//!
//! Invariants: the files are written through one [`Staged`] commit, so a failed build leaves
//! none of them half-written.

use crate::{Failure, load, out, signature};
use ogham::Backend;
use ogham::atomic::Staged;
use ogham::codegen::cpu::CPU;
use ogham_compiler::pipeline;
use ogham_ir::diag::emit_to_stderr;
use ogham_runtime::cpu::aot;
use ogham_runtime::library::Library;
use std::path::{Path, PathBuf};

/// The directory of the C interface's shared library (`libogham_c.so`) when it is next to this
/// executable (both built into the same `target/<profile>`).
fn c_library_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!(
        "{}ogham_c{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    dir.join(name).is_file().then(|| dir.to_path_buf())
}

pub(crate) fn build(file: &Path, output: Option<PathBuf>) -> Result<(), Failure> {
    let fe = load(file)?;
    let program = fe.compile_kernel(pipeline::Options::KERNEL).map_err(|d| {
        emit_to_stderr(&fe.sources, &[*d]);
        Failure::Reported
    })?;
    let warnings: Vec<_> = ogham::trace::compiled_warning(&program, Backend::Cpu)
        .into_iter()
        .collect();
    emit_to_stderr(&fe.sources, &warnings);
    let output = output.unwrap_or_else(|| file.with_extension("ogl"));
    let entries: Vec<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    let library = Library::new(fe.sources.clone(), program, CPU).with_docs(fe.entry_docs());
    if output.extension().is_some_and(|e| e == "o") {
        let name = symbol_name(&output);
        let object = library.object(&name)?;
        let header = output.with_extension("h");
        let signatures: Vec<String> = fe.checked.entries.iter().map(signature).collect();
        let origin = file.display().to_string();
        let absolute = std::path::absolute(&output).unwrap_or_else(|_| output.clone());
        let build_line = aot::build_line(&absolute, c_library_dir().as_deref());
        let interface = output.with_file_name("ogham.h");
        let mut staged = Staged::new();
        staged.write(&output, &object)?;
        staged.write(
            &header,
            aot::c_header(&name, &origin, &signatures, &build_line).as_bytes(),
        )?;
        staged.write(&interface, aot::OGHAM_H.as_bytes())?;
        staged.commit()?;
        outln!(
            "wrote {}, {} and {} (entry points: {}; open with ogham_open_image(&{name}_image))\n\
             build a program with: {build_line}",
            output.display(),
            header.display(),
            interface.display(),
            entries.join(", ")
        );
        return Ok(());
    }
    let mut staged = Staged::new();
    staged.write(&output, library.to_json()?.as_bytes())?;
    staged.commit()?;
    outln!(
        "wrote {} (entry points: {})",
        output.display(),
        entries.join(", ")
    );
    Ok(())
}

/// The C name of an object file's library: its file stem, other characters than letters,
/// digits and `_` replaced by `_` (and `_` before a leading digit).
fn symbol_name(output: &Path) -> String {
    let stem = output.file_stem().map(|s| s.to_string_lossy().to_string());
    let mut name: String = stem
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    name
}
