//! Running a kernel-IR entry point in parts of rows: when the entry point is separable along
//! its first array parameter's rows ([`ogham_ir::rows`]), each part of `part_rows` rows
//! runs as a call of its own (with one launcher, so one device, module and memory pool), and
//! the parts' outputs are written into the whole outputs' rows as each part finishes.
//!
//! When the launcher has a side ([`Launcher::side`]: the CUDA executors), the parts are
//! pipelined: a thread of its own puts the next part's input on the device and brings the
//! finished parts' outputs home while a part's kernels run ([`pipelined`]).
//!
//! Identical outputs: each part takes the versions the whole run takes (the thresholds that
//! compare the number of rows are fixed to the whole run's decisions here; those on other
//! sizes decide alike in every part), and the launcher plans segmented reductions with the
//! whole run's segment count ([`RowParts::whole`]). Any failure of a part or of the side, or
//! arguments that do not fit (a parameter spread from a tuple, a first argument that is not an
//! array), runs the entry point whole instead, so errors are reported exactly as without parts
//! (an error's point would otherwise be counted from the part's first row).
//!
//! Invariants relied on: the inputs are not written (a part's input is a view of the caller's
//! array, copied on write like any borrowed array); each output of a separable entry point has
//! the rows as its leading dimension.

use super::boundary;
use super::eval::{self, Launcher, Mark, Side};
use crate::error::{R_CUDA, error};
use crate::value::{Array, ArrayData, Value};
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::{Function, ThresholdId};
use ogham_ir::rows::RowSplit;
use std::collections::HashMap;
use std::sync::{Arc, mpsc};

type Res<T> = Result<T, Box<Diagnostic>>;

/// How many rows a part takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartRows {
    /// Never in parts.
    Whole,
    /// Parts of this many rows (the last takes the rest).
    Rows(usize),
    /// The executor's choice from the split argument's size ([`PartRows::for_input`]).
    Auto,
}

/// [`PartRows::Auto`] splits an argument of at least this many bytes...
pub const AUTO_FROM: usize = 64 << 20;
/// ... into parts of about this many bytes ...
pub const AUTO_PART_BYTES: usize = 32 << 20;
/// ... and at most this many parts.
pub const AUTO_MOST_PARTS: usize = 8;

impl PartRows {
    /// `OGHAM_ROW_PART`: unset or empty, [`PartRows::Auto`]; `0`, whole; a number of rows.
    pub fn from_env() -> Result<PartRows, String> {
        match std::env::var("OGHAM_ROW_PART") {
            Err(_) => Ok(PartRows::Auto),
            Ok(text) if text.is_empty() => Ok(PartRows::Auto),
            Ok(text) => match text.parse::<usize>() {
                Ok(0) => Ok(PartRows::Whole),
                Ok(rows) => Ok(PartRows::Rows(rows)),
                Err(_) => Err(format!(
                    "OGHAM_ROW_PART must be a number of rows (0: never in parts), not `{text}`"
                )),
            },
        }
    }

    /// The rows per part for a split argument of `rows` rows and `bytes` bytes; `None`: whole.
    /// `Auto`: whole below [`AUTO_FROM`] bytes, else parts of about [`AUTO_PART_BYTES`] (at
    /// least 2 parts, at most [`AUTO_MOST_PARTS`]).
    pub fn for_input(self, rows: usize, bytes: usize) -> Option<usize> {
        match self {
            PartRows::Whole => None,
            PartRows::Rows(n) => Some(n),
            PartRows::Auto if bytes < AUTO_FROM => None,
            PartRows::Auto => {
                let parts = (bytes / AUTO_PART_BYTES).clamp(2, AUTO_MOST_PARTS);
                Some(rows.div_ceil(parts))
            }
        }
    }
}

/// How to run an entry point in parts.
#[derive(Clone, Debug)]
pub struct RowParts {
    pub split: RowSplit,
    /// Rows per part (the last part takes the rest).
    pub part_rows: usize,
    /// Whether the parts are whole numbers of the launcher's rounds
    /// ([`Launcher::row_granule`]), with a round first and last ([`part_ranges`]; the
    /// executor's own choice, not the user's).
    pub whole_rounds: bool,
}

/// The number of rows of the whole run, for launch plans that must not depend on the part
/// (see the module header): the row count variable and its whole value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeRows {
    pub var: ogham_ir::VarId,
    pub rows: i64,
}

