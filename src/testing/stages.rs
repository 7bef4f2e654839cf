//! The text a snapshot or a `filecheck` of a test block reads: the product of the pipeline at
//! the end of the stage, printed as `ogham dev --dump-after` prints it (core IR, kernel IR, the
//! `codegen-cpu` pass's CLIF, the `codegen-cuda` pass's kernels), and the kernels a
//! `snapshot { ... kernel = NAME }` keeps of it.
//!
//! Invariant: the backends print each kernel from a header line (`; kernel NAME` in CLIF,
//! `// kernel NAME (...)` in CUDA) to the next one's, which is what a selection cuts at.

use super::{Stage, compile_stage};
use crate::{Frontend, FrontendErrors};

/// The text of `stage` (not `diag`): the pipeline's product at its end, printed.
pub(super) fn stage_text(
    loaded: &Result<Frontend, FrontendErrors>,
    stage: Stage,
) -> Result<String, String> {
    Ok(compile_stage(loaded, stage)?.print())
}

/// The parts of a `clif` or `cuda` text for the kernels `names`, in that order (each from its
/// `; kernel name` or `// kernel name` line to the next kernel's, so a CUDA kernel keeps its
/// combine kernel), or an error naming the kernels there are. Other stages' text is whole.
pub(super) fn select_kernels(text: &str, stage: Stage, names: &[String]) -> Result<String, String> {
    let header = match stage {
        Stage::Clif => "; kernel ",
        Stage::Cuda => "// kernel ",
        _ => return Ok(text.to_string()),
    };
    let mut sections: Vec<(&str, String)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(header) {
            let kernel = rest.split([':', ' ']).next().unwrap_or(rest);
            sections.push((kernel, String::new()));
        }
        if let Some((_, text)) = sections.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut selected = String::new();
    for name in names {
        match sections.iter().find(|(k, _)| k == name) {
            Some((_, text)) => selected.push_str(text),
            None => {
                let known: Vec<&str> = sections.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "no kernel `{name}`; the kernels are {}",
                    known.join(" ")
                ));
            }
        }
    }
    Ok(selected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_cut_at_their_headers() {
        let cuda = "prelude\n// kernel a_k0 (thread level)\nk0\nk0_combine\n// kernel a_k1 (block level)\nk1\n";
        let names = |ns: &[&str]| ns.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let got = select_kernels(cuda, Stage::Cuda, &names(&["a_k1", "a_k0"])).unwrap();
        assert_eq!(
            got,
            "// kernel a_k1 (block level)\nk1\n// kernel a_k0 (thread level)\nk0\nk0_combine\n"
        );
        let clif = "; kernel a_k0\nf0\n; kernel a_k1: not compiled (why)\n";
        let got = select_kernels(clif, Stage::Clif, &names(&["a_k1"])).unwrap();
        assert_eq!(got, "; kernel a_k1: not compiled (why)\n");
        let e = select_kernels(clif, Stage::Clif, &names(&["a_k2"])).unwrap_err();
        assert_eq!(e, "no kernel `a_k2`; the kernels are a_k0 a_k1");
        // Other stages are whole.
        assert_eq!(
            select_kernels(cuda, Stage::Kir, &names(&["x"])).unwrap(),
            cuda
        );
    }
}
