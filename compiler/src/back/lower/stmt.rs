//! Statements of a kernel body for any backend ([`Lower`]): scalar operations with their
//! division check, indexing with its bounds checks (the interpreter's order of checks and its
//! error details), the expressions that make arrays (size checks, then allocation, then the
//! elements), and the shape checks of reshapes, concatenations and updates.

use super::{Lower, Place, Res};
use crate::back::Unsupported;
use ogham_ir::abi::Failure;
use ogham_ir::types::PrimType;
use ogham_ir::{Body, DimIndex, Exp, Lambda, Stmt, SubExp, Type, VarId};

pub fn body<L: Lower>(l: &mut L, body: &Body) -> Res<Vec<L::Val>> {
    match l.order(body) {
        None => body.stmts.iter().try_for_each(|s| stmt(l, s))?,
        Some(order) => order.iter().try_for_each(|&k| stmt(l, &body.stmts[k]))?,
    }
    body.result.iter().map(|se| l.operand(*se)).collect()
}

/// The results of `body`, a branch of an `if` on `cond` taken when `cond` is `taken` (whose
/// indices the bounds proofs may prove in range by the condition).
pub fn branch<L: Lower>(l: &mut L, cond: SubExp, taken: bool, body: &Body) -> Res<Vec<L::Val>> {
    in_branch(l, cond, taken, |l| self::body(l, body))
}

/// What `emit` generates as the branch of an `if` on `cond` taken when `cond` is `taken`, with
/// the condition kept in the bounds proofs meanwhile.
pub fn in_branch<L: Lower, T>(
    l: &mut L,
    cond: SubExp,
    taken: bool,
    emit: impl FnOnce(&mut L) -> T,
) -> T {
    l.proofs().enter(cond, taken);
    let out = emit(l);
    l.proofs().leave(cond);
    out
}

/// The results of `lambda` applied to `args`.
pub fn apply<L: Lower>(l: &mut L, lambda: &Lambda, args: &[L::Val]) -> Res<Vec<L::Val>> {
    let frame = l.enter_lambda(&lambda.ret);
    for (p, a) in lambda.params.iter().zip(args) {
        l.bind(*p, a.clone());
    }
    let vals = body(l, &lambda.body)?;
    Ok(l.leave_lambda(frame, vals))
}

/// The extents of a type (its dimensions evaluated).
pub fn dims_of<L: Lower>(l: &mut L, ty: &ogham_ir::Type) -> Res<Vec<L::S>> {
    ty.shape().iter().map(|d| l.scalar(*d)).collect()
}

/// Checks that `0 <= n <= MAX_ELEMS` for a count of elements made by `what`.
pub fn check_size<L: Lower>(l: &mut L, n: &L::S, what: &str) -> Res<()> {
    let ok = l.count_ok(n);
    let failure = Failure::NegativeSize {
        what: what.to_string(),
    };
    l.check(ok, failure, std::slice::from_ref(n))
}

/// Checks that a point's array result has `row` elements (`count`), the number the runtime
/// allocated for each point's value of that output; details: `count`, then `row`.
pub fn check_point_result<L: Lower>(l: &mut L, count: L::S, row: L::S) -> Res<()> {
    let ok = l.equal(&count, &row);
    let failure = Failure::ShapeMismatch {
        what: "kernel result".to_string(),
        rank: 1,
    };
    l.check(ok, failure, &[count, row])
}

/// Checks that extents `actual` equal `expected` (a result or row of a known shape); details:
/// `actual` then `expected`.
pub fn check_same_shape<L: Lower>(
    l: &mut L,
    actual: &[L::S],
    expected: &[L::S],
    what: &str,
) -> Res<()> {
    if actual.is_empty() {
        return Ok(());
    }
    let mut ok = l.conj();
    for (a, e) in actual.iter().zip(expected) {
        let eq = l.equal(a, e);
        l.conj_add(&mut ok, eq);
    }
    let ok = l.conj_end(ok);
    let mut details = actual.to_vec();
    details.extend(expected.iter().cloned());
    let failure = Failure::ShapeMismatch {
        what: what.to_string(),
        rank: actual.len(),
    };
    l.check(ok, failure, &details)
}

