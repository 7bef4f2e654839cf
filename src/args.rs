//! Binding caller-supplied values to an entry point's parameters.
//!
//! Arguments come as textual values (command line, `@file`, test blocks), whose unsuffixed
//! numbers take the parameter's type, or as already-typed data (`.npy` files). [`bind`] checks
//! the number of arguments and gives each textual value its parameter's type; errors name the
//! argument's position, parameter name and type, and where the value came from. Whether the
//! values fit the parameters (element types, ranks, sizes, `[n]` agreeing across arguments) is
//! checked by the backend when it runs the entry point, with `E06xx` diagnostics.

use ogham_compiler::typeck::EntryPoint;
use ogham_ir::types::Type;
use ogham_runtime::boundary::BoundaryType;
use ogham_runtime::text::TextValue;
use ogham_runtime::value::Value;

/// One argument value, untyped (text) or typed (data).
#[derive(Clone, Debug)]
pub enum ArgValue {
    Text(TextValue),
    Data(Value),
}

/// An argument and where it came from, for error messages (`value \`[1, 2]\``, `xs.npy`).
#[derive(Clone, Debug)]
pub struct Arg {
    pub origin: String,
    pub value: ArgValue,
}

/// The argument values for `entry`: textual values at their parameters' types, data as given.
pub fn bind(entry: &EntryPoint, args: Vec<Arg>) -> Result<Vec<Value>, String> {
    bind_params(&entry.name, &entry.params, args)
}

/// [`bind`] for entry point `name` with parameters `params` (names and types).
pub fn bind_params(
    name: &str,
    params: &[(String, Type)],
    args: Vec<Arg>,
) -> Result<Vec<Value>, String> {
    if args.len() != params.len() {
        let params: Vec<String> = params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        return Err(format!(
            "entry point `{}` takes {} argument{} ({}), but {} {} given",
            name,
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            params.join(", "),
            args.len(),
            if args.len() == 1 { "was" } else { "were" },
        ));
    }
    params
        .iter()
        .zip(args)
        .enumerate()
        .map(|(i, ((name, ty), arg))| {
            let context = || {
                format!(
                    "argument {} (`{name}: {ty}`), given by {}",
                    i + 1,
                    arg.origin
                )
            };
            match arg.value {
                ArgValue::Data(v) => Ok(v),
                ArgValue::Text(t) => BoundaryType::of(ty)
                    .and_then(|expected| t.coerce(&expected).map_err(|e| e.to_string()))
                    .map_err(|e| format!("{}: {e}", context())),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ogham_ir::source::Span;
    use ogham_ir::types::{PrimType, Size, Type};
    use ogham_runtime::text::parse;
    use ogham_runtime::value::Array;

    fn entry() -> EntryPoint {
        let vec_n = Type::array(Type::Prim(PrimType::F32), Size::Var("n".into()));
        EntryPoint {
            name: "main".into(),
            decl: 0,
            params: vec![("xs".into(), vec_n.clone()), ("ys".into(), vec_n)],
            results: vec![],
            fields: vec![],
            span: Span::default(),
        }
    }

    fn text(src: &str) -> Arg {
        Arg {
            origin: format!("value `{src}`"),
            value: ArgValue::Text(parse(src).unwrap().remove(0)),
        }
    }

    #[test]
    fn text_values_take_the_parameter_types() {
        let vs = bind(&entry(), vec![text("[1, 2.5]"), text("[3, 4]")]).unwrap();
        assert_eq!(
            vs[0],
            Value::Array(Array::from_f32(vec![2], vec![1.0, 2.5]).unwrap())
        );
    }

    #[test]
    fn errors_name_the_argument() {
        let e = bind(&entry(), vec![text("[1]")]).unwrap_err();
        assert_eq!(
            e,
            "entry point `main` takes 2 arguments (xs: [n]f32, ys: [n]f32), but 1 was given"
        );
        let data = Arg {
            origin: "xs.npy".into(),
            value: ArgValue::Data(Value::Array(Array::from_i64(vec![1], vec![1]).unwrap())),
        };
        let vs = bind(&entry(), vec![data.clone(), text("[1]")]).unwrap();
        assert!(matches!(&vs[0], Value::Array(a) if a.elem_type() == PrimType::I64));
        let e = bind(&entry(), vec![text("[1i32]"), text("[1]")]).unwrap_err();
        assert_eq!(
            e,
            "argument 1 (`xs: [n]f32`), given by value `[1i32]`: 1:2: expected a value of type f32, found `1i32`"
        );
    }
}
