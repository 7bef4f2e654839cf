//! The values of test cases that come from files (`input @ file`, `output @ t_out.npy`,
//! `input { 3 @ xs.npy }`), and checking `.npy` data against an entry point's types.
//!
//! A file is a `.npy` file when its name ends in `.npy` (any case) or its contents start with the
//! `.npy` magic string; it then holds one value, decoded by [`ogham_runtime::npy`] (whose errors
//! say what is wrong: element type, order, truncation). Any other file holds textual values.
//! Every value is an [`Arg`] whose `origin` names the file, so that later errors (a wrong element
//! type or rank, a failed comparison) can say which file is at fault. `.npy` data has its own
//! element type: unlike textual numbers it is not converted to the parameter's type, and
//! [`check_data`] rejects a mismatch before the run.

use super::spec::SpecError;
use crate::args::{Arg, ArgValue};
use ogham_runtime::boundary::BoundaryType;
use ogham_runtime::npy;
use ogham_runtime::text::{self, Pos, TextValue};
use ogham_runtime::value::Value;
use std::path::Path;

/// The start of every `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// Textual values of `what` (`the input at line 4`) as arguments.
pub(super) fn text_args(values: Vec<TextValue>, what: &str) -> impl Iterator<Item = Arg> + '_ {
    values.into_iter().map(move |v| Arg {
        origin: what.to_string(),
        value: ArgValue::Text(v),
    })
}

/// The values of `file` (relative to `base`) named at `pos` by `what`: one for a `.npy` file,
/// the file's textual values otherwise.
pub(super) fn read(base: &Path, file: &str, pos: Pos, what: &str) -> Result<Vec<Arg>, SpecError> {
    let path = base.join(file);
    let bytes = std::fs::read(&path).map_err(|e| SpecError {
        pos,
        message: format!("cannot read `{}`: {e}", path.display()),
    })?;
    if file.to_ascii_lowercase().ends_with(".npy") || bytes.starts_with(NPY_MAGIC) {
        return match npy::decode(&bytes) {
            Ok(value) => Ok(vec![Arg {
                origin: format!("`{file}` ({what})"),
                value: ArgValue::Data(value),
            }]),
            Err(e) => text::error(pos, format!("`{}`: {e}", path.display())),
        };
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return text::error(
            pos,
            format!(
                "`{}` is neither a `.npy` file nor text (it is not valid UTF-8)",
                path.display()
            ),
        );
    };
    let values = text::parse(text).map_err(|e| SpecError {
        pos,
        message: format!("{}:{e}", path.display()),
    })?;
    Ok(text_args(values, &format!("`{file}` ({what})")).collect())
}

/// Checks that `value`, `.npy` data, has the element type and rank of `t`; sizes are left to
/// the backends (arguments) and to the comparison (outputs).
pub(super) fn check_data(value: &Value, t: &BoundaryType) -> Result<(), String> {
    let fits = match (value, t) {
        (Value::Scalar(s), BoundaryType::Scalar(p)) => s.prim_type() == *p,
        (Value::Array(a), BoundaryType::Array { elem, dims }) => {
            a.elem_type() == *elem && a.shape().len() == dims.len()
        }
        _ => false,
    };
    if fits {
        return Ok(());
    }
    let (elem, shape) = match value {
        Value::Scalar(s) => (s.prim_type(), Vec::new()),
        Value::Array(a) => (a.elem_type(), a.shape().to_vec()),
        Value::Tuple(_) => return Err(format!("expected {t}, the data is a tuple")),
    };
    let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
    let expected_elem = match t {
        BoundaryType::Scalar(p) | BoundaryType::Array { elem: p, .. } => Some(*p),
        BoundaryType::Tuple(_) => None,
    };
    let why = match expected_elem {
        Some(p) if p != elem => format!(
            " (`.npy` data keeps its element type: save it as {p}, e.g. `xs.astype(np.{})`)",
            p.numpy_name()
        ),
        _ => String::new(),
    };
    Err(format!(
        "expected {t}, but the file holds {dims}{elem}{why}"
    ))
}

/// The arguments of a case as values for parameters of types `types`: textual values take
/// their types, `.npy` data must already have them ([`check_data`]). Errors name the argument
/// and where it came from.
pub(super) fn check_inputs(
    params: &[(String, ogham_ir::types::Type)],
    inputs: &[Arg],
) -> Result<(), String> {
    for (i, ((name, ty), arg)) in params.iter().zip(inputs).enumerate() {
        if let ArgValue::Data(v) = &arg.value {
            BoundaryType::of(ty)
                .and_then(|t| check_data(v, &t))
                .map_err(|e| {
                    format!(
                        "argument {} (`{name}: {ty}`), given by {}: {e}",
                        i + 1,
                        arg.origin
                    )
                })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ogham_ir::types::{PrimType, Size};
    use ogham_runtime::value::Array;

    #[test]
    fn data_must_have_the_element_type_and_rank() {
        let xs = Value::Array(Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).unwrap());
        let vec_f32 = BoundaryType::Array {
            elem: PrimType::F32,
            dims: vec![Size::Var("n".into())],
        };
        assert!(check_data(&xs, &vec_f32).is_ok());
        let e = check_data(&xs, &BoundaryType::Scalar(PrimType::F32)).unwrap_err();
        assert!(
            e.starts_with("expected f32, but the file holds [3]f32"),
            "{e}"
        );
        let ys = Value::Array(Array::from_f64(vec![2, 1], vec![1.0, 2.0]).unwrap());
        let e = check_data(&ys, &vec_f32).unwrap_err();
        assert!(
            e.starts_with("expected [n]f32, but the file holds [2][1]f64"),
            "{e}"
        );
    }
}