impl RowParts {
    /// The whole run's row count for `args`, when they can be split into more than one part.
    pub fn whole(&self, function: &Function, args: &[Value]) -> Option<WholeRows> {
        if args.len() != function.params.len() {
            return None;
        }
        match args.get(self.split.param)? {
            Value::Array(a) if a.shape()[0] > self.part_rows.max(1) => Some(WholeRows {
                var: self.split.rows,
                rows: a.shape()[0] as i64,
            }),
            _ => None,
        }
    }
}

/// Runs `function` on `args` (made [`shared`]) in parts (the module header), evaluating with
/// `limits` adjusted for the parts; the outputs and the number of parts, or `Ok(None)` when a
/// part failed (the caller runs the whole call instead).
pub(super) fn run(
    function: &Function,
    parts: &RowParts,
    whole: WholeRows,
    args: Vec<Value>,
    limits: &HashMap<ThresholdId, i64>,
    launcher: Option<&dyn Launcher>,
) -> Res<Option<(Vec<Value>, usize)>> {
    let mut part_limits = limits.clone();
    for id in &parts.split.thresholds {
        if let Some(limit) = part_limits.get_mut(id) {
            // `size >= limit` with the whole size, for every part's size.
            *limit = if whole.rows >= *limit { 0 } else { i64::MAX };
        }
    }
    let Value::Array(input) = args[parts.split.param].clone() else {
        unreachable!("`RowParts::whole` found an array")
    };
    let (shape, data) = input.into_parts();
    let rows = whole.rows as usize;
    let granule = launcher
        .filter(|_| parts.whole_rounds)
        .map(|l| l.row_granule().max(1));
    let ranges = part_ranges(rows, parts.part_rows, granule);
    let calls = Calls {
        function,
        args,
        param: parts.split.param,
        limits: part_limits,
        launcher,
        largest: ranges.iter().map(|&(_, n)| n).max().unwrap_or(0),
    };
    let input = Input {
        row_elems: shape[1..].iter().product(),
        shape,
        data: Arc::new(data),
    };
    let whole_outputs = match launcher.and_then(|l| l.side()) {
        Some(side) => pipelined(&calls, &input, &ranges, rows, side)?,
        None => one_after_another(&calls, &input, &ranges, rows)?,
    };
    Ok(whole_outputs.map(|w| (w.finish(), ranges.len())))
}

/// The parts' rows `(start, n)`, in order, for `rows` rows in parts of about `part_rows`.
/// Without a `granule`, parts of exactly `part_rows` (the last takes the rest). With one (the
/// executor's own choice, [`PartRows::Auto`]), whole numbers of the launcher's rounds of
/// `granule` rows: the first and last parts a single round each (the last takes the rest of a
/// round), so that the kernels start after a short first upload and end before a short last
/// download, and before the last, parts of half the size each, so that the downloads of the
/// large parts run beside the kernels of the smaller ones.
fn part_ranges(rows: usize, part_rows: usize, granule: Option<usize>) -> Vec<(usize, usize)> {
    let ranges = |sizes: &mut dyn Iterator<Item = usize>| {
        let mut start = 0;
        sizes
            .map(|n| {
                let range = (start, n.min(rows - start));
                start += range.1;
                range
            })
            .take_while(|&(_, n)| n > 0)
            .collect()
    };
    let Some(granule) = granule else {
        let step = part_rows.max(1);
        return ranges(&mut std::iter::repeat(step));
    };
    let rounds = rows.div_ceil(granule);
    let per_part = part_rows.div_ceil(granule).max(1);
    if rounds < 4 || per_part == 1 {
        return ranges(&mut std::iter::repeat(per_part * granule));
    }
    // Before the last round, parts of half the size each (down to 2 rounds), so that each
    // part's kernels run while the part before it is downloaded.
    let mut tail: Vec<usize> = std::iter::successors(Some(per_part / 2), |r| Some(r / 2))
        .take_while(|&r| r >= 2)
        .collect();
    if tail.iter().sum::<usize>() + 2 > rounds {
        tail.clear();
    }
    // The rounds between, in parts of about `per_part` rounds.
    let middle = rounds - 2 - tail.iter().sum::<usize>();
    let count = middle.div_ceil(per_part);
    let sizes = std::iter::once(1)
        .chain((0..count).map(|k| middle / count + usize::from(k < middle % count)))
        .chain(tail)
        .chain(std::iter::once(1));
    ranges(&mut sizes.map(|r| r * granule))
}

