//! The meaning of every built-in of `ogham_compiler::builtins` (the table: names, type schemes,
//! arities; messages name a built-in by `ArrayFn::name`).
//!
//! Reference order: `reduce`, `reduce_comm` and `scan` apply the operator left to right,
//! sequentially (`op (op (op ne x0) x1) x2`); `hist` and `reduce_by_index` combine the values in
//! index order; `scatter` writes in index order (a later write to the same position wins).
//! Out-of-bounds indices in `scatter`, `hist` and `reduce_by_index` are ignored. Arrays that must
//! have equal lengths (`map2`, `zip`, `scatter`'s indices and values, ...) are checked at run time.
//! `copy` returns its argument: arrays are copied on their first in-place update anyway.

use super::eval::{Interp, as_array, as_int, shape_text};
use super::value::{Array, Builder, Env, Store, Val, empty_array};
use ogham_compiler::builtins::{ArrayFn, Builtin};
use ogham_ir::sizes;
use ogham_ir::source::Span;
use ogham_ir::types::Type;
use ogham_runtime::error::{R_INTERNAL, R_NEG_SIZE, R_SIZE, Res, error};
use ogham_runtime::memory;
use ogham_runtime::scalar;
use ogham_runtime::value::{ArrayData, Scalar};

/// The result type of a function type after `n` arguments.
fn result_type(ty: &Type, n: usize) -> &Type {
    let mut t = ty;
    for _ in 0..n {
        match t {
            Type::Fun(_, r) => t = r,
            _ => break,
        }
    }
    t
}

/// An empty array with rows shaped like `row`.
fn empty_like<'a>(row: &Val<'a>) -> Array<'a> {
    match row {
        Val::Prim(s) => Array::from_data(ArrayData::with_capacity(s.prim_type(), 0)),
        Val::Array(a) => {
            let mut shape = vec![0];
            shape.extend_from_slice(a.shape());
            Array::new(shape, a.store().empty_like())
        }
        _ => Array::new(vec![0], Store::Boxed(Vec::new())),
    }
}

/// An empty array with the rows of `a` (same row shape and element kind).
fn empty_rows<'a>(a: &Array<'a>) -> Array<'a> {
    let mut shape = a.shape().to_vec();
    shape[0] = 0;
    Array::new(shape, a.store().empty_like())
}

fn check_count(n: i64, what: &str, span: Span) -> Res<usize> {
    sizes::count(n).map_err(|e| error(R_NEG_SIZE, span, e.message(what)))
}

