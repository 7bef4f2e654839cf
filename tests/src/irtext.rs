//! The IR text round trip (`ogham_ir::parse`): a program printed, parsed back and
//! printed again must give the same text, after every pass of the pipeline. Used by
//! `tests/filetests.rs` over the corpus and by `tests/props.rs` over random programs.

use ogham::Frontend;
use ogham_compiler::pipeline::{self, Options};
use ogham_ir::Ir;

/// Prints `program`, parses the text back (in the same form) and prints it again: both texts
/// must be equal.
pub fn round_trip(program: &Ir) -> Result<(), String> {
    let text = program.print();
    let kernel = matches!(program, Ir::Kernel(_));
    let parsed = Ir::parse(&text, kernel).map_err(|e| format!("{e}\n{}", numbered(&text)))?;
    let again = parsed.print();
    if again == text {
        return Ok(());
    }
    let line = text
        .lines()
        .zip(again.lines())
        .position(|(a, b)| a != b)
        .map_or(text.lines().count().min(again.lines().count()), |k| k);
    Err(format!(
        "the text printed back differs from line {}:\n  printed:   {}\n  reprinted: {}",
        line + 1,
        text.lines().nth(line).unwrap_or("<end>"),
        again.lines().nth(line).unwrap_or("<end>")
    ))
}

/// Compiles `fe` to kernel IR, verifying after every pass, and round-trips the IR after each
/// pass. A program that does not compile is not an error here (the corpus checks it).
pub fn round_trip_every_pass(fe: &Frontend) -> Result<(), String> {
    let options = Options {
        verify: true,
        ..Options::KERNEL
    };
    let mut errors = Vec::new();
    let _ = pipeline::compile(
        &fe.sources,
        &fe.program,
        &fe.checked,
        options,
        &mut |pass, product| {
            if let Some(ir) = product.ir()
                && let Err(e) = round_trip(ir)
            {
                errors.push(format!("after `{pass}`: {e}"));
            }
        },
    );
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// The text with line numbers, for locating a parse error.
fn numbered(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("{:5} | {l}\n", i + 1))
        .collect()
}
