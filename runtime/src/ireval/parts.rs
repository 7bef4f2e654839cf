//! Running a kernel-IR entry point in parts of rows: when the entry point is separable along
//! its first array parameter's rows ([`ogham_ir::rows`]), each part of `part_rows` rows
//! runs as a call of its own (with one launcher, so one device, module and memory pool), and
//! the parts' outputs are written into the whole outputs' rows as each part finishes.
//!
//! When the launcher has a side ([`Launcher::side`]: the CUDA executors), the parts are
//! pipelined: a thread of its own puts the next part's input on the device and brings the
//! finished parts' outputs home while a part's kernels run ([`pipelined`]). The executor's
//! own plan is parts of whole rounds of the launcher's grid; when the first part's outputs
//! outweigh its input, the last part is cut into [`halves`] so that the run does not end with
//! one large download.
//!
//! Identical outputs: each part takes the versions the whole run takes (the thresholds that
//! compare the number of rows are fixed to the whole run's decisions here; those on other
//! sizes decide alike in every part), and the launcher plans segmented reductions with the
//! whole run's segment count ([`RowParts::whole`]). Any failure of a part or of the side, or
//! arguments that do not fit (a parameter spread from a tuple, a first argument that is not an
//! array), runs the entry point whole instead, so errors are reported exactly as without parts
//! (an error's point would otherwise be counted from the part's first row). A part the launcher
//! asks to run again ([`Launcher::rerun`]: it found that it must wait where it did not) runs
//! once more first.
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
    /// ([`Launcher::row_granule`]) and may end in [`halves`] (the executor's own choice, not
    /// the user's).
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
    let mut ranges = part_ranges(rows, parts.part_rows, granule);
    // The executor's own plan: few more waves of a thread per row in all than the whole run,
    // at the occupancy of the kernel an SM holds the fewest threads of (the most registers per
    // thread: typically the longest per wave, as BFAST's per-pixel kernel and STL's loess).
    let wave = granule.zip(launcher).and_then(|(granule, launcher)| {
        let segs = parts
            .split
            .threads_per_row(function, |id| part_limits.get(&id) == Some(&0));
        let wave = segs
            .into_iter()
            .filter_map(|s| launcher.rows_per_wave(s))
            .min()?;
        Some((granule, wave))
    });
    if let Some((granule, wave)) = wave {
        match parts_within_waves(rows, ranges.len(), granule, wave) {
            1 => return Ok(None),
            n => ranges = part_ranges(rows, rows.div_ceil(n), Some(granule)),
        }
    }
    let calls = Calls {
        function,
        args,
        param: parts.split.param,
        limits: part_limits,
        launcher,
        // Halves would make parts under a wave.
        granule: granule.filter(|_| wave.is_none()),
    };
    let input = Input {
        row_elems: shape[1..].iter().product(),
        shape,
        data: Arc::new(data),
    };
    let whole_outputs = match launcher.and_then(|l| l.side()) {
        Some(side) => pipelined(&calls, &input, &mut ranges, rows, side)?,
        None => one_after_another(&calls, &input, &ranges, rows)?,
    };
    Ok(whole_outputs.map(|w| (w.finish(), ranges.len())))
}

/// The parts' rows `(start, n)`, in order, for `rows` rows in parts of `part_rows` rows (the
/// last takes the rest), rounded up to whole rounds of `granule` rows when there is one (the
/// executor's own choice, [`PartRows::Auto`]).
fn part_ranges(rows: usize, part_rows: usize, granule: Option<usize>) -> Vec<(usize, usize)> {
    let granule = granule.unwrap_or(1).max(1);
    let step = part_rows.max(1).div_ceil(granule) * granule;
    (0..rows)
        .step_by(step)
        .map(|start| (start, step.min(rows - start)))
        .collect()
}

/// How many more waves than the whole run the parts of a thread per row may take in all, as a
/// fraction of the whole run's (1/4): what hiding the copies behind the kernels can win back.
/// Parts under a wave double or triple the kernels' time (BFAST D1 and D3: 2 waves against 1),
/// where Peru on the RTX 2080 Ti model (8 waves in 2 parts against 7 whole) gained more from
/// the overlap of its 108 MB upload than the eighth wave cost (`BENCHMARKS.md`, session 34).
const EXTRA_WAVES: (usize, usize) = (1, 4);

