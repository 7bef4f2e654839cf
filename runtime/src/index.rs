//! Indexing, slicing and in-place update of arrays.
//!
//! An index list `a[i, j:k:s, ...]` has at most one entry per dimension; missing trailing entries
//! take whole dimensions. Indices must lie in `0..n`. A slice `i:j:s` takes every `s`-th element
//! from `i` up to (not including) `j`. With `s > 0` (default 1) the defaults are `0:n` and the
//! slice must satisfy `0 <= i <= j <= n`; with `s < 0` the defaults are `n-1` and `-1` (down to
//! the first element) and the slice must satisfy `-1 <= j <= i < n` (or be empty, `i == j`);
//! `s == 0` is an error. Leading indices (`a[i]`, `a[i, j]`) give views without copying; other
//! slices copy the selected elements.

use crate::error::{R_INDEX, R_INTERNAL, R_SIZE, R_SLICE};
use crate::val::{Array, Val};

/// One evaluated entry of an index list.
#[derive(Clone, Copy, Debug)]
pub enum IdxArg {
    At(i64),
    Slice {
        start: Option<i64>,
        end: Option<i64>,
        stride: Option<i64>,
    },
}

/// What went wrong, as an error code and a message (the caller adds the span).
pub struct IndexError {
    pub code: &'static str,
    pub message: String,
}

/// One dimension of a resolved index: a fixed position, or `count` positions `start + j*step`.
#[derive(Clone, Copy)]
enum Dim {
    At(usize),
    Range {
        start: usize,
        count: usize,
        step: isize,
    },
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

fn args_text(args: &[IdxArg]) -> String {
    let part = |a: &IdxArg| match *a {
        IdxArg::At(i) => i.to_string(),
        IdxArg::Slice { start, end, stride } => {
            let opt = |x: Option<i64>| x.map_or(String::new(), |x| x.to_string());
            match stride {
                Some(s) => format!("{}:{}:{s}", opt(start), opt(end)),
                None => format!("{}:{}", opt(start), opt(end)),
            }
        }
    };
    match args {
        [a] => part(a),
        _ => format!("[{}]", args.iter().map(part).collect::<Vec<_>>().join(", ")),
    }
}

/// Whether `args` index an array of `shape` (the error the interpreter would report if not).
pub fn check_index(shape: &[usize], args: &[IdxArg]) -> Result<(), IndexError> {
    resolve(shape, args).map(|_| ())
}

fn resolve(shape: &[usize], args: &[IdxArg]) -> Result<Vec<Dim>, IndexError> {
    if args.len() > shape.len() {
        return Err(IndexError {
            code: R_INTERNAL,
            message: format!(
                "{} indices for an array of rank {}",
                args.len(),
                shape.len()
            ),
        });
    }
    let out_of_bounds = |code, what| IndexError {
        code,
        message: format!(
            "{what} {} out of bounds for array of shape {}",
            args_text(args),
            shape_text(shape)
        ),
    };
    let mut dims = Vec::with_capacity(args.len());
    for (arg, &n) in args.iter().zip(shape) {
        let n_i = n as i128;
        dims.push(match *arg {
            IdxArg::At(i) => {
                if i < 0 || i as i128 >= n_i {
                    return Err(out_of_bounds(R_INDEX, "index"));
                }
                Dim::At(i as usize)
            }
            IdxArg::Slice { start, end, stride } => {
                let s = stride.unwrap_or(1) as i128;
                if s == 0 {
                    return Err(IndexError {
                        code: R_SLICE,
                        message: format!("slice {} has stride 0", args_text(args)),
                    });
                }
                let (i, j) = if s > 0 {
                    (start.map_or(0, i128::from), end.map_or(n_i, i128::from))
                } else {
                    (
                        start.map_or(n_i - 1, i128::from),
                        end.map_or(-1, i128::from),
                    )
                };
                let ok = if s > 0 {
                    0 <= i && i <= j && j <= n_i
                } else {
                    (i == j && -1 <= i && i <= n_i) || (-1 <= j && j < i && i < n_i)
                };
                if !ok {
                    return Err(out_of_bounds(R_SLICE, "slice"));
                }
                let count = if s > 0 {
                    (j - i + s - 1) / s
                } else {
                    (i - j - s - 1) / -s
                };
                Dim::Range {
                    start: i.max(0) as usize,
                    count: count as usize,
                    step: s as isize,
                }
            }
        });
    }
    Ok(dims)
}

/// The flat offsets (in the array's view) of the selected blocks, the shape of the selection
/// and the size of one block (the product of the dimensions not indexed).
fn positions(shape: &[usize], dims: &[Dim]) -> (Vec<usize>, Vec<usize>, usize) {
    let tail: usize = shape[dims.len()..].iter().product();
    let mut strides = vec![tail; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1];
    }
    let mut out_shape = Vec::new();
    let mut bases = vec![0usize];
    for (d, stride) in dims.iter().zip(&strides) {
        match *d {
            Dim::At(i) => bases.iter_mut().for_each(|b| *b += i * stride),
            Dim::Range { start, count, step } => {
                out_shape.push(count);
                bases = bases
                    .iter()
                    .flat_map(|&b| {
                        (0..count).map(move |j| {
                            let pos = start as isize + j as isize * step;
                            b + pos as usize * stride
                        })
                    })
                    .collect();
            }
        }
    }
    out_shape.extend_from_slice(&shape[dims.len()..]);
    (bases, out_shape, tail)
}