fn same_lengths(fname: &str, arrays: &[Array<'_>], span: Span) -> Res<usize> {
    let n = arrays.first().map_or(0, Array::len);
    if let Some(bad) = arrays.iter().find(|a| a.len() != n) {
        return Err(error(
            R_SIZE,
            span,
            format!(
                "{fname}: arrays of different lengths ({n} and {}; shapes {} and {})",
                bad.len(),
                shape_text(arrays[0].shape()),
                shape_text(bad.shape())
            ),
        ));
    }
    Ok(n)
}

impl<'a> Interp<'a> {
    /// Calls built-in `b` with all its arguments; `ty` is the type of this use of its name.
    pub fn call_builtin(
        &self,
        b: Builtin,
        ty: &Type,
        env: &Env<'a>,
        args: Vec<Val<'a>>,
        span: Span,
    ) -> Res<Val<'a>> {
        let ill_typed = || error(R_INTERNAL, span, format!("ill-typed arguments to {b:?}"));
        match b {
            Builtin::Array(f) => self.array_fn(f, result_type(ty, b.arity()), env, args, span),
            Builtin::Math { op, .. } => {
                let r = match args.as_slice() {
                    [Val::Prim(x)] => scalar::math(op, &[*x]),
                    [Val::Prim(x), Val::Prim(y)] => scalar::math(op, &[*x, *y]),
                    _ => return Err(ill_typed()),
                };
                r.map(Val::Prim).map_err(|_| ill_typed())
            }
            Builtin::Convert { to, .. } => match args.as_slice() {
                [Val::Prim(x)] => Ok(Val::Prim(scalar::convert(*x, to))),
                _ => Err(ill_typed()),
            },
            Builtin::Const { op, ty } => scalar::constant(op, ty)
                .map(Val::Prim)
                .ok_or_else(ill_typed),
            Builtin::Generic(_) => Err(ill_typed()),
        }
    }

    fn array_fn(
        &self,
        f: ArrayFn,
        result: &Type,
        env: &Env<'a>,
        args: Vec<Val<'a>>,
        span: Span,
    ) -> Res<Val<'a>> {
        let mut args = Args {
            args: args.into_iter(),
            span,
        };
        let args = &mut args;
        match f {
            ArrayFn::Map(k) => self.map(k, result, env, args),
            ArrayFn::Reduce | ArrayFn::ReduceComm => self.reduce(args),
            ArrayFn::Scan => self.scan(args),
            ArrayFn::Scatter => scatter(args),
            ArrayFn::Hist => {
                let (op, ne, k) = (args.next()?, args.next()?, args.int()?);
                let (is, vs) = (args.array()?, args.array()?);
                self.check_laws(&f.name(), &op, &ne, &vs, span);
                let dest = replicate(check_count(k, &f.name(), span)?, &ne, span)?;
                self.reduce_by_index(dest, op, is, vs, span)
            }
            ArrayFn::ReduceByIndex => {
                let (dest, op, ne) = (args.array()?, args.next()?, args.next()?);
                let (is, vs) = (args.array()?, args.array()?);
                self.check_laws(&f.name(), &op, &ne, &vs, span);
                self.reduce_by_index(dest, op, is, vs, span)
            }
            ArrayFn::Filter => self.filter(args),
            ArrayFn::Partition => self.partition(args),
            ArrayFn::Iota => {
                let n = check_count(args.int()?, &f.name(), span)?;
                memory::reserve(n, 8, &f.name(), span)?;
                Ok(Val::Array(Array::from_data(ArrayData::I64(
                    (0..n as i64).collect(),
                ))))
            }
            ArrayFn::Replicate => {
                let n = args.int()?;
                let x = args.next()?;
                let n = check_count(n, &f.name(), span)?;
                Ok(Val::Array(replicate(n, &x, span)?))
            }
            ArrayFn::Zip(k) => zip(k, args),
            ArrayFn::Unzip(k) => self.unzip(k, result, env, args),
            ArrayFn::Transpose => Ok(Val::Array(transpose(args.array()?))),
            ArrayFn::Flatten => Ok(Val::Array(flatten(args.array()?))),
            ArrayFn::Unflatten => unflatten(args),
            ArrayFn::Concat => concat(args),
            ArrayFn::Reverse => Ok(Val::Array(reverse(args.array()?))),
            ArrayFn::Rotate => rotate(args),
            ArrayFn::Length => Ok(Val::Prim(Scalar::I64(args.array()?.len() as i64))),
            ArrayFn::Copy => args.next(),
        }
    }

    /// `map` and `mapK`: `g` applied to the rows of `k` arrays of the same length.
    fn map(&self, k: u8, result: &Type, env: &Env<'a>, args: &mut Args<'a>) -> Res<Val<'a>> {
        let span = args.span;
        let g = args.next()?;
        let arrays = (0..k).map(|_| args.array()).collect::<Res<Vec<_>>>()?;
        let n = same_lengths(&ArrayFn::Map(k).name(), &arrays, span)?;
        // The result has an element (of a byte or more) per row.
        memory::reserve(n, 1, "the result of a map", span)?;
        let mut out = Builder::new(n);
        for i in 0..n {
            let row = self.apply(g.clone(), arrays.iter().map(|a| a.row(i)).collect(), span)?;
            self.push_row(&mut out, row, span)?;
        }
        Ok(Val::Array(out.finish(|| empty_array(result, env))))
    }

    /// `reduce` and `reduce_comm`: the operator applied left to right.
    fn reduce(&self, args: &mut Args<'a>) -> Res<Val<'a>> {
        let span = args.span;
        let (op, mut acc, xs) = (args.next()?, args.next()?, args.array()?);
        self.check_laws(&ArrayFn::Reduce.name(), &op, &acc, &xs, span);
        for i in 0..xs.len() {
            acc = self.apply(op.clone(), vec![acc, xs.row(i)], span)?;
        }
        Ok(acc)
    }

    /// `scan`: the inclusive prefixes, left to right.
    fn scan(&self, args: &mut Args<'a>) -> Res<Val<'a>> {
        let span = args.span;
        let (op, mut acc, xs) = (args.next()?, args.next()?, args.array()?);
        self.check_laws(&ArrayFn::Scan.name(), &op, &acc, &xs, span);
        let empty = empty_like(&acc);
        let mut out = Builder::new(xs.len());
        for i in 0..xs.len() {
            acc = self.apply(op.clone(), vec![acc, xs.row(i)], span)?;
            self.push_row(&mut out, acc.clone(), span)?;
        }
        Ok(Val::Array(out.finish(|| empty)))
    }

    /// `filter`: the rows the predicate holds for, in order.
    fn filter(&self, args: &mut Args<'a>) -> Res<Val<'a>> {
        let span = args.span;
        let (p, xs) = (args.next()?, args.array()?);
        let mut out = Builder::new(0);
        for i in 0..xs.len() {
            if self.test(&p, xs.row(i), span)? {
                self.push_row(&mut out, xs.row(i), span)?;
            }
        }
        Ok(Val::Array(out.finish(|| empty_rows(&xs))))
    }

    /// `partition`: the rows the predicate holds for, then the others, each in order.
    fn partition(&self, args: &mut Args<'a>) -> Res<Val<'a>> {
        let span = args.span;
        let (p, xs) = (args.next()?, args.array()?);
        let (mut yes, mut no) = (Builder::new(0), Builder::new(0));
        for i in 0..xs.len() {
            let side = if self.test(&p, xs.row(i), span)? {
                &mut yes
            } else {
                &mut no
            };
            self.push_row(side, xs.row(i), span)?;
        }
        Ok(Val::tuple(vec![
            Val::Array(yes.finish(|| empty_rows(&xs))),
            Val::Array(no.finish(|| empty_rows(&xs))),
        ]))
    }

    /// `unzip` and `unzipK`: an array of `k`-tuples as `k` arrays.
    fn unzip(&self, k: u8, result: &Type, env: &Env<'a>, args: &mut Args<'a>) -> Res<Val<'a>> {
        let span = args.span;
        let xs = args.array()?;
        let mut outs: Vec<Builder<'a>> = (0..k).map(|_| Builder::new(xs.len())).collect();
        for i in 0..xs.len() {
            let Val::Tuple(parts) = xs.row(i) else {
                return Err(error(R_INTERNAL, span, "unzip of an array of non-tuples"));
            };
            for (out, part) in outs.iter_mut().zip(parts.iter()) {
                self.push_row(out, part.clone(), span)?;
            }
        }
        let types: Vec<&Type> = match result {
            Type::Tuple(ts) => ts.iter().collect(),
            _ => Vec::new(),
        };
        Ok(Val::tuple(
            outs.into_iter()
                .enumerate()
                .map(|(c, out)| {
                    Val::Array(
                        out.finish(|| empty_array(types.get(c).copied().unwrap_or(result), env)),
                    )
                })
                .collect(),
        ))
    }

    fn test(&self, p: &Val<'a>, x: Val<'a>, span: Span) -> Res<bool> {
        match self.apply(p.clone(), vec![x], span)? {
            Val::Prim(Scalar::Bool(b)) => Ok(b),
            _ => Err(error(R_INTERNAL, span, "predicate did not return a bool")),
        }
    }

    /// `dest[is[j]] = op dest[is[j]] vs[j]` for every in-bounds `is[j]`, in order.
    fn reduce_by_index(
        &self,
        mut dest: Array<'a>,
        op: Val<'a>,
        is: Array<'a>,
        vs: Array<'a>,
        span: Span,
    ) -> Res<Val<'a>> {
        same_lengths(
            &ArrayFn::ReduceByIndex.name(),
            &[is.clone(), vs.clone()],
            span,
        )?;
        for j in 0..is.len() {
            let i = as_int(is.row(j), span)?;
            let Ok(i) = usize::try_from(i) else { continue };
            if i >= dest.len() {
                continue;
            }
            // An owned copy of the row, so that `dest` keeps sole ownership of its store.
            let current = match dest.row(i) {
                Val::Array(row) => Val::Array(Array::new(row.shape().to_vec(), row.to_store())),
                other => other,
            };
            let combined = self.apply(op.clone(), vec![current, vs.row(j)], span)?;
            write_row(&mut dest, i, combined, span)?;
        }
        Ok(Val::Array(dest))
    }
}

/// The arguments of a call to a built-in, taken in order.
struct Args<'a> {
    args: std::vec::IntoIter<Val<'a>>,
    span: Span,
}

