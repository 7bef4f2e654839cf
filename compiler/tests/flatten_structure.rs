//! Flattening hand-built core IR: which kernels each SOAC shape becomes, at which level, behind
//! which thresholds; every result passes the kernel-IR verifier.

mod flatten_cases;
mod ir_build;

use flatten_cases::*;
use ir_build::*;
use ogham_compiler::flatten::flatten;
use ogham_compiler::ir::Program;
use ogham_compiler::ir::count::count_constructs;
use ogham_compiler::ir::print::print_program;
use ogham_compiler::ir::verify::{Form, verify};

/// Flattens a verified core program, verifies the kernel IR and checks the construct counts
/// (`expected` lists the non-zero ones among the kernel constructs; any other is zero).
fn flattens_to(core: Program, expected: &[(&str, usize)]) -> Program {
    assert_eq!(
        verify(&core, Form::Core),
        Ok(()),
        "{}",
        print_program(&core)
    );
    let kernel = flatten(core);
    let printed = print_program(&kernel);
    assert_eq!(verify(&kernel, Form::Kernel), Ok(()), "{printed}");
    let counts = count_constructs(&kernel);
    for name in [
        "segmap",
        "segred",
        "segscan",
        "seghist",
        "thread",
        "block",
        "threshold",
    ] {
        let want = expected
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |&(_, c)| c);
        assert_eq!(counts[name], want, "count of {name} in\n{printed}");
    }
    kernel
}

#[test]
fn sequential_map_is_one_thread_segmap() {
    let p = sequential_map();
    let k = flattens_to(p, &[("segmap", 1), ("thread", 1)]);
    assert!(k.thresholds.is_empty());
}

#[test]
fn reduction_is_segred_and_scan_is_segscan() {
    let p = sum_and_scan();
    flattens_to(p, &[("segred", 1), ("segscan", 1), ("thread", 2)]);
}

#[test]
fn scan_with_reduction_is_segscan_then_segred() {
    let p = scan_with_reduction();
    flattens_to(p, &[("segred", 1), ("segscan", 1), ("thread", 2)]);
}

#[test]
fn hist_and_scatter_are_seghists() {
    flattens_to(sample_hist(i32c(0)), &[("seghist", 1), ("thread", 1)]);
    flattens_to(sample_scatter(2, false), &[("seghist", 1), ("thread", 1)]);
}

#[test]
fn map_of_reduction_has_three_versions() {
    let k = flattens_to(
        row_sums(),
        &[
            ("segmap", 2),
            ("segred", 1),
            ("thread", 2),
            ("block", 1),
            ("threshold", 2),
        ],
    );
    let names: Vec<String> = k.thresholds.iter().map(|t| t.id.to_string()).collect();
    assert_eq!(names, ["suff_outer_par_0", "suff_intra_par_0"]);
    // The distributed version is a segmented reduction over the two-dimensional space.
    let printed = print_program(&k);
    assert!(printed.contains("segred"), "{printed}");
}

/// `map (\row -> let s = sum row in map (\x -> x / s) row) xss`: the per-row sum is expanded
/// into an array read by the second kernel.
#[test]
fn normalise_rows_expands_the_sum() {
    let p = normalise_rows();
    flattens_to(
        p,
        &[
            ("segmap", 3),
            ("segred", 1),
            ("thread", 3),
            ("block", 1),
            ("threshold", 2),
        ],
    );
}

/// `map (\row -> loop acc = row for i < 3 do map (*2) acc) xss`: the loop is interchanged out
/// of the map in the distributed version.
#[test]
fn loop_in_map_is_interchanged() {
    let p = loop_in_map();
    // Thread version, block version, and the flat one: the host loop, starting from the input
    // itself, around one [n][m] segmap.
    let k = flattens_to(
        p,
        &[("segmap", 3), ("thread", 2), ("block", 1), ("threshold", 2)],
    );
    assert_eq!(count_constructs(&k)["loop"], 3, "{}", print_program(&k));
}

/// `map (\k -> sum (map f32.i64 (iota k))) ks`: the inner width differs per point, so the map
/// stays one thread-level kernel.
#[test]
fn irregular_inner_width_stays_sequential() {
    let p = irregular_inner();
    flattens_to(p, &[("segmap", 1), ("thread", 1)]);
}

/// A host loop around a map keeps the loop on the host with the kernel inside.
#[test]
fn host_loop_keeps_kernels_inside() {
    let p = host_loop();
    let k = flattens_to(p, &[("segmap", 1), ("thread", 1)]);
    assert_eq!(count_constructs(&k)["loop"], 1);
}

/// `map (\xss -> map (\row -> sum row) xss) xsss`: three levels; the flat version is one
/// segmented reduction over `[a][n][m]`.
#[test]
fn doubly_nested_reduction_is_one_segred() {
    let p = doubly_nested_sums();
    let k = flattens_to(
        p,
        &[
            ("segmap", 2),
            ("segred", 1),
            ("thread", 2),
            ("block", 1),
            ("threshold", 2),
        ],
    );
    let printed = print_program(&k);
    assert!(printed.contains("segred"), "{printed}");
}

/// `map (\row -> let h = replicate 4 0 in hist (+) h (map (% 4) row)) xss`: a segmented
/// histogram into per-row destinations.
#[test]
fn hist_in_map_is_segmented() {
    let p = hist_in_map();
    flattens_to(
        p,
        &[
            ("segmap", 3),
            ("seghist", 1),
            ("thread", 3),
            ("block", 1),
            ("threshold", 2),
        ],
    );
}

/// An `if` inside a map stays sequential even when its branches hold SOACs.
#[test]
fn if_in_map_stays_sequential() {
    let p = if_in_map();
    flattens_to(p, &[("segmap", 1), ("thread", 1)]);
}

/// An index by the map's own index into a host array stays in the kernel body.
#[test]
fn kernel_bodies_index_host_arrays() {
    let p = index_host_array();
    flattens_to(p, &[("segmap", 1), ("thread", 1)]);
}

/// The per-point scalar `x * 10` is computed again inside the [n][m] kernel rather than stored by
/// a kernel of its own: the distributed version is a single segmap.
#[test]
fn cheap_scalars_are_recomputed() {
    flattens_to(
        scalar_then_inner_map(),
        &[("segmap", 3), ("thread", 2), ("block", 1), ("threshold", 2)],
    );
}