/// `a[args]`.
pub fn index<'a, F: Clone>(a: &Array<'a, F>, args: &[IdxArg]) -> Result<Val<'a, F>, IndexError> {
    let dims = resolve(a.shape(), args)?;
    let leading = dims.iter().take_while(|d| matches!(d, Dim::At(_))).count();
    if leading == dims.len() {
        // Only indices: an element or a view of the remaining dimensions.
        let (bases, out_shape, _) = positions(a.shape(), &dims);
        return Ok(if out_shape.is_empty() {
            a.elem(bases[0])
        } else {
            Val::Array(a.sub_view(out_shape, bases[0]))
        });
    }
    let (bases, out_shape, tail) = positions(a.shape(), &dims);
    if let [Dim::Range { step: 1, .. }] = dims[leading..] {
        // Indices then one unit-stride slice: contiguous.
        let offset = bases.first().copied().unwrap_or(0);
        return Ok(Val::Array(a.sub_view(out_shape, offset)));
    }
    let mut store = a.store().empty_like();
    let start = a.range().start;
    for b in bases {
        // Same element kind: cannot fail.
        let _ = store.extend_from(a.store(), start + b..start + b + tail);
    }
    Ok(Val::Array(Array::new(out_shape, store)))
}

/// `a with [args] = v`: writes in place when `a` owns its store alone.
pub fn update<'a, F: Clone>(
    mut a: Array<'a, F>,
    args: &[IdxArg],
    v: Val<'a, F>,
) -> Result<Array<'a, F>, IndexError> {
    let dims = resolve(a.shape(), args)?;
    let (bases, out_shape, tail) = positions(a.shape(), &dims);
    let ill_typed = || IndexError {
        code: R_INTERNAL,
        message: format!(
            "cannot store a value of type {} in this array",
            v.describe()
        ),
    };
    if out_shape.is_empty() {
        a.make_mut()
            .set(bases[0], v.clone())
            .map_err(|()| ill_typed())?;
        return Ok(a);
    }
    let src = match &v {
        Val::Array(src) if src.shape() == out_shape.as_slice() => src,
        _ => {
            return Err(IndexError {
                code: R_SIZE,
                message: format!(
                    "the value written has shape {}, but {} of an array of shape {} has shape {}",
                    match &v {
                        Val::Array(s) => shape_text(s.shape()),
                        other => other.describe(),
                    },
                    args_text(args),
                    shape_text(a.shape()),
                    shape_text(&out_shape),
                ),
            });
        }
    };
    let store = a.make_mut();
    for (k, b) in bases.iter().enumerate() {
        for t in 0..tail {
            store
                .set(b + t, src.elem(k * tail + t))
                .map_err(|()| ill_typed())?;
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{ArrayData, Scalar};

    type Val = super::Val<'static, std::convert::Infallible>;
    type Array = super::Array<'static, std::convert::Infallible>;
    type Store = crate::val::Store<'static, std::convert::Infallible>;

    fn matrix() -> Array {
        Array::new(vec![3, 4], Store::Prim(ArrayData::I64((0..12).collect())))
    }

    fn ints(v: &Val) -> Vec<i64> {
        match v {
            Val::Array(a) => (0..a.elem_count())
                .map(|i| match a.elem(i) {
                    Val::Prim(s) => s.as_i64(),
                    _ => panic!("not a scalar"),
                })
                .collect(),
            Val::Prim(s) => vec![s.as_i64()],
            _ => panic!("not an array"),
        }
    }

    fn sl(start: Option<i64>, end: Option<i64>, stride: Option<i64>) -> IdxArg {
        IdxArg::Slice { start, end, stride }
    }

    #[test]
    fn indices_and_views() {
        let m = matrix();
        assert_eq!(
            ints(&index(&m, &[IdxArg::At(1), IdxArg::At(2)]).ok().unwrap()),
            vec![6]
        );
        assert_eq!(
            ints(&index(&m, &[IdxArg::At(2)]).ok().unwrap()),
            vec![8, 9, 10, 11]
        );
        let col = index(&m, &[sl(None, None, None), IdxArg::At(1)])
            .ok()
            .unwrap();
        assert_eq!(ints(&col), vec![1, 5, 9]);
        let rev = index(&m, &[IdxArg::At(0), sl(None, None, Some(-1))])
            .ok()
            .unwrap();
        assert_eq!(ints(&rev), vec![3, 2, 1, 0]);
        let step = index(&m, &[IdxArg::At(1), sl(Some(3), Some(0), Some(-2))])
            .ok()
            .unwrap();
        assert_eq!(ints(&step), vec![7, 5]);
        let rows = index(&m, &[sl(Some(1), Some(3), None)]).ok().unwrap();
        assert_eq!(ints(&rows), (4..12).collect::<Vec<_>>());
        let empty = index(&m, &[sl(Some(2), Some(2), None)]).ok().unwrap();
        assert!(matches!(&empty, Val::Array(a) if a.shape() == [0, 4]));
    }

    #[test]
    fn bounds_errors() {
        let m = matrix();
        let e = index(&m, &[IdxArg::At(1), IdxArg::At(7)]).err().unwrap();
        assert_eq!(
            e.message,
            "index [1, 7] out of bounds for array of shape [3][4]"
        );
        let e = index(&m, &[IdxArg::At(-1)]).err().unwrap();
        assert_eq!(
            e.message,
            "index -1 out of bounds for array of shape [3][4]"
        );
        let e = index(&m, &[sl(Some(2), Some(1), None)]).err().unwrap();
        assert_eq!(e.code, super::R_SLICE);
        assert!(index(&m, &[sl(None, None, Some(0))]).is_err());
    }

    #[test]
    fn update_is_copy_on_write() {
        let m = matrix();
        let shared = m.clone();
        let u = update(
            m,
            &[IdxArg::At(0), IdxArg::At(0)],
            Val::Prim(Scalar::I64(-1)),
        )
        .ok()
        .unwrap();
        assert_eq!(ints(&Val::Array(u.clone()))[0], -1);
        assert_eq!(ints(&Val::Array(shared))[0], 0);
        let row = Val::Array(Array::from_data(ArrayData::I64(vec![7, 7].into())));
        let u = update(u, &[IdxArg::At(2), sl(Some(1), Some(3), None)], row)
            .ok()
            .unwrap();
        assert_eq!(ints(&Val::Array(u.clone()))[9..11], [7, 7]);
        let bad = Val::Array(Array::from_data(ArrayData::I64(vec![1].into())));
        assert!(update(u, &[IdxArg::At(0)], bad).is_err());
    }
}
