//! The named parts of an entry point's results, as callers see them: Python (`ogham._ogham`)
//! and `ogham run -o DIR`. A tuple, a record, or an array of tuples or records is given as its
//! components, named `result0`, ... for a tuple and by field for a record, record fields in the
//! order the entry's written return type declares them; several results are named `result0`,
//! ...; a part that is itself a tuple or record is named by the path to it joined with `_`
//! (`result1_mean`), as Python's `Entry.outputs` names its leaves.
//!
//! Invariants relied on: the runtime represents such a result as a `Value::Tuple` of its
//! components in the type's order (record fields sorted by name; arrays of them as arrays of
//! each component, see [`components`]), and the declared field order of result `i` is
//! `fields[i]` (`EntryInfo::fields`, `Signature::fields`; empty or absent: the type's order).
//! Only a result's own level is reordered: records nested deeper keep the type's (sorted) order.

use ogham_ir::types::{Size, Type};
use ogham_runtime::value::Value;

/// An array type's dimensions (outermost first) and element type.
pub fn dims_of(ty: &Type) -> (Vec<&Size>, &Type) {
    let mut dims = Vec::new();
    let mut t = ty;
    while let Type::Array(elem, size) = t {
        dims.push(size);
        t = elem;
    }
    (dims, t)
}

/// The components of a tuple or record type, or of an array of them (as arrays of the
/// components: the runtime's representation), or `None` for other types.
pub fn components(ty: &Type) -> Option<Vec<Type>> {
    match ty {
        Type::Tuple(ts) => Some(ts.clone()),
        Type::Record(fs) => Some(fs.iter().map(|(_, t)| t.clone()).collect()),
        Type::Array(elem, size) => Some(
            components(elem)?
                .into_iter()
                .map(|t| Type::array(t, size.clone()))
                .collect(),
        ),
        _ => None,
    }
}

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
    if is_order_of(declared, parts.iter().map(|p| &p.name)) {
        parts.sort_by_key(|p| declared.iter().position(|d| *d == p.name));
    }
    Some(parts)
}

/// Result type `ty` as written: its own record's fields (of a record or an array of records) in
/// `declared` order, for showing to users (`ogham check`); other types unchanged.
pub fn as_declared(ty: &Type, declared: &[String]) -> Type {
    match ty {
        Type::Array(elem, size) => Type::array(as_declared(elem, declared), size.clone()),
        Type::Record(fields) if is_order_of(declared, fields.iter().map(|(name, _)| name)) => {
            let mut fields = fields.clone();
            fields.sort_by_key(|(name, _)| declared.iter().position(|d| d == name));
            Type::Record(fields)
        }
        other => other.clone(),
    }
}

/// Whether `declared` orders exactly the fields `names`: only such an order is followed (an
/// alias the checker followed by name could, in a contrived program, be another record than the
/// result's).
fn is_order_of<'a>(declared: &[String], names: impl ExactSizeIterator<Item = &'a String>) -> bool {
    declared.len() == names.len() && names.into_iter().all(|n| declared.contains(n))
}

/// The declared field order of result `i` given the entry's `fields` (empty: the type's order).
pub fn declared(fields: &[Vec<String>], i: usize) -> &[String] {
    fields.get(i).map_or(&[], Vec::as_slice)
}

/// Output `value` of result `ty` with its parts in declared order (see [`parts`]).
pub fn in_declared_order(ty: &Type, declared: &[String], value: Value) -> Value {
    match (parts(ty, declared), value) {
        (Some(order), Value::Tuple(vs)) if vs.len() == order.len() => {
            let mut taken: Vec<Option<Value>> = vs.into_iter().map(Some).collect();
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

/// Pushes the leaves of `value` (of type `ty`, its own level in `declared` order) with their
/// names: `name` if it is a leaf, else each part's name after `prefix`. An empty tuple has no
/// leaf (as in [`crate::output_components`]).
fn push_leaves(
    ty: &Type,
    declared: &[String],
    value: Value,
    (name, prefix): (&str, &str),
    out: &mut Vec<(String, Value)>,
) {
    match (parts(ty, declared), value) {
        (Some(order), Value::Tuple(vs)) if vs.len() == order.len() => {
            let mut taken: Vec<Option<Value>> = vs.into_iter().map(Some).collect();
            for part in &order {
                if let Some(v) = taken.get_mut(part.index).and_then(Option::take) {
                    let name = format!("{prefix}{}", part.name);
                    let inner = format!("{name}_");
                    push_leaves(&part.ty, &[], v, (&name, &inner), out);
                }
            }
        }
        (_, Value::Tuple(vs)) if vs.is_empty() => {}
        (_, value) => out.push((name.to_string(), value)),
    }
}

/// The outputs of an entry point with results `results` (declared record orders `fields`) as
/// named leaves, in the order and with the names of Python's `Entry.outputs`: a single result
/// that is not a tuple or record is `result0`; a record result's fields are named by field;
/// several results are `result0`, ... and the parts of a tuple or record among them
/// `result1_mean`, ....
pub fn named_outputs(
    results: &[Type],
    fields: &[Vec<String>],
    outputs: Vec<Value>,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let ([ty], 1) = (results, outputs.len()) {
        for value in outputs {
            push_leaves(ty, declared(fields, 0), value, ("result0", ""), &mut out);
        }
        return out;
    }
    for (i, value) in outputs.into_iter().enumerate() {
        let name = format!("result{i}");
        let inner = format!("{name}_");
        match results.get(i) {
            Some(ty) => push_leaves(ty, declared(fields, i), value, (&name, &inner), &mut out),
            None => out.push((name, value)),
        }
    }
    out
}

/// Whether a type holds a record (at any depth, through arrays and tuples).
fn has_record(ty: &Type) -> bool {
    match ty {
        Type::Record(_) => true,
        Type::Tuple(ts) => ts.iter().any(has_record),
        Type::Array(elem, _) => has_record(elem),
        _ => false,
    }
}

/// One file `ogham run -o DIR` writes: its file name, the output's name and value.
pub struct OutputFile {
    pub file: String,
    pub name: String,
    pub value: Value,
}

/// The files `ogham run -o DIR` writes for `outputs`: the named leaves ([`named_outputs`]), in
/// their order. When the results hold a record, each file is named by its leaf (`mean.npy`,
/// `result1_mean.npy`); otherwise, or if two leaves have the same name (a field `a_b` beside
/// a record `a` with a field `b`), the files are `out0.npy`, `out1.npy`, ... (which, without a
/// record, is the order of [`crate::output_components`]).
pub fn output_files(
    results: &[Type],
    fields: &[Vec<String>],
    outputs: Vec<Value>,
) -> Vec<OutputFile> {
    let leaves = named_outputs(results, fields, outputs);
    let unique = leaves
        .iter()
        .enumerate()
        .all(|(i, (name, _))| leaves[..i].iter().all(|(other, _)| other != name));
    let by_name = unique && results.iter().any(has_record);
    leaves
        .into_iter()
        .enumerate()
        .map(|(i, (name, value))| OutputFile {
            file: if by_name {
                format!("{name}.npy")
            } else {
                format!("out{i}.npy")
            },
            name,
            value,
        })
        .collect()
}
