//! Programs read from files are untrusted input (a `.ogl` library, an entry point of a packed
//! library: the disk cache's programs, ahead-of-time objects): [`check_untrusted`] checks one
//! before any of it runs, in full.
//!
//! The compiled code omits the bounds checks of indices that the IR proves in range and of
//! statements inside `#[unsafe]` definitions (`ogham_compiler::back::lower::bounds`), so the
//! check runs the verifier with every size compared exactly (`ogham_ir::verify::verify_exact`:
//! the sizes the proofs rely on are the sizes the values have), checks each entry point's flat
//! parameters and results against its signature (the types callers' arguments are checked
//! against), every source location against the embedded sources, and accepts an unchecked range
//! only where it is the range of an `#[unsafe]` definition in the embedded sources (found by the
//! compiler's own front end on the re-parsed source, `ogham_compiler::back::lower::
//! unsafe_ranges`, which the code generator that will compile the program provides,
//! [`crate::cpu::CpuCodegen::unsafe_ranges`]; an entry point of an ahead-of-time image has
//! none: its kernels are compiled already and the IR evaluator checks every index). What is then
//! left to a library is what its sources say: the code of its `#[unsafe]` definitions, which can
//! read and write out of bounds, and statements located inside them (`docs/compiler.md`,
//! "Loading a library").

use crate::boundary::BoundaryType;
use crate::cpu::Codegen;
use ogham_ir::kir::Program;
use ogham_ir::source::{SourceMap, Span};
use ogham_ir::traverse::{Visitor, walk};
use ogham_ir::verify::verify_exact;
use ogham_ir::{Form, Function, Stmt, SubExp, Type};
use std::collections::BTreeMap;