/// The calls of the parts: the entry point, its arguments (the split one replaced by each
/// part's rows), the thresholds fixed for the parts and the launcher.
struct Calls<'a> {
    function: &'a Function,
    args: Vec<Value>,
    param: usize,
    limits: HashMap<ThresholdId, i64>,
    launcher: Option<&'a dyn Launcher>,
    /// The rows of the largest part ([`Launcher::begin_part`]).
    largest: usize,
}

impl Calls<'_> {
    /// Runs the entry point on `part`, rows `(start, n)` of the split argument: its outputs, or
    /// `None` when it fails.
    fn call(&self, part: ArrayData, (_, n): (usize, usize), input: &Input) -> Option<Vec<Value>> {
        let mut shape = input.shape.clone();
        shape[0] = n;
        let mut args = self.args.clone();
        args[self.param] = Value::Array(Array::new(shape, part).expect("shape fits"));
        let params = boundary::bind_arguments(self.function, args).ok()?;
        if let Some(l) = self.launcher {
            l.begin_part(n, self.largest);
        }
        let mut evaluator = eval::Evaluator::new(self.function, &self.limits, self.launcher);
        let results = evaluator.run(&self.function.body, params).ok()?;
        // Its variables no longer share the results: they stay on the device until the side
        // copies them.
        drop(evaluator);
        boundary::gather_results(self.function, results).ok()
    }
}

/// The split argument: its shape, elements and elements per row.
struct Input {
    shape: Vec<usize>,
    data: Arc<ArrayData>,
    row_elems: usize,
}

impl Input {
    /// The elements of rows `(start, n)`, a view of the argument's.
    fn rows(&self, (start, n): (usize, usize)) -> ArrayData {
        ArrayData::range_view(&self.data, start * self.row_elems, n * self.row_elems)
            .expect("the part's rows are inside the input")
    }
}

/// The parts in turn, each one's outputs copied home before the next starts.
fn one_after_another(
    calls: &Calls,
    input: &Input,
    ranges: &[(usize, usize)],
    rows: usize,
) -> Res<Option<Whole>> {
    let mut whole = Whole::new(rows);
    for &range in ranges {
        let Some(outputs) = calls.call(input.rows(range), range, input) else {
            return Ok(None);
        };
        if !whole.place(outputs, range, &mut |data, dst| {
            data.read_into(dst)
                .map_err(|e| error(R_CUDA, Default::default(), e))
        })? {
            return Ok(None);
        }
    }
    Ok(Some(whole))
}

/// What the side's thread is asked to do, in order.
enum Job {
    /// Put a part's input where the kernels read it.
    Upload(ArrayData),
    /// Bring a finished part's outputs home, once the kernels have reached the mark.
    Download(Vec<Value>, (usize, usize), Mark),
}

/// The parts pipelined with the side's copies: while part `k`'s kernels run, the side thread
/// puts part `k + 1`'s input in place and brings part `k - 1`'s outputs home (jobs in the
/// order upload 0, upload 1, then upload `k + 2`, download `k` as each part `k` finishes, so
/// that a part's input never waits behind the outputs of the part just before it).
fn pipelined(
    calls: &Calls,
    input: &Input,
    ranges: &[(usize, usize)],
    rows: usize,
    side: Box<dyn Side + '_>,
) -> Res<Option<Whole>> {
    let launcher = calls.launcher.expect("a side comes from a launcher");
    std::thread::scope(|scope| {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (uploaded, arrivals) = mpsc::channel::<Res<(ArrayData, Mark)>>();
        let worker = scope.spawn(move || -> Res<Option<Whole>> {
            side.bind()?;
            let mut whole = Some(Whole::new(rows));
            for job in queue {
                match job {
                    Job::Upload(data) => {
                        let done = side.upload(&data).map(|mark| (data, mark));
                        // The main thread may have stopped waiting (a part failed).
                        let _ = uploaded.send(done);
                    }
                    Job::Download(outputs, range, after) => {
                        if let Some(w) = &mut whole
                            && !w.place(outputs, range, &mut |data, dst| {
                                side.download(data, dst, after)
                            })?
                        {
                            whole = None;
                        }
                    }
                }
            }
            Ok(whole)
        });
        let send = |job| jobs.send(job).is_ok();
        let mut sent = true;
        for &range in ranges.iter().take(2) {
            sent &= send(Job::Upload(input.rows(range)));
        }
        for (k, &range) in ranges.iter().enumerate() {
            let Ok(Ok((part, mark))) = arrivals.recv() else {
                sent = false;
                break;
            };
            launcher.wait_for(mark);
            let (Some(outputs), Ok(after)) =
                (calls.call(part, range, input), launcher.finish_part())
            else {
                sent = false;
                break;
            };
            // Uploads first: the part after next must not wait for this part's outputs.
            if let Some(&next) = ranges.get(k + 2) {
                sent &= send(Job::Upload(input.rows(next)));
            }
            sent &= send(Job::Download(outputs, range, after));
        }
        drop(jobs);
        // A failure of the side (a copy, memory) runs the whole call instead, as a part's does:
        // the whole call then reports whatever the device still has to say.
        let whole = worker.join().expect("the side thread does not panic");
        Ok(whole.ok().flatten().filter(|_| sent))
    })
}

