//! `ogham check` and `ogham run`: type-checking a file, running an entry point on arguments
//! from the command line or `.npy`/text files (interpreted, compiled, or from a library built
//! by `ogham build`), autotuning thresholds, and writing the outputs.
//!
//! Invariants: errors in the program or its data are reported (rendered diagnostics) and
//! returned as [`Failure::Reported`]; output files are written through [`Staged`] commits.

use crate::{Failure, START, load, out, signature};
use ogham::args::{self, Arg, ArgValue};
use ogham::atomic::Staged;
use ogham::codegen::cpu::CPU;
use ogham::{Backend, cache};
use ogham_ir::diag::emit_to_stderr;
use ogham_ir::types::Type;
use ogham_runtime::library::Library;
use ogham_runtime::{npy, text, trace};
use std::path::{Path, PathBuf};

pub(crate) fn check(file: &Path) -> Result<(), Failure> {
    let fe = load(file)?;
    let entries = &fe.checked.entries;
    let plural = if entries.len() == 1 { "" } else { "s" };
    outln!("ok: {} entry point{plural}", entries.len());
    for e in entries {
        outln!("  {}", signature(e));
    }
    Ok(())
}

/// How `ogham run` runs a program.
pub(crate) struct RunOptions<'a> {
    pub(crate) backend: Backend,
    pub(crate) tuning: Option<&'a Path>,
    pub(crate) no_cache: bool,
    /// `--pixel`: the coordinates of the one pixel to run (`ogham::pixel`).
    pub(crate) pixel: Option<&'a [usize]>,
}

