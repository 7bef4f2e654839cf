//! The arrays of a function that hold consecutive indices, for the kernel-IR passes that
//! recognise a SOAC input's element as an index (`narrow`, `index_inputs`): `iota(n)`, and
//! slices of stride 1 of such an array, `iota_n[lo:+w*1]`.
//!
//! Invariant relied on: single binding (each variable is bound once, so a variable found here
//! holds those values wherever it is in scope).

use ogham_ir::kir::HostBody;
use ogham_ir::{Const, DimIndex, Exp, Stmt, SubExp, VarId};
use std::collections::HashMap;

/// An array whose element `j` is `start + j`, for `j` in `0 .. len`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct IotaView {
    pub start: SubExp,
    pub len: SubExp,
}

impl IotaView {
    /// Whether the element is its own index over `0 .. width`: `iota(width)` or a slice of one
    /// starting at 0 with that width.
    pub fn is_iota_of(&self, width: SubExp) -> bool {
        self.start == SubExp::i64(0) && self.len == width
    }
}

/// Every variable of `body`, at any depth, bound to `iota(n)` or to a stride-1 slice of one.
pub fn iota_views(body: &HostBody) -> HashMap<VarId, IotaView> {
    let mut views = HashMap::new();
    ogham_ir::traverse::walk(body, &mut Collector(&mut views));
    views
}

struct Collector<'a>(&'a mut HashMap<VarId, IotaView>);

impl<'b> ogham_ir::traverse::Visitor<'b> for Collector<'_> {
    fn stmt<H: ogham_ir::Form>(&mut self, stmt: &'b Stmt<H>) {
        let view = match (&stmt.pat[..], &stmt.exp) {
            (&[_], Exp::Iota(n)) => IotaView {
                start: SubExp::i64(0),
                len: *n,
            },
            (&[_], Exp::Index(a, idx)) => match (self.0.get(a), &idx[..]) {
                (
                    Some(base),
                    &[
                        DimIndex::Slice {
                            start,
                            len,
                            stride: SubExp::Const(Const::I64(1)),
                        },
                    ],
                ) if base.start == SubExp::i64(0) => IotaView { start, len },
                _ => return,
            },
            _ => return,
        };
        self.0.insert(stmt.pat[0], view);
    }
}
