//! Traced values: what `trace "label" e` reports, where it goes, and how it is printed.
//!
//! The executors that trace — the reference interpreter and the IR evaluator (`--backend
//! interp`, `core`, `kir`) — hand every traced value to the *sink* installed on the thread that
//! called them ([`with_sink`]); they carry it onto their own evaluation thread
//! ([`current`]). With no sink installed a trace does nothing, so library callers that never
//! ask for traces pay only for the check. The compiled executors (`cpu`, `cuda`, `cuda-emu`)
//! do not trace: their kernels compile a trace as the identity and their host code runs without
//! a sink (the front end warns, `W0730`).
//!
//! A traced value is a scalar or an array of scalars (the type checker's `E0313` rejects the
//! rest), so every executor reports the same [`Value`]. Traces arrive in evaluation order,
//! which may differ between executors once fusion has merged loops (the interpreter finishes one
//! `map` before the next; fused code interleaves them); each traced value is reported once per
//! evaluation of its `trace` on every tracing executor.

use crate::val::{Store, Val};
use crate::value::{Array, ArrayData, Value};
use ogham_ir::source::{SourceMap, Span};
use ogham_ir::types::PrimType;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// One traced value: the label, where the `trace` is, and the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub label: String,
    pub loc: Span,
    pub value: Value,
}

/// Where traced values go.
pub type Sink = Arc<dyn Fn(Trace) + Send + Sync>;

thread_local! {
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Runs `f` with `sink` receiving the traces of the runs it starts on this thread (`None`: no
/// tracing); the sink in force before is restored afterwards, also when `f` panics.
pub fn with_sink<R>(sink: Option<Sink>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Sink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            SINK.with(|s| *s.borrow_mut() = previous);
        }
    }
    let _restore = Restore(SINK.with(|s| s.replace(sink)));
    f()
}

/// The sink in force on this thread (for an executor to install on its evaluation thread).
pub fn current() -> Option<Sink> {
    SINK.with(|s| s.borrow().clone())
}

/// Whether a sink is in force on this thread.
pub fn tracing() -> bool {
    SINK.with(|s| s.borrow().is_some())
}

/// Reports a traced value, of element type `elem`, to the sink in force (if any).
pub fn emit<F: Clone>(label: &str, loc: Span, value: &Val<'_, F>, elem: PrimType) {
    let Some(sink) = current() else {
        return;
    };
    let value = traced_value(value, elem);
    sink(Trace {
        label: label.to_string(),
        loc,
        value,
    });
}

/// A scalar or array executor value as a boundary value. An array without typed storage (an
/// empty array whose element type the interpreter could not know) becomes an empty array of
/// `elem`; anything else (which the type checker rules out) is the empty tuple.
fn traced_value<F: Clone>(value: &Val<'_, F>, elem: PrimType) -> Value {
    match value {
        Val::Prim(s) => Value::Scalar(*s),
        Val::Array(a) => {
            let data = match a.to_store() {
                Store::Prim(data) => data,
                Store::Boxed(_) => ArrayData::with_capacity(elem, 0),
            };
            let mut shape = a.shape().to_vec();
            if data.is_empty() && shape.iter().product::<usize>() != 0 {
                shape = vec![0];
            }
            Array::new(shape, data).map_or(Value::Tuple(Vec::new()), Value::Array)
        }
        _ => Value::Tuple(Vec::new()),
    }
}

/// Elements shown per dimension of a traced array before it is elided.
const SHOWN: usize = 10;

/// `trace slope at prog.og:12:7: 0.25f32`: one line (without newline) for a traced value;
/// arrays in the value syntax, each dimension longer than 10 elided to its first 7 and last 2
/// elements (`[0i64, 1i64, ..., 99i64]`) with the array's type after it.
pub fn format(sources: &SourceMap, trace: &Trace) -> String {
    let loc = if (trace.loc.file.0 as usize) < sources.files().count() {
        sources.location(trace.loc)
    } else {
        "<unknown>".to_string()
    };
    format!("trace {} at {loc}: {}", trace.label, show(&trace.value))
}

/// A traced value in the value syntax, long dimensions elided (see [`format`]).
pub fn show(value: &Value) -> String {
    match value {
        Value::Array(a) if !a.is_empty() && a.shape().iter().any(|&d| d > SHOWN) => {
            let mut out = String::new();
            elided(&mut out, a, 0, 0);
            format!("{out} : {}", value.describe())
        }
        v => v.to_string(),
    }
}

fn elided(out: &mut String, a: &Array, dim: usize, offset: usize) {
    let n = a.shape()[dim];
    let stride: usize = a.shape()[dim + 1..].iter().product();
    let shown: Vec<Option<usize>> = if n > SHOWN {
        (0..SHOWN - 3)
            .map(Some)
            .chain([None])
            .chain((n - 2..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    out.push('[');
    for (k, i) in shown.into_iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        match i {
            None => out.push_str("..."),
            Some(i) if dim + 1 == a.rank() => out.push_str(&a.data().get(offset + i).to_string()),
            Some(i) => elided(out, a, dim + 1, offset + i * stride),
        }
    }
    out.push(']');
}

/// A sink that prints each trace on standard error as it comes ([`format`]).
pub fn to_stderr(sources: SourceMap) -> Sink {
    Arc::new(move |trace: Trace| eprintln!("{}", format(&sources, &trace)))
}

/// A sink that keeps the traces, and the list it keeps them in.
pub fn collect() -> (Sink, Arc<Mutex<Vec<Trace>>>) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let into = kept.clone();
    let sink: Sink = Arc::new(move |trace: Trace| {
        if let Ok(mut kept) = into.lock() {
            kept.push(trace);
        }
    });
    (sink, kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Scalar;

    fn traces_of(f: impl FnOnce()) -> Vec<Trace> {
        let (sink, kept) = collect();
        with_sink(Some(sink), f);
        kept.lock().unwrap().clone()
    }

    #[test]
    fn a_sink_receives_what_is_emitted_and_is_removed_afterwards() {
        let v: Val<'_, ()> = Val::Prim(Scalar::F32(0.25));
        let got = traces_of(|| emit("x", Span::default(), &v, PrimType::F32));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].value, Value::Scalar(Scalar::F32(0.25)));
        assert!(!tracing());
        let none = traces_of(|| {});
        assert!(none.is_empty());
    }

    #[test]
    fn long_arrays_are_elided_per_dimension() {
        let a = Array::from_i64(vec![20], (0..20).collect()).unwrap();
        assert_eq!(
            show(&Value::Array(a)),
            "[0i64, 1i64, 2i64, 3i64, 4i64, 5i64, 6i64, ..., 18i64, 19i64] : [20]i64"
        );
        let short = Array::from_i64(vec![2, 2], vec![1, 2, 3, 4]).unwrap();
        assert_eq!(show(&Value::Array(short)), "[[1i64, 2i64], [3i64, 4i64]]");
        let empty = Val::<()>::Array(crate::val::Array::new(vec![0], Store::Boxed(Vec::new())));
        assert_eq!(
            traced_value(&empty, PrimType::F32).to_string(),
            "empty([0]f32)"
        );
    }
}