/// `ogham run FILE`: compiled (or taken from the cache of compiled programs, see
/// `ogham::cache`) and run; traces go to standard error.
pub(crate) fn run(
    file: &Path,
    entry: Option<&str>,
    how: RunOptions,
    output_dir: Option<&Path>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let RunOptions {
        backend,
        tuning,
        no_cache,
        pixel,
    } = how;
    match backend {
        Backend::Cpu => ogham_runtime::cpu::start_workers(),
        Backend::Cuda => ogham_runtime::cuda::start_context(),
        _ => {}
    }
    if file.extension().is_some_and(|e| e == "ogl") {
        if pixel.is_some() {
            return Err(Failure::Message(
                "--pixel needs the program's source (a .og file), not a library".to_string(),
            ));
        }
        return run_library(file, entry, backend, output_dir, tuning, raw_args);
    }
    let options = cache::Options {
        backend,
        tuning: tuning.map(Path::to_path_buf),
    };
    let disk = if no_cache {
        cache::Disk::Off
    } else {
        cache::Disk::from_env()
    };
    let compiled = cache::compile_in(cache::Source::File(file), &options, &disk).map_err(|e| {
        e.emit_to_stderr();
        Failure::Reported
    })?;
    emit_to_stderr(compiled.sources(), compiled.warnings());
    let entry = &chosen_entry(entry, compiled.entries().iter().map(|e| e.name.as_str()))?;
    let info = compiled.entry(entry)?;
    let mut args = args::bind_params(&info.name, &info.params, command_line_args(raw_args)?)?;
    if let Some(pixel) = pixel {
        args = ogham::pixel::pixel_args(info, args, pixel)?;
    }
    if std::env::var_os("OGHAM_PROFILE").is_some()
        && let Some(start) = START.get()
    {
        eprintln!(
            "ogham-profile: program compiled (or taken from the cache) and arguments read {:.3} ms \
             after start",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    let sink = trace::to_stderr(compiled.sources().clone());
    let outputs = trace::with_sink(Some(sink), || compiled.call(entry, args)).map_err(|diag| {
        emit_to_stderr(compiled.sources(), &[*diag]);
        Failure::Reported
    })?;
    if std::env::var_os("OGHAM_PROFILE").is_some() {
        for line in compiled.kernel_origins(entry) {
            eprintln!("ogham-profile: kernel {line}");
        }
    }
    let results = (&info.results[..], &info.fields[..]);
    write_outputs(results, outputs, output_dir)
}

/// Why `--check-laws` refuses another backend.
pub(crate) const LAWS_ON_INTERP: &str = "--check-laws runs on the interpreter (--backend interp)";

/// `ogham run --check-laws`: the interpreter, checking the laws of the operators it applies.
pub(crate) fn check_laws_run(
    file: &Path,
    entry: Option<&str>,
    output_dir: Option<&Path>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let fe = load(file)?;
    let entry = &chosen_entry(entry, fe.checked.entries.iter().map(|e| e.name.as_str()))?;
    let entry_point = fe.entry(entry)?;
    let args = args::bind_params(
        &entry_point.name,
        &entry_point.params,
        command_line_args(raw_args)?,
    )?;
    let sink = trace::to_stderr(fe.sources.clone());
    let (outputs, warnings) = trace::with_sink(Some(sink), || {
        ogham_interp::run_entry_checking_laws(&fe.sources, &fe.program, &fe.checked, entry, args)
    });
    emit_to_stderr(&fe.sources, &warnings);
    let outputs = outputs.map_err(|diag| {
        emit_to_stderr(&fe.sources, &[diag]);
        Failure::Reported
    })?;
    let results = (&entry_point.results[..], &entry_point.fields[..]);
    write_outputs(results, outputs, output_dir)
}

/// The entry point `--entry` names, or the default one of a program whose entry points are
/// `names` ([`ogham::default_entry`]).
fn chosen_entry<'a>(
    requested: Option<&str>,
    names: impl Iterator<Item = &'a str>,
) -> Result<String, Failure> {
    match requested {
        Some(name) => Ok(name.to_string()),
        None => ogham::default_entry(names).map_err(Failure::Message),
    }
}

/// The arguments given on the command line.
fn command_line_args(raw_args: &[String]) -> Result<Vec<Arg>, Failure> {
    let mut args = Vec::new();
    for raw in raw_args {
        args.extend(parse_arg(raw)?);
    }
    Ok(args)
}

pub(crate) fn autotune(
    file: &Path,
    entry: Option<&str>,
    backend: Backend,
    runs: usize,
    output: Option<PathBuf>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let options = cache::Options {
        backend,
        tuning: None,
    };
    let compiled = cache::compile(cache::Source::File(file), &options).map_err(|e| {
        e.emit_to_stderr();
        Failure::Reported
    })?;
    let entry = &chosen_entry(entry, compiled.entries().iter().map(|e| e.name.as_str()))?;
    let info = compiled.entry(entry)?;
    let args = args::bind_params(&info.name, &info.params, command_line_args(raw_args)?)?;
    let tuned = ogham::autotune::autotune(&compiled, entry, args, runs).map_err(|diag| {
        emit_to_stderr(compiled.sources(), &[*diag]);
        Failure::Reported
    })?;
    let path = output.unwrap_or_else(|| file.with_extension("tuning"));
    let mut staged = Staged::new();
    staged.write(&path, tuned.file().as_bytes())?;
    staged.commit()?;
    for c in &tuned.choices {
        outln!("{}={} (default {})", c.id, c.value, c.default);
    }
    for r in &tuned.rejected {
        eprintln!("warning: {r} changes the outputs; not used");
    }
    eprintln!(
        "wrote {}: {:.3} ms with the defaults, {:.3} ms tuned ({} backend)",
        path.display(),
        tuned.default_seconds * 1e3,
        tuned.tuned_seconds * 1e3,
        backend.name()
    );
    Ok(())
}

/// Prints the outputs of an entry point with `results` (the result types and the declared
/// field orders of record results), or saves them as `.npy` files in `output_dir` (all of them
/// or, when one cannot be written, none), named as [`ogham::results::output_files`] says, and
/// says which file holds which output.
fn write_outputs(
    (results, fields): (&[Type], &[Vec<String>]),
    outputs: Vec<ogham_runtime::value::Value>,
    output_dir: Option<&Path>,
) -> Result<(), Failure> {
    match output_dir {
        None => {
            for v in &ogham::output_components(outputs) {
                outln!("{v}");
            }
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!("cannot create the output directory {}: {e}", dir.display())
            })?;
            let mut staged = Staged::new();
            let mut written = Vec::new();
            for out in ogham::results::output_files(results, fields, outputs) {
                let path = dir.join(&out.file);
                let what = format!("output `{}`", out.name);
                let bytes = npy::encode(&out.value).map_err(|e| format!("{what}: {e}"))?;
                staged
                    .write(&path, &bytes)
                    .map_err(|e| format!("{what}: {e}"))?;
                written.push(format!(
                    "wrote {}: {} ({})",
                    path.display(),
                    out.name,
                    out.value.describe()
                ));
            }
            staged.commit()?;
            for line in written {
                eprintln!("{line}");
            }
        }
    }
    Ok(())
}

