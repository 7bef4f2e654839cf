//! The map nest that flattening distributes: the index space of the enclosing maps and where
//! each variable of the nest's bodies can be found from a kernel's point of view.
//!
//! A variable bound inside the nest is per point: in a kernel over the nest's space it is found
//! by indexing — a lambda parameter is a row of the map's input at that level's index, and a
//! value computed by an earlier kernel is an element of the *expanded* array that kernel
//! returned (the value at every point, with one extra dimension per level), and a cheap scalar
//! is computed again from its operands ([`Nest::recompute`]). [`Nest::resolve`] binds such a
//! variable afresh at the start of a kernel body.

use ogham_ir::source::Span;
use ogham_ir::traverse::{Subst, for_each_operand, substitute_exp};
use ogham_ir::{DimIndex, Exp, Function, Stmt, SubExp, Type, VarId};
use std::collections::{HashMap, HashSet};

/// Why a nest cannot be distributed: a size that differs between the nest's points (the
/// expanded arrays would be irregular). The caller keeps the code sequential instead.
#[derive(Debug)]
pub struct Irregular;

/// Where a per-point variable comes from.
#[derive(Clone, Debug)]
enum Source {
    /// A row of `input` (a host array, or a per-point one) at the index of level `level`.
    Row { input: VarId, level: usize },
    /// `array[i_0, ..., i_{levels-1}]`: a value computed by an earlier kernel.
    Expanded { array: VarId, levels: usize },
    /// A scalar that every kernel needing it computes again by this expression (cheap and
    /// unable to fail; its operands are resolved in turn).
    Computed(Box<Exp>),
}

/// The enclosing maps (outermost first) of the code being distributed.
#[derive(Clone, Debug, Default)]
pub struct Nest {
    /// The width of each level.
    levels: Vec<SubExp>,
    sources: HashMap<VarId, Source>,
    /// Every variable bound inside the nest's bodies that is not yet in `sources`: such a
    /// variable is per point too, so a size mentioning it is irregular.
    local: HashSet<VarId>,
}

impl Nest {
    /// The empty nest (host level) around code that binds the variables `local`.
    pub fn new(local: impl IntoIterator<Item = VarId>) -> Nest {
        Nest {
            local: local.into_iter().collect(),
            ..Nest::default()
        }
    }

    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    pub fn widths(&self) -> Vec<SubExp> {
        self.levels.clone()
    }

    /// This nest with one more level of width `width` whose lambda parameters `params` are
    /// rows of `inputs`.
    pub fn with_level(&self, width: SubExp, params: &[VarId], inputs: &[VarId]) -> Nest {
        let mut inner = self.clone();
        let level = inner.levels.len();
        inner.levels.push(width);
        for (&param, &input) in params.iter().zip(inputs) {
            inner.sources.insert(param, Source::Row { input, level });
        }
        inner
    }