/// An index of array `arr` (whose view is `view`): the element's place when every dimension is
/// fixed, otherwise a view. Checks the bounds as the interpreter does (details: the extents,
/// then per component its index, or a slice's start, length and stride), except in `#[unsafe]`
/// code and for indices the backend proves in range.
pub fn index<L: Lower>(
    l: &mut L,
    arr: VarId,
    view: &L::View,
    idx: &[DimIndex],
    update: bool,
) -> Res<Place<L::Elem, L::View>> {
    let mut ok = l.conj();
    let mut checked = false;
    let mut details = l.dims(view);
    let mut at = l.index_start(view);
    for (k, d) in idx.iter().enumerate() {
        match d {
            DimIndex::Fix(se) => {
                let i = l.scalar(*se)?;
                let dim = l.f().ty(arr).shape().get(k).copied();
                if !dim.is_some_and(|dim| l.proofs().within(*se, dim)) {
                    let inside = l.index_in_bounds(view, k, &i);
                    l.conj_add(&mut ok, inside);
                    checked = true;
                }
                details.push(i.clone());
                l.index_fix(&mut at, view, k, &i);
            }
            DimIndex::Slice { start, len, stride } => {
                let slice = [l.scalar(*start)?, l.scalar(*len)?, l.scalar(*stride)?];
                let valid = l.slice_ok(view, k, &slice);
                l.conj_add(&mut ok, valid);
                checked = true;
                details.extend(slice.iter().cloned());
                l.index_slice(&mut at, view, k, &slice);
            }
        }
    }
    let ok = l.conj_end(ok);
    let loc = l.checks().loc;
    if checked && super::bounds_checked(l.unchecked(), loc) {
        let failure = Failure::Index {
            rank: L::rank(view),
            idx: idx.to_vec(),
            update,
        };
        l.check(ok, failure, &details)?;
    }
    Ok(l.index_end(at, view, idx.len()))
}

pub fn stmt<L: Lower>(l: &mut L, stmt: &Stmt) -> Res<()> {
    l.checks().loc = stmt.loc;
    let pat = &stmt.pat;
    let prim = |l: &L, se: SubExp| l.f().subexp_type(se).elem();
    match &stmt.exp {
        Exp::SubExp(se) => {
            let x = l.operand(*se)?;
            l.bind(pat[0], x);
        }
        Exp::BinOp(op, a, b) => {
            let t = prim(l, *a);
            let (x, y) = (l.scalar(*a)?, l.scalar(*b)?);
            if op.is_division() && !t.is_float() {
                let nonzero = l.nonzero(&y);
                l.check(nonzero, Failure::DivByZero { op: *op }, &[])?;
            }
            let r = l.binop(*op, t, &x, &y)?;
            l.bind(pat[0], L::val(r));
        }
        Exp::UnOp(op, a) => {
            let t = prim(l, *a);
            let x = l.scalar(*a)?;
            let r = l.unop(*op, t, &x);
            l.bind(pat[0], L::val(r));
        }
        Exp::Math(f, t, args) => {
            let args: Vec<L::S> = args.iter().map(|a| l.scalar(*a)).collect::<Res<_>>()?;
            let r = l.math(*f, *t, &args);
            l.bind(pat[0], L::val(r));
        }
        Exp::Convert(to, a) => {
            let from = prim(l, *a);
            let x = l.scalar(*a)?;
            let r = l.convert(from, *to, &x);
            l.bind(pat[0], L::val(r));
        }
        Exp::Index(a, idx) => {
            let view = l.view(*a)?;
            let val = match index(l, *a, &view, idx, false)? {
                Place::Element(e) => l.load(&e),
                Place::View(v) => l.values(&v),
            };
            l.bind(pat[0], val);
        }
        Exp::Update(a, idx, v) => update(l, pat[0], *a, idx, *v)?,
        Exp::Iota(n) => {
            let n = l.scalar(*n)?;
            check_size(l, &n, "iota")?;
            let out = l.alloc(PrimType::I64, vec![n.clone()])?;
            l.fill_iota(&out, &n)?;
            let out = l.values(&out);
            l.bind(pat[0], out);
        }
        Exp::Replicate(n, v) => replicate(l, pat[0], *n, *v)?,
        Exp::ArrayLit(elems, elem_ty) => array_lit(l, pat[0], elems, elem_ty)?,
        Exp::Rearrange(a, perm) => l.rearrange(pat[0], *a, perm)?,
        Exp::Reshape(a, dims) => reshape(l, pat[0], *a, dims)?,
        Exp::Concat(arrays) => concat(l, pat[0], arrays)?,
        Exp::Copy(a) => {
            let view = l.view(*a)?;
            let dims = l.dims(&view);
            let out = l.alloc(L::elem(&view), dims)?;
            l.copy(&view, &out)?;
            let out = l.values(&out);
            l.bind(pat[0], out);
        }
        Exp::Assert {
            cond,
            message,
            kind,
        } => {
            let ok = l.scalar(*cond)?;
            let failure = Failure::Assert {
                message: message.clone(),
                kind: *kind,
            };
            l.check(ok, failure, &[])?;
        }
        // The compiled backends compile a trace as the identity: nothing to do (the warning
        // `W0730` tells the user, see `ogham::trace`).
        Exp::Trace { .. } => {}
        Exp::If {
            cond,
            then_body,
            else_body,
            ret,
        } => l.if_else(pat, *cond, then_body, else_body, ret)?,
        Exp::Loop { params, form, body } => l.run_loop(pat, params, form, body)?,
        Exp::Soac(soac) => l.soac(soac, pat)?,
        Exp::Host(core) => match *core {},
    }
    Ok(())
}