/// The most parts, at most `planned`, of `rows` rows in whole rounds of `granule` rows (as
/// [`part_ranges`] makes them) that take at most [`EXTRA_WAVES`] more waves of `wave` rows
/// in all than the whole `rows`: 1 when even two parts take more.
fn parts_within_waves(rows: usize, planned: usize, granule: usize, wave: usize) -> usize {
    let waves = |n: usize| n.div_ceil(wave.max(1));
    let (more, of) = EXTRA_WAVES;
    (2..=planned)
        .rev()
        .find(|&n| {
            let in_parts: usize = part_ranges(rows, rows.div_ceil(n), Some(granule))
                .iter()
                .map(|&(_, part)| waves(part))
                .sum();
            in_parts * of <= waves(rows) * (of + more)
        })
        .unwrap_or(1)
}

/// `range` cut into parts of half the rows each, in whole rounds of `granule` rows, down to a
/// round and what is left: the end of a run whose outputs outweigh its inputs, so that each
/// part's kernels run while the larger part before it comes home and the last download is
/// short.
fn halves((start, n): (usize, usize), granule: usize) -> Vec<(usize, usize)> {
    let granule = granule.max(1);
    let mut parts = Vec::new();
    let (mut at, mut left) = (start, n);
    while left > granule {
        let take = (left.div_ceil(granule) / 2).max(1) * granule;
        parts.push((at, take));
        (at, left) = (at + take, left - take);
    }
    parts.push((at, left));
    parts
}

/// The calls of the parts: the entry point, its arguments (the split one replaced by each
/// part's rows), the thresholds fixed for the parts and the launcher.
struct Calls<'a> {
    function: &'a Function,
    args: Vec<Value>,
    param: usize,
    limits: HashMap<ThresholdId, i64>,
    launcher: Option<&'a dyn Launcher>,
    /// The launcher's rounds of rows when the executor chose the parts (its plan may then
    /// change after the first part, [`halves`]).
    granule: Option<usize>,
}

impl Calls<'_> {
    /// Runs the entry point on `part`, rows `(start, n)` of the split argument: its outputs, or
    /// `None` when it fails (twice, when the launcher asks for it to run again,
    /// [`Launcher::rerun`]).
    fn call(&self, part: ArrayData, range: (usize, usize), input: &Input) -> Option<Vec<Value>> {
        self.call_once(part.clone(), range, input).or_else(|| {
            self.launcher
                .is_some_and(|l| l.rerun())
                .then(|| self.call_once(part, range, input))
                .flatten()
        })
    }

    /// [`Calls::call`], once.
    fn call_once(
        &self,
        part: ArrayData,
        (_, n): (usize, usize),
        input: &Input,
    ) -> Option<Vec<Value>> {
        let mut shape = input.shape.clone();
        shape[0] = n;
        let mut args = self.args.clone();
        args[self.param] = Value::Array(Array::new(shape, part).expect("shape fits"));
        let params = boundary::bind_arguments(self.function, args).ok()?;
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
    ranges: &mut Vec<(usize, usize)>,
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
        let mut k = 0;
        while let Some(&range) = ranges.get(k) {
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
            if let Some(granule) = calls.granule
                && k == 0
                && outweigh(&outputs, range, input)
            {
                end_in_halves(ranges, granule);
            }
            // Uploads first: the part after next must not wait for this part's outputs.
            if let Some(&next) = ranges.get(k + 2) {
                sent &= send(Job::Upload(input.rows(next)));
            }
            sent &= send(Job::Download(outputs, range, after));
            k += 1;
        }
        drop(jobs);
        // A failure of the side (a copy, memory) runs the whole call instead, as a part's does:
        // the whole call then reports whatever the device still has to say.
        let whole = worker.join().expect("the side thread does not panic");
        Ok(whole.ok().flatten().filter(|_| sent))
    })
}

/// The plan `ranges` with its last part cut into [`halves`], unless that part is one of the
/// first two, whose input the side has already been asked to upload: the last part's
/// download would otherwise end the run alone.
fn end_in_halves(ranges: &mut Vec<(usize, usize)>, granule: usize) {
    if ranges.len() > 2
        && let Some(last) = ranges.pop()
    {
        ranges.extend(halves(last, granule));
    }
}