    /// The lambda parameters of the nest's levels (rows of arrays that exist whether or not
    /// the nest has any point).
    pub fn row_params(&self) -> impl Iterator<Item = VarId> + '_ {
        self.sources
            .iter()
            .filter(|(_, source)| matches!(source, Source::Row { .. }))
            .map(|(&v, _)| v)
    }

    /// Whether `se` may differ between the points of the nest.
    pub fn is_variant(&self, se: SubExp) -> bool {
        se.as_var()
            .is_some_and(|v| self.sources.contains_key(&v) || self.local.contains(&v))
    }

    /// Whether a type's dimensions are the same at every point.
    pub fn is_regular(&self, ty: &Type) -> bool {
        ty.shape().iter().all(|&d| !self.is_variant(d))
    }

    /// Whether `v` is per point and bound outside the code being placed (so a kernel must bind
    /// it by indexing).
    pub fn is_outer(&self, v: VarId) -> bool {
        self.sources.contains_key(&v)
    }

    /// Records that the per-point variable `var` is `array[i_0, ..., i_{d-1}]` for the current
    /// depth `d` (at depth 0, `array` is `var` itself and nothing is recorded).
    pub fn expand(&mut self, var: VarId, array: VarId) {
        if self.depth() > 0 {
            self.sources.insert(
                var,
                Source::Expanded {
                    array,
                    levels: self.depth(),
                },
            );
        }
    }

    /// The array holding `v` at every point of the nest, if an earlier kernel computed one.
    pub fn expanded(&self, v: VarId) -> Option<VarId> {
        match self.sources.get(&v) {
            Some(&Source::Expanded { array, levels }) if levels == self.depth() => Some(array),
            None if self.depth() == 0 => Some(v),
            _ => None,
        }
    }

    /// The array whose rows at the nest's indices are the lambda parameter `v` (the map's
    /// input itself, or its expansion), if there is one.
    pub fn input_rows(&self, v: VarId) -> Option<VarId> {
        self.expansion(v, self.depth())
    }

    /// The array `a` with `v = a[i_0, ..., i_{levels-1}]`, when one exists without a kernel.
    fn expansion(&self, v: VarId, levels: usize) -> Option<VarId> {
        match self.sources.get(&v) {
            None if levels == 0 => Some(v),
            Some(&Source::Expanded { array, levels: l }) if l == levels => Some(array),
            Some(&Source::Row { input, level }) if level + 1 == levels => {
                self.expansion(input, level)
            }
            _ => None,
        }
    }

    /// Records that the per-point scalar `v` is computed by `exp` in every kernel that needs it
    /// (rather than by a kernel of its own, stored, and read back).
    pub fn recompute(&mut self, v: VarId, exp: Exp) {
        self.sources.insert(v, Source::Computed(Box::new(exp)));
    }

    /// Declares that `v` (a loop index interchanged out of the nest) is now bound on the host.
    pub fn hoist(&mut self, v: VarId) {
        self.local.remove(&v);
    }

    /// The operand standing for the per-point variable `v` in a kernel whose space indices are
    /// `indices` (one per level): binds it by indexing into `binds` (once, through `memo`). The
    /// first kernel to bind a variable binds the variable itself (so that the types of the code
    /// placed with it stay valid); later ones bind a fresh copy. `claimed` records which are
    /// bound already.
    pub fn resolve(
        &self,
        function: &mut Function,
        claimed: &mut HashSet<VarId>,
        v: VarId,
        indices: &[VarId],
        memo: &mut HashMap<VarId, SubExp>,
        binds: &mut Vec<Stmt>,
    ) -> Result<SubExp, Irregular> {
        if let Some(&se) = memo.get(&v) {
            return Ok(se);
        }
        let fix = |indices: &[VarId]| -> Vec<DimIndex> {
            indices
                .iter()
                .map(|&i| DimIndex::Fix(SubExp::Var(i)))
                .collect()
        };
        let exp = match self.sources[&v].clone() {
            Source::Row { input, level } => {
                let array = if self.sources.contains_key(&input) {
                    match self.resolve(function, claimed, input, indices, memo, binds)? {
                        SubExp::Var(a) => a,
                        SubExp::Const(_) => return Err(Irregular),
                    }
                } else {
                    input
                };
                Exp::Index(array, fix(&indices[level..=level]))
            }
            Source::Expanded { array, levels } => Exp::Index(array, fix(&indices[..levels])),
            Source::Computed(exp) => {
                let mut exp = *exp;
                let mut operands = Vec::new();
                for_each_operand(&exp, &mut |se| operands.extend(se.as_var()));
                let mut subst = Subst::new();
                for u in operands
                    .into_iter()
                    .filter(|u| self.sources.contains_key(u))
                {
                    let se = self.resolve(function, claimed, u, indices, memo, binds)?;
                    subst.insert(u, se);
                }
                substitute_exp(&mut exp, &subst);
                exp
            }
        };
        let info = function.var(v).clone();
        if !self.is_regular(&info.ty) {
            return Err(Irregular);
        }
        let fresh = if claimed.insert(v) {
            v
        } else {
            function.new_var(info.name, info.ty)
        };
        binds.push(Stmt {
            pat: vec![fresh],
            exp,
            loc: Span::default(),
        });
        memo.insert(v, SubExp::Var(fresh));
        Ok(SubExp::Var(fresh))
    }
}