/// `a with [idx] = v` bound to `to`: an element store or a slice copy (shapes checked).
fn update<L: Lower>(l: &mut L, to: VarId, a: VarId, idx: &[DimIndex], v: SubExp) -> Res<()> {
    l.before_update();
    let view = l.view(a)?;
    let val = l.operand(v)?;
    match index(l, a, &view, idx, true)? {
        Place::Element(e) => l.store(&e, &val),
        Place::View(dst) => {
            let ty = l.f().subexp_type(v);
            if ty.rank() == 0 {
                return Err(Unsupported("an update of a slice by a scalar".to_string()));
            }
            let src = l.as_view(&val, ty.elem(), ty.rank());
            let (actual, expected) = (l.dims(&src), l.dims(&dst));
            check_same_shape(l, &actual, &expected, "update")?;
            l.copy(&src, &dst)?;
        }
    }
    let arr = l.values(&view);
    l.bind(to, arr);
    Ok(())
}

/// `replicate n v` bound to `to`: the count checked, then allocation, then the rows.
fn replicate<L: Lower>(l: &mut L, to: VarId, n: SubExp, v: SubExp) -> Res<()> {
    let n = l.scalar(n)?;
    check_size(l, &n, "replicate")?;
    let val = l.operand(v)?;
    let elem = l.f().ty(to).elem();
    let mut dims = vec![n.clone()];
    let rank = l.f().subexp_type(v).rank();
    if rank > 0 {
        dims.extend(l.dims(&l.as_view(&val, elem, rank)));
    }
    let out = l.alloc(elem, dims)?;
    l.fill_rows(&out, &n, &val)?;
    let out = l.values(&out);
    l.bind(to, out);
    Ok(())
}

/// An array literal bound to `to`, written row by row.
fn array_lit<L: Lower>(l: &mut L, to: VarId, elems: &[SubExp], elem_ty: &Type) -> Res<()> {
    let n = l.int(elems.len() as i64);
    let mut dims = vec![n];
    dims.extend(dims_of(l, elem_ty)?);
    let out = l.alloc(elem_ty.elem(), dims)?;
    l.single(&mut |l| {
        for (k, e) in elems.iter().enumerate() {
            let val = l.operand(*e)?;
            let i = l.int(k as i64);
            super::write_row(l, &out, &i, &val)?;
        }
        Ok(())
    })?;
    let out = l.values(&out);
    l.bind(to, out);
    Ok(())
}

/// `reshape` bound to `to`: extents compared at the same rank, element counts otherwise.
fn reshape<L: Lower>(l: &mut L, to: VarId, a: VarId, dims: &[SubExp]) -> Res<()> {
    let view = l.view(a)?;
    let have = l.dims(&view);
    let target: Vec<L::S> = dims.iter().map(|d| l.scalar(*d)).collect::<Res<_>>()?;
    // The same rank: extent by extent; otherwise the element counts.
    let ok = if target.len() == have.len() {
        let mut ok = l.conj();
        for (x, y) in have.iter().zip(&target) {
            let eq = l.equal(x, y);
            l.conj_add(&mut ok, eq);
        }
        l.conj_end(ok)
    } else {
        l.same_count(&view, &target)
    };
    let mut details = have.clone();
    details.extend(target.iter().cloned());
    let failure = Failure::Reshape {
        array: a,
        dims: dims.to_vec(),
    };
    l.check(ok, failure, &details)?;
    let copy = l.alloc(L::elem(&view), have)?;
    l.copy(&view, &copy)?;
    let out = l.reshaped(&copy, &target);
    l.bind(to, out);
    Ok(())
}

/// `concat` bound to `to`: the rows' shapes checked, then one copy per part.
fn concat<L: Lower>(l: &mut L, to: VarId, arrays: &[VarId]) -> Res<()> {
    let views: Vec<L::View> = arrays.iter().map(|a| l.view(*a)).collect::<Res<_>>()?;
    let rows = l.dims(&views[0]).split_off(1);
    let mut total = l.sum();
    for v in &views {
        let dims = l.dims(v);
        check_same_shape(l, &dims[1..], &rows, "concatenation")?;
        l.sum_add(&mut total, &dims[0]);
    }
    let mut dims = vec![l.sum_end(total)];
    dims.extend(rows);
    let out = l.alloc(L::elem(&views[0]), dims)?;
    l.copy_parts(&out, &views)?;
    let out = l.values(&out);
    l.bind(to, out);
    Ok(())
}