/// Checks kernel-IR `program`, read from a file with the embedded `sources` (a `.ogl` library,
/// an entry point of a packed library), before any of it runs: the exact verifier, the entry
/// points against their signatures, the source locations against `sources`, and the unchecked
/// ranges against the `#[unsafe]` definitions of `sources` when `codegen` is to compile it
/// (see the module header). Returns every violation found.
pub(crate) fn check_untrusted(
    program: &Program,
    sources: &SourceMap,
    codegen: Option<Codegen>,
) -> Result<(), Vec<String>> {
    verify_exact(program)?;
    let mut errors = Vec::new();
    for f in &program.functions {
        if let Err(e) = check_signature(f) {
            errors.push(format!("{}: {e}", f.name));
        }
        let mut locations = Locations { sources, bad: None };
        locations.check(f.loc);
        walk(&f.body, &mut locations);
        if let Some(span) = locations.bad {
            errors.push(format!(
                "{}: the location {} is not in the sources",
                f.name,
                show(span)
            ));
        }
    }
    match program.unchecked.iter().find(|&&r| !inside(sources, r)) {
        Some(&r) => errors.push(format!(
            "the unchecked range {} is not in the sources",
            show(r)
        )),
        None => {
            if let Some(codegen) = codegen {
                errors.extend(check_unchecked(&program.unchecked, sources, codegen));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `span` as `file F, bytes S..E` (for a span that may be outside the sources).
fn show(span: Span) -> String {
    format!("file {}, bytes {}..{}", span.file.0, span.start, span.end)
}

/// Whether `span` is a range of characters of one of `sources`' files.
fn inside(sources: &SourceMap, span: Span) -> bool {
    sources
        .files()
        .nth(span.file.0 as usize)
        .is_some_and(|(_, file)| {
            span.start <= span.end
                && file.text.is_char_boundary(span.start as usize)
                && file.text.is_char_boundary(span.end as usize)
        })
}

/// Finds a location outside the sources (a file that is not there, a range past its end or
/// not on character boundaries), which messages could not show; the default location (none)
/// is accepted.
struct Locations<'s> {
    sources: &'s SourceMap,
    bad: Option<Span>,
}

impl Locations<'_> {
    fn check(&mut self, span: Span) {
        if span != Span::default() && !inside(self.sources, span) && self.bad.is_none() {
            self.bad = Some(span);
        }
    }
}

impl<'b> Visitor<'b> for Locations<'_> {
    fn stmt<H: Form>(&mut self, stmt: &'b Stmt<H>) {
        self.check(stmt.loc);
    }
}

/// Whether the flat parameters and results of `f` are its signature's: the components of each
/// parameter's and result's boundary type in order, with the same element types and ranks, and
/// parameters' sizes the signature's: a constant is that constant, and a size parameter (never
/// a value parameter, which the call would bind twice) stands for one size of the signature.
fn check_signature<F: Form>(f: &Function<F>) -> Result<(), String> {
    let flat = |types: &mut dyn Iterator<Item = &ogham_ir::types::Type>| {
        let mut out = Vec::new();
        for t in types {
            let b = BoundaryType::of(t)?;
            out.extend(b.components().into_iter().cloned());
        }
        Ok::<_, String>(out)
    };
    let params = flat(&mut f.signature.params.iter().map(|(_, t)| t))?;
    let results = flat(&mut f.signature.results.iter())?;
    if params.len() != f.params.len() {
        return Err(format!(
            "{} parameters for a signature of {}",
            f.params.len(),
            params.len()
        ));
    }
    if results.len() != f.body.result.len() {
        return Err(format!(
            "{} results for a signature of {}",
            f.body.result.len(),
            results.len()
        ));
    }
    let value_params: Vec<ogham_ir::VarId> = f.params.iter().map(|p| p.var).collect();
    let mut sizes: Vec<(ogham_ir::types::Size, SubExp)> = Vec::new();
    for (i, (p, expected)) in f.params.iter().zip(&params).enumerate() {
        let actual = f.ty(p.var);
        if !same_kind(expected, actual) {
            return Err(format!("parameter {i} is not a {expected}"));
        }
        let BoundaryType::Array { dims, .. } = expected else {
            continue;
        };
        for (size, &dim) in dims.iter().zip(actual.shape()) {
            use ogham_ir::types::Size;
            let ok = match (size, dim) {
                (Size::Const(c), SubExp::Const(d)) => SubExp::i64(*c as i64) == SubExp::Const(d),
                (Size::Var(_) | Size::Unknown(_), SubExp::Var(v)) => {
                    // A size parameter stands for one size of the signature (a name, or an
                    // unknown size's number), or the call would require sizes to agree that
                    // the signature lets differ.
                    let taken = sizes.iter().any(|(s, d)| *d == dim && s != size);
                    !value_params.contains(&v) && !taken
                }
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "parameter {i} has a size that is not its signature's"
                ));
            }
            sizes.push((size.clone(), dim));
        }
    }
    for (i, (&r, expected)) in f.body.result.iter().zip(&results).enumerate() {
        if !same_kind(expected, &f.subexp_type(r)) {
            return Err(format!("result {i} is not a {expected}"));
        }
    }
    Ok(())
}

/// Whether IR type `t` has the element type and rank of boundary type `b` (a scalar or an
/// array).
fn same_kind(b: &BoundaryType, t: &Type) -> bool {
    match b {
        BoundaryType::Scalar(p) => *t == Type::Prim(*p),
        BoundaryType::Array { elem, dims } => t.elem() == *elem && t.rank() == dims.len(),
        BoundaryType::Tuple(_) => false,
    }
}

/// The unchecked ranges that are not the range of an `#[unsafe]` definition in the embedded
/// sources (each source file that has one is parsed again by `codegen`, as the compiler parsed
/// it).
fn check_unchecked(unchecked: &[Span], sources: &SourceMap, codegen: Codegen) -> Vec<String> {
    let mut parsed: BTreeMap<ogham_ir::source::FileId, Vec<Span>> = BTreeMap::new();
    let mut errors = Vec::new();
    for &r in unchecked {
        let allowed = parsed
            .entry(r.file)
            .or_insert_with(|| codegen.unsafe_ranges(r.file, &sources.get(r.file).text));
        if !allowed.contains(&r) {
            errors.push(format!(
                "the unchecked range {}..{} of {} is not an `#[unsafe]` definition",
                r.start,
                r.end,
                sources.get(r.file).name
            ));
        }
    }
    errors
}