impl<'a> Args<'a> {
    fn next(&mut self) -> Res<Val<'a>> {
        self.args
            .next()
            .ok_or_else(|| error(R_INTERNAL, self.span, "missing argument"))
    }

    fn array(&mut self) -> Res<Array<'a>> {
        as_array(self.next()?, self.span)
    }

    fn int(&mut self) -> Res<i64> {
        as_int(self.next()?, self.span)
    }
}

/// `scatter dest is vs`: in index order, out-of-bounds indices ignored.
fn scatter<'a>(args: &mut Args<'a>) -> Res<Val<'a>> {
    let span = args.span;
    let (dest, is, vs) = (args.array()?, args.array()?, args.array()?);
    same_lengths(&ArrayFn::Scatter.name(), &[is.clone(), vs.clone()], span)?;
    let mut dest = dest;
    for j in 0..is.len() {
        let i = as_int(is.row(j), span)?;
        if let Ok(i) = usize::try_from(i)
            && i < dest.len()
        {
            write_row(&mut dest, i, vs.row(j), span)?;
        }
    }
    Ok(Val::Array(dest))
}

/// `zip` and `zipK`: `k` arrays of the same length as an array of `k`-tuples.
fn zip<'a>(k: u8, args: &mut Args<'a>) -> Res<Val<'a>> {
    let arrays = (0..k).map(|_| args.array()).collect::<Res<Vec<_>>>()?;
    let n = same_lengths(&ArrayFn::Zip(k).name(), &arrays, args.span)?;
    let rows = (0..n)
        .map(|i| Val::tuple(arrays.iter().map(|a| a.row(i)).collect()))
        .collect();
    Ok(Val::Array(Array::new(vec![n], Store::Boxed(rows))))
}

