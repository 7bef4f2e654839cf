//! The CUDA executors' choice of running an entry point in parts of rows (`OGHAM_ROW_PART`,
//! the separability analysis `ogham_ir::rows`, the argument's size) and its report under
//! `OGHAM_PROFILE`; the parts themselves run in `crate::ireval::parts`, their copies on the
//! device's side queue (docs/cuda.md, "Parts of rows").

use super::machine_error;
use crate::error::{R_CUDA_UNAVAILABLE, Res};
use crate::ireval::parts::{PartRows, RowParts, WholeRows};
use crate::value::Value;

/// `OGHAM_ROW_PART` ([`PartRows::from_env`]; docs/cuda.md, "Parts of rows").
pub(super) fn part_rows_from_env() -> Res<PartRows> {
    PartRows::from_env().map_err(|e| machine_error(R_CUDA_UNAVAILABLE, e))
}

/// How entry point `function` runs in parts of rows for `args`, if it does: when `part_rows`
/// gives a part size for its split argument ([`PartRows::for_input`]), the entry point is
/// separable along its first array's rows (`ogham_ir::rows`; with `profile`, it says why
/// not) and the argument has more rows than a part.
pub(super) fn parts(
    function: &ogham_ir::kir::Function,
    args: &[Value],
    part_rows: PartRows,
    profile: bool,
) -> Option<(RowParts, WholeRows)> {
    let split = ogham_ir::rows::row_split(function);
    if profile
        && part_rows != PartRows::Whole
        && let Err(why) = &split
    {
        eprintln!("ogham-profile: not run in parts of rows: {why}");
    }
    let split = split.ok()?;
    let Some(Value::Array(input)) = args.get(split.param) else {
        return None;
    };
    let bytes = input.len() * input.data().prim_type_size();
    let whole_rounds = part_rows == PartRows::Auto;
    let part_rows = part_rows.for_input(input.shape()[0], bytes)?;
    let parts = RowParts {
        split,
        part_rows,
        whole_rounds,
    };
    let whole = parts.whole(function, args)?;
    Some((parts, whole))
}

/// `OGHAM_PROFILE`'s line on a run of `whole`'s rows that went in `count` parts.
pub(super) fn report(count: usize, whole: WholeRows) {
    match count {
        1 => eprintln!("ogham-profile: ran whole (a part failed, or one part would do)"),
        n => eprintln!("ogham-profile: ran in {n} parts of the {} rows", whole.rows),
    }
}
