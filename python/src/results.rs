//! The named parts of an entry point's results, as Python sees them: a tuple, a record, or an
//! array of tuples or records is given to Python as its components, named `result0`, ... for a
//! tuple and by field for a record, record fields in the order the entry's written return type
//! declares them.
//!
//! Invariants relied on: the runtime represents such a result as a `Value::Tuple` of its
//! components in the type's order (record fields sorted by name; arrays of them as arrays of
//! each component, see `convert::components`), and `EntryInfo::fields` holds, per result,
//! the declared field order of a record result (empty: the type's order). Only a result's own
//! level is reordered: records nested deeper keep the type's (sorted) order.

use crate::convert::{components, dims_of};
use ogham::cache::EntryInfo;
use ogham::ir::types::Type;
use ogham::runtime::value::Value;

/// One part of a result: its name, type and position in the runtime's tuple.
pub struct Part {
    pub name: String,
    pub ty: Type,
    pub index: usize,
}

/// The parts of result `ty` in declared order (`declared`: its record's fields as written, or
/// empty), or `None` when the result is not a tuple, a record or an array of them (the unit
/// tuple `()` included).
pub fn parts(ty: &Type, declared: &[String]) -> Option<Vec<Part>> {
    let types = components(ty).filter(|ts| !ts.is_empty())?;
    let names: Vec<String> = match dims_of(ty).1 {
        Type::Record(fields) => fields.iter().map(|(name, _)| name.clone()).collect(),
        _ => (0..types.len()).map(|i| format!("result{i}")).collect(),
    };
    let mut parts: Vec<Part> = names
        .into_iter()
        .zip(types)
        .enumerate()
        .map(|(index, (name, ty))| Part { name, ty, index })
        .collect();
    // Only an order of exactly the type's fields is followed (an alias the checker followed by
    // name could, in a contrived program, be another record than the result's).
    let same_fields =
        declared.len() == parts.len() && parts.iter().all(|p| declared.contains(&p.name));
    if same_fields {
        parts.sort_by_key(|p| declared.iter().position(|d| *d == p.name));
    }
    Some(parts)
}

/// The declared field order of result `i` of `info` (empty: the type's order).
pub fn declared(info: &EntryInfo, i: usize) -> &[String] {
    info.fields.get(i).map_or(&[], Vec::as_slice)
}

/// Output `value` of result `i` with its parts in declared order (see [`parts`]).
pub fn in_declared_order(info: &EntryInfo, i: usize, value: Value) -> Value {
    let order = info
        .results
        .get(i)
        .and_then(|t| parts(t, declared(info, i)));
    match (order, value) {
        (Some(order), Value::Tuple(mut vs)) if vs.len() == order.len() => {
            let mut taken: Vec<Option<Value>> = vs.drain(..).map(Some).collect();
            Value::Tuple(
                order
                    .iter()
                    .filter_map(|p| taken.get_mut(p.index).and_then(Option::take))
                    .collect(),
            )
        }
        (_, value) => value,
    }
}