/// `ogham run LIB.ogl`: a compiled library on the CPU backend.
pub(crate) fn run_library(
    file: &Path,
    entry: Option<&str>,
    backend: Backend,
    output_dir: Option<&Path>,
    tuning: Option<&Path>,
    raw_args: &[String],
) -> Result<(), Failure> {
    let lib = Library::load(file, CPU)?;
    if !matches!(backend, Backend::Interp | Backend::Cpu) {
        return Err(Failure::Message(format!(
            "a compiled library runs on the CPU backend, not `{}`",
            backend.name()
        )));
    }
    let entry = &chosen_entry(entry, lib.entries().map(|(name, _)| name))?;
    let Some((_, signature)) = lib.entries().find(|(name, _)| name == entry) else {
        let names: Vec<&str> = lib.entries().map(|(n, _)| n).collect();
        return Err(Failure::Message(format!(
            "{} has no entry point `{entry}` (entry points: {})",
            file.display(),
            names.join(", ")
        )));
    };
    let args = args::bind_params(entry, &signature.params, command_line_args(raw_args)?)?;
    let mut thresholds = ogham_runtime::ireval::Thresholds::default();
    if let Some(path) = tuning {
        thresholds.named = ogham_ir::kir::tuning::read_tuning(path, lib.thresholds())
            .map_err(|e| Failure::Message(e.to_string()))?;
    }
    let outputs = lib.call_tuned(entry, args, &thresholds).map_err(|diag| {
        eprint!("{}", lib.render(&diag));
        Failure::Reported
    })?;
    let results = (&signature.results[..], &signature.fields[..]);
    write_outputs(results, outputs, output_dir)
}
/// One command-line argument: a `.npy` file, `@FILE` of textual values, or literal values.
fn parse_arg(raw: &str) -> Result<Vec<Arg>, String> {
    let is_flag = |s: &str| s.len() == 2 && s[1..].chars().all(|c| c.is_ascii_alphabetic());
    if raw.starts_with("--") || (raw.starts_with('-') && is_flag(raw)) {
        return Err(format!(
            "`{raw}` looks like an option: give options before the arguments"
        ));
    }
    if let Some(file) = raw.strip_prefix('@') {
        let text =
            std::fs::read_to_string(file).map_err(|e| format!("{file}: cannot read: {e}"))?;
        let values = text::parse(&text).map_err(|e| format!("{file}:{e}"))?;
        return Ok(values
            .into_iter()
            .enumerate()
            .map(|(i, v)| Arg {
                origin: format!("value {} of {file}", i + 1),
                value: ArgValue::Text(v),
            })
            .collect());
    }
    if raw.to_ascii_lowercase().ends_with(".npy") {
        let value = npy::read(Path::new(raw)).map_err(|e| e.to_string())?;
        return Ok(vec![Arg {
            origin: raw.to_string(),
            value: ArgValue::Data(value),
        }]);
    }
    let values = text::parse(raw).map_err(|e| format!("in the argument `{raw}`: {e}"))?;
    Ok(values
        .into_iter()
        .map(|v| Arg {
            origin: format!("`{raw}`"),
            value: ArgValue::Text(v),
        })
        .collect())
}