/// Whether a part's `outputs` have more bytes than its rows of the input (their download
/// then takes longer than the upload).
fn outweigh(outputs: &[Value], (_, n): (usize, usize), input: &Input) -> bool {
    fn bytes(v: &Value) -> usize {
        match v {
            Value::Array(a) => a.len() * a.data().prim_type_size(),
            Value::Tuple(vs) => vs.iter().map(bytes).sum(),
            _ => 0,
        }
    }
    let input_bytes = n * input.row_elems * input.data.prim_type_size();
    outputs.iter().map(bytes).sum::<usize>() > input_bytes
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
    use ogham_ir::types::PrimType;

    #[test]
    fn parts_of_a_thread_per_row_take_at_most_a_quarter_more_waves_than_the_whole_run() {
        // An H200: rounds of 2,112 rows; waves of 132 × 256 = 33,792 rows for a kernel an SM
        // holds 8 warps of.
        let (round, wave) = (2_112, 33_792);
        // BFAST D1 (16,384 pixels): half a wave whole, a wave per part in two parts.
        assert_eq!(parts_within_waves(16_384, 2, round, wave), 1);
        // BFAST D5 (65,536 pixels): two waves either way.
        assert_eq!(parts_within_waves(65_536, 2, round, wave), 2);
        // BFAST D3 (32,768 pixels): one wave whole, two in two parts.
        assert_eq!(parts_within_waves(32_768, 2, round, wave), 1);
        // Peru (111,556 pixels, three parts planned): 4 waves whole, 6 in three parts (38,016
        // rows each: two waves), 4 in two.
        assert_eq!(parts_within_waves(111_556, 3, round, wave), 2);
        // STL C1's thread-per-series versions (186,624 series, eight parts planned): 6 waves
        // whole, 8 in eight parts, 7 in seven (a quarter more would be 7.5).
        assert_eq!(parts_within_waves(186_624, 8, round, wave), 7);
        // The same with its loess at 12 warps per SM (waves of 50,688): 4 waves whole, 5 in
        // five parts of 38,016 rows.
        assert_eq!(parts_within_waves(186_624, 8, round, 50_688), 5);
        // Peru on an RTX 2080 Ti (68 SMs: rounds of 1,088 rows, waves of 17,408): 7 waves
        // whole, 9 in three parts, 8 in two.
        assert_eq!(parts_within_waves(111_556, 3, 1_088, 17_408), 2);
    }

    #[test]
    fn the_executors_parts_are_whole_rounds_and_can_end_in_halves() {
        // STL's 20,000 series on an H200 (rounds of 2,112 rows), parts of about 6,667 rows:
        // 4 rounds each, the last what is left.
        assert_eq!(
            part_ranges(20_000, 6_667, Some(2_112)),
            [(0, 8_448), (8_448, 8_448), (16_896, 3_104)]
        );
        // Asked for by the user: exactly that many rows.
        assert_eq!(part_ranges(10, 4, None), [(0, 4), (4, 4), (8, 2)]);
        // Halves of a last part, in whole rounds, down to a round and the rest.
        assert_eq!(
            halves((16_896, 3_104), 2_112),
            [(16_896, 2_112), (19_008, 992)]
        );
        assert_eq!(
            halves((0, 8 * 100 + 7), 100),
            [(0, 400), (400, 200), (600, 100), (700, 100), (800, 7)]
        );
        assert_eq!(halves((5, 100), 100), [(5, 100)]);
        let mut stl = part_ranges(20_000, 6_667, Some(2_112));
        end_in_halves(&mut stl, 2_112);
        assert_eq!(
            stl,
            [(0, 8_448), (8_448, 8_448), (16_896, 2_112), (19_008, 992)]
        );
        // Whether a part's outputs outweigh its rows of the input: 2 rows of 3 f64 in, 2 rows
        // of 4 f64 out (plus a scalar per row in a tuple) against 2 rows of 2.
        let input = Input {
            shape: vec![4, 3],
            data: Arc::new(ArrayData::zeroed(PrimType::F64, 12).expect("small")),
            row_elems: 3,
        };
        let array = |shape: Vec<usize>| {
            let elems = shape.iter().product();
            let data = ArrayData::zeroed(PrimType::F64, elems).expect("small");
            Value::Array(Array::new(shape, data).expect("shape fits"))
        };
        let wide = [array(vec![2, 4]), Value::Tuple(vec![array(vec![2])])];
        assert!(outweigh(&wide, (0, 2), &input));
        assert!(!outweigh(&[array(vec![2, 2])], (0, 2), &input));
        // The first two parts' inputs are on their way: they stay.
        let mut two = vec![(0, 500), (500, 500)];
        end_in_halves(&mut two, 100);
        assert_eq!(two, [(0, 500), (500, 500)]);
        for n in [1, 99, 101, 1_000, 4_321] {
            let parts = halves((7, n), 100);
            assert_eq!(parts.iter().map(|p| p.1).sum::<usize>(), n);
            assert!(parts.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
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