/// The first two dimensions swapped (an array of rank below 2 unchanged).
fn transpose(xs: Array<'_>) -> Array<'_> {
    if xs.rank() < 2 {
        return xs;
    }
    let (n, m) = (xs.shape()[0], xs.shape()[1]);
    let block: usize = xs.shape()[2..].iter().product();
    let mut store = xs.store().empty_like();
    let start = xs.range().start;
    for j in 0..m {
        for i in 0..n {
            let from = start + (i * m + j) * block;
            let _ = store.extend_from(xs.store(), from..from + block);
        }
    }
    let mut shape = xs.shape().to_vec();
    shape.swap(0, 1);
    Array::new(shape, store)
}

/// The first two dimensions merged (an array of rank below 2 unchanged).
fn flatten(xs: Array<'_>) -> Array<'_> {
    if xs.rank() < 2 {
        return xs;
    }
    let mut shape = vec![xs.shape()[0] * xs.shape()[1]];
    shape.extend_from_slice(&xs.shape()[2..]);
    xs.reshape(shape)
}

/// `unflatten n m xs`: the outer dimension split into `n` by `m`.
fn unflatten<'a>(args: &mut Args<'a>) -> Res<Val<'a>> {
    let span = args.span;
    let (n, m) = (args.int()?, args.int()?);
    let xs = args.array()?;
    let name = ArrayFn::Unflatten.name();
    let (n, m) = (check_count(n, &name, span)?, check_count(m, &name, span)?);
    if n.checked_mul(m) != Some(xs.len()) {
        return Err(error(
            R_SIZE,
            span,
            format!(
                "{name} {n} {m}: the array has {} elements, not {n}×{m}",
                xs.len()
            ),
        ));
    }
    let mut shape = vec![n, m];
    shape.extend_from_slice(&xs.shape()[1..]);
    Ok(Val::Array(xs.reshape(shape)))
}

/// `concat xs ys`: the rows of `xs`, then those of `ys` (of the same shape).
fn concat<'a>(args: &mut Args<'a>) -> Res<Val<'a>> {
    let span = args.span;
    let (xs, ys) = (args.array()?, args.array()?);
    if xs.is_empty() {
        return Ok(Val::Array(ys));
    }
    if ys.is_empty() {
        return Ok(Val::Array(xs));
    }
    if xs.shape()[1..] != ys.shape()[1..] {
        return Err(error(
            R_SIZE,
            span,
            format!(
                "{}: rows of different shapes ({} and {})",
                ArrayFn::Concat.name(),
                shape_text(&xs.shape()[1..]),
                shape_text(&ys.shape()[1..])
            ),
        ));
    }
    let mut store = xs.to_store();
    store
        .extend_from(ys.store(), ys.range())
        .map_err(|()| error(R_INTERNAL, span, "concat of arrays of different types"))?;
    let mut shape = xs.shape().to_vec();
    shape[0] += ys.len();
    Ok(Val::Array(Array::new(shape, store)))
}