/// The whole outputs, made from the first part's and filled part by part.
struct Whole {
    rows: usize,
    /// Where the arrays are in the outputs' tuples and records (the first part's).
    layout: Option<Vec<Layout>>,
    /// Each array of the outputs, whole.
    arrays: Vec<Option<(Vec<usize>, ArrayData)>>,
}

impl Whole {
    fn new(rows: usize) -> Whole {
        Whole {
            rows,
            layout: None,
            arrays: Vec::new(),
        }
    }

    /// Writes `outputs`, those of rows `(start, n)`, into the whole outputs' rows (each array's
    /// bytes through `copy`); false when they do not have the first part's layout, shapes and
    /// types (the caller runs the whole call instead).
    fn place(
        &mut self,
        outputs: Vec<Value>,
        (start, n): (usize, usize),
        copy: &mut dyn FnMut(&ArrayData, &mut [u8]) -> Res<()>,
    ) -> Res<bool> {
        let mut arrays = Vec::new();
        let layout: Vec<Layout> = outputs
            .into_iter()
            .map(|v| leaves(v, &mut arrays))
            .collect();
        if self.layout.is_none() {
            self.arrays = arrays.iter().map(|_| None).collect();
            self.layout = Some(layout);
        } else if self.layout.as_ref() != Some(&layout) {
            return Ok(false);
        }
        for (whole, part) in self.arrays.iter_mut().zip(arrays) {
            if !place_rows(whole, part, (start, n), self.rows, copy)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The whole outputs.
    fn finish(self) -> Vec<Value> {
        let mut arrays = self.arrays.into_iter().map(|o| {
            let (shape, data) = o.expect("every output placed");
            Value::Array(Array::new(shape, data).expect("shape fits"))
        });
        let layout = self.layout.expect("at least one part");
        layout.iter().map(|l| rebuild(l, &mut arrays)).collect()
    }
}

/// Where an output's values are in its tuples (and records).
#[derive(PartialEq)]
enum Layout {
    Leaf,
    Tuple(Vec<Layout>),
}

/// Moves the values inside `v`'s tuples to `out`, in order; where they were.
fn leaves(v: Value, out: &mut Vec<Value>) -> Layout {
    match v {
        Value::Tuple(vs) => Layout::Tuple(vs.into_iter().map(|v| leaves(v, out)).collect()),
        leaf => {
            out.push(leaf);
            Layout::Leaf
        }
    }
}

/// The value of `layout` with its leaves taken from `leaves` in order.
fn rebuild(layout: &Layout, leaves: &mut impl Iterator<Item = Value>) -> Value {
    match layout {
        Layout::Tuple(ls) => Value::Tuple(ls.iter().map(|l| rebuild(l, leaves)).collect()),
        Layout::Leaf => leaves.next().expect("as many leaves as the layout"),
    }
}

/// `args` with every array's elements on the host and shared by views, so that a part's
/// arguments and a whole run's after it copy none of them.
pub(super) fn shared(args: Vec<Value>) -> Res<Vec<Value>> {
    args.into_iter()
        .map(|arg| match arg {
            Value::Array(a) => {
                let (shape, mut data) = a.into_parts();
                data.settle()
                    .map_err(|e| error(R_CUDA, Default::default(), e))?;
                let data = Arc::new(data);
                let view = ArrayData::range_view(&data, 0, data.len()).expect("the whole array");
                Ok(Value::Array(Array::new(shape, view).expect("same shape")))
            }
            other => Ok(other),
        })
        .collect()
}

/// Writes `part`'s rows (rows `start..start + n` of the whole output of `rows` rows) into
/// `whole`, made at the first part; false when `part` is not an array of `n` rows of the same
/// shape and type as the other parts' (the caller runs the whole call instead).
fn place_rows(
    whole: &mut Option<(Vec<usize>, ArrayData)>,
    part: Value,
    (start, n): (usize, usize),
    rows: usize,
    copy: &mut dyn FnMut(&ArrayData, &mut [u8]) -> Res<()>,
) -> Res<bool> {
    let Value::Array(part) = part else {
        return Ok(false);
    };
    if part.shape()[0] != n {
        return Ok(false);
    }
    let row_shape = &part.shape()[1..];
    if whole.is_none() {
        let mut shape = vec![rows];
        shape.extend_from_slice(row_shape);
        let elems = shape.iter().product();
        let Some(data) = ArrayData::zeroed(part.elem_type(), elems) else {
            return Err(error(
                R_CUDA,
                Default::default(),
                format!("cannot allocate an output of {elems} elements"),
            ));
        };
        *whole = Some((shape, data));
    }
    let (shape, data) = whole.as_mut().expect("made above");
    if shape[1..] != *row_shape || data.prim_type() != part.elem_type() {
        return Ok(false);
    }
    let row_bytes = row_shape.iter().product::<usize>() * data.prim_type_size();
    // SAFETY: rows `start..start + n` of the whole output are `n * row_bytes` bytes inside its
    // owned buffer (`start + n <= rows`), which nothing else references.
    let dst = unsafe {
        std::slice::from_raw_parts_mut(data.as_mut_ptr().add(start * row_bytes), n * row_bytes)
    };
    copy(part.data(), dst)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executors_parts_are_whole_rounds_with_one_round_first_and_last() {
        let sizes = |rows, part_rows| {
            part_ranges(rows, part_rows, Some(2_112))
                .iter()
                .map(|p| p.1 / 2_112)
                .collect::<Vec<_>>()
        };
        // STL's 20,000 series on an H200 (rounds of 2,112 rows), parts of about 6,667 rows (4
        // rounds): one round, 6 rounds in 2 parts, a part of 2 rounds, the last round's 992
        // rows.
        assert_eq!(
            part_ranges(20_000, 6_667, Some(2_112)),
            [
                (0, 2_112),
                (2_112, 6_336),
                (8_448, 6_336),
                (14_784, 4_224),
                (19_008, 992)
            ]
        );
        // Parts of 12 rounds: 6 and 3 before the last round.
        assert_eq!(
            sizes(186_624, 23_328),
            [1, 12, 11, 11, 11, 11, 11, 11, 6, 3, 0]
        );
        // Too short for the halves.
        assert_eq!(sizes(4 * 2_112, 8 * 2_112), [1, 2, 1]);
        // Too few rounds for small ends, or parts of a round: whole rounds alike.
        assert_eq!(
            part_ranges(5_000, 2_500, Some(2_112)),
            [(0, 4_224), (4_224, 776)]
        );
        assert_eq!(
            part_ranges(9_000, 1_000, Some(2_112)),
            [
                (0, 2_112),
                (2_112, 2_112),
                (4_224, 2_112),
                (6_336, 2_112),
                (8_448, 552)
            ]
        );
        // Asked for by the user: exactly that many rows.
        assert_eq!(part_ranges(10, 4, None), [(0, 4), (4, 4), (8, 2)]);
        let covered = |r: &[(usize, usize)]| r.iter().map(|p| p.1).sum::<usize>();
        for rows in [8_449, 100_000, 186_624] {
            let r = part_ranges(rows, rows / 8, Some(2_112));
            assert_eq!(covered(&r), rows);
            assert!(r.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        }
    }

    #[test]
    fn the_executor_splits_large_arguments_into_2_to_8_parts() {
        let mib = 1 << 20;
        assert_eq!(PartRows::Auto.for_input(20_000, 63 * mib), None);
        // STL's 20,000 series of 828 f64: 132 MB, three parts of about 32 MiB.
        assert_eq!(
            PartRows::Auto.for_input(20_000, 20_000 * 828 * 8),
            Some(6_667)
        );
        assert_eq!(PartRows::Auto.for_input(1_000, 64 * mib), Some(500));
        assert_eq!(PartRows::Auto.for_input(80_000, 4096 * mib), Some(10_000));
        assert_eq!(PartRows::Whole.for_input(20_000, 4096 * mib), None);
        assert_eq!(PartRows::Rows(7).for_input(20_000, 1), Some(7));
    }
}