/// The rows in reverse order.
fn reverse(xs: Array<'_>) -> Array<'_> {
    let rs = xs.row_size();
    let mut store = xs.store().empty_like();
    let start = xs.range().start;
    for i in (0..xs.len()).rev() {
        let _ = store.extend_from(xs.store(), start + i * rs..start + (i + 1) * rs);
    }
    Array::new(xs.shape().to_vec(), store)
}

/// `rotate r xs`: row `i` of the result is row `(i + r) mod n` of `xs`.
fn rotate<'a>(args: &mut Args<'a>) -> Res<Val<'a>> {
    let r = args.int()?;
    let xs = args.array()?;
    let n = xs.len();
    if n == 0 {
        return Ok(Val::Array(xs));
    }
    let shift = r.rem_euclid(n as i64) as usize;
    let (rs, start) = (xs.row_size(), xs.range().start);
    let mut store = xs.store().empty_like();
    let _ = store.extend_from(xs.store(), start + shift * rs..start + n * rs);
    let _ = store.extend_from(xs.store(), start..start + shift * rs);
    Ok(Val::Array(Array::new(xs.shape().to_vec(), store)))
}

/// `dest[i] = row` in place (copy on write).
fn write_row<'a>(dest: &mut Array<'a>, i: usize, row: Val<'a>, span: Span) -> Res<()> {
    let rs = dest.row_size();
    let row_shape = dest.shape()[1..].to_vec();
    match row {
        Val::Array(src) => {
            if src.shape() != row_shape.as_slice() {
                return Err(error(
                    R_SIZE,
                    span,
                    format!(
                        "a row of shape {} written into an array of shape {}",
                        shape_text(src.shape()),
                        shape_text(dest.shape())
                    ),
                ));
            }
            let store = dest.make_mut();
            for t in 0..rs {
                store
                    .set(i * rs + t, src.elem(t))
                    .map_err(|()| error(R_INTERNAL, span, "row of another element type"))?;
            }
        }
        v => dest
            .make_mut()
            .set(i, v)
            .map_err(|()| error(R_INTERNAL, span, "element of another type"))?,
    }
    Ok(())
}

/// `n` copies of `x` as an array.
fn replicate<'a>(n: usize, x: &Val<'a>, span: Span) -> Res<Array<'a>> {
    let name = ArrayFn::Replicate.name();
    Ok(match x {
        Val::Prim(s) => {
            memory::reserve(n, s.prim_type().byte_size(), &name, span)?;
            Array::from_data(fill(*s, n))
        }
        Val::Array(a) => {
            let Some(total) = sizes::replicated(n, a.elem_count()) else {
                let message = format!("{name}: the result is too large");
                return Err(error(R_NEG_SIZE, span, message));
            };
            let elem_size = match a.store() {
                Store::Prim(d) => d.prim_type().byte_size(),
                Store::Boxed(_) => size_of::<Val<'a>>(),
            };
            memory::reserve(total, elem_size, &name, span)?;
            let mut store = a.store().empty_like();
            // Copies of an empty row add nothing: no loop over up to 2^32 of them.
            if total > 0 {
                for _ in 0..n {
                    let _ = store.extend_from(a.store(), a.range());
                }
            }
            let mut shape = vec![n];
            shape.extend_from_slice(a.shape());
            Array::new(shape, store)
        }
        other => {
            memory::reserve(n, size_of::<Val<'a>>(), &name, span)?;
            Array::new(vec![n], Store::Boxed(vec![other.clone(); n]))
        }
    })
}

fn fill(s: Scalar, n: usize) -> ArrayData {
    match s {
        Scalar::Bool(x) => ArrayData::Bool(vec![x; n].into()),
        Scalar::I8(x) => ArrayData::I8(vec![x; n].into()),
        Scalar::I16(x) => ArrayData::I16(vec![x; n].into()),
        Scalar::I32(x) => ArrayData::I32(vec![x; n].into()),
        Scalar::I64(x) => ArrayData::I64(vec![x; n].into()),
        Scalar::U8(x) => ArrayData::U8(vec![x; n].into()),
        Scalar::F32(x) => ArrayData::F32(vec![x; n].into()),
        Scalar::F64(x) => ArrayData::F64(vec![x; n].into()),
    }
}
