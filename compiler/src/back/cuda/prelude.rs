//! The prelude of every translation unit: `prelude.cuh` with its section of scalar operations
//! generated from the shared description (`back/steps.rs`); and the data kernels
//! (`data_kernels.cuh`), which follow it in their own unit.
//!
//! Generated kernels call the interpreter's integer `/`, `%`, `//`, `%%` (`og_div`, `og_mod`,
//! `og_quot`, `og_rem`), floored float `%` (`og_fmod_floor`) and float-to-integer conversion
//! (`og_f2i<T>(x, lo, hi)`, given `T`'s bounds) as device functions rather than inline:
//! the steps name intermediate values several times, which a C expression (the kernels' code
//! is made of nested expressions) cannot, and the kernels stay readable. Those functions are
//! written here, one per type (the C target of the description's steps: a step is a `const`
//! local, and the locals the result does not depend on are left out), and replace the marker
//! line of `prelude.cuh`. The rest of the prelude stays hand-written C: types, views, the
//! failure record and the arena are no scalar semantics, and the wrapping arithmetic, shifts,
//! integer `**`, `abs`/`sgn` of `prelude.cuh` are one-line C the description does not cover.
//!
//! Invariants: the generated functions come before their first use in `prelude.cuh` (`og_ipow`
//! calls `og_rem`) and after the wrapping `og_add`/`og_neg` they call; the marker occurs once.

use super::emit::{ctype, literal};
use crate::back::steps::{self, FloatSteps, FloatToInt, Fmod, IntSteps, Logic, Target};
use ogham_ir::Const;
use ogham_ir::op::BinOp;
use ogham_ir::scalar::{convert, integer_literal};
use ogham_ir::types::PrimType;
use std::collections::HashSet;
use std::fmt::Write;
use std::sync::LazyLock;

/// The line of `prelude.cuh` that the generated section replaces.
const MARKER: &str = "// @scalar-steps\n";

/// The device functions every generated translation unit starts with.
pub fn prelude() -> &'static str {
    static PRELUDE: LazyLock<String> =
        LazyLock::new(|| include_str!("prelude.cuh").replacen(MARKER, &scalar_section(), 1));
    &PRELUDE
}

/// The data kernels (`data_kernels.cuh`): host steps the executor runs on the device. They
/// follow the prelude in the data kernels' own translation unit (`CudaProgram::units`), so
/// that the generated kernels' units do not compile them again.
pub fn data_kernels() -> &'static str {
    include_str!("data_kernels.cuh")
}

/// A C value: an expression (a parameter, a local or a literal) and its type.
#[derive(Clone)]
struct C {
    text: String,
    ty: PrimType,
}

impl C {
    fn new(text: impl Into<String>, ty: PrimType) -> C {
        C {
            text: text.into(),
            ty,
        }
    }
}

/// The body of a device function being written: one `const` local per step.
#[derive(Default)]
struct Body {
    /// Each local's name and declaration.
    locals: Vec<(String, String)>,
}

impl Body {
    /// A new local of type `ty` holding `expr`.
    fn bind(&mut self, ty: PrimType, expr: String) -> C {
        let name = format!("s{}", self.locals.len());
        let line = format!("const {} {name} = {expr};", ctype(ty));
        self.locals.push((name.clone(), line));
        C::new(name, ty)
    }

    /// Writes the function `header` returning `result`, with the locals it depends on.
    fn write(self, out: &mut String, header: &str, result: &C) {
        let words = |text: &str| -> Vec<String> {
            text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(str::to_string)
                .collect()
        };
        let mut live: HashSet<String> = words(&result.text).into_iter().collect();
        let mut kept = Vec::new();
        for (name, line) in self.locals.into_iter().rev() {
            if live.contains(&name) {
                live.extend(words(&line));
                kept.push(line);
            }
        }
        let _ = writeln!(out, "{header} {{");
        for line in kept.iter().rev() {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(out, "  return {};\n}}", result.text);
    }
}

impl Target for Body {
    type V = C;
}

impl Logic for Body {
    fn select(&mut self, c: C, a: C, b: C) -> C {
        self.bind(a.ty, format!("{} ? {} : {}", c.text, a.text, b.text))
    }
    fn and(&mut self, a: C, b: C) -> C {
        let op = if a.ty == PrimType::Bool { "&&" } else { "&" };
        self.bind(a.ty, format!("{} {op} {}", a.text, b.text))
    }
    fn xor(&mut self, a: C, b: C) -> C {
        let op = if a.ty == PrimType::Bool { "!=" } else { "^" };
        self.bind(a.ty, format!("{} {op} {}", a.text, b.text))
    }
}

impl IntSteps for Body {
    fn int_const(&mut self, t: PrimType, n: i64) -> C {
        C::new(literal(integer_literal(n as u64, t)), t)
    }
    fn cmp_imm(&mut self, t: PrimType, op: BinOp, x: C, n: i64) -> C {
        let n = self.int_const(t, n);
        self.bind(
            PrimType::Bool,
            format!("{} {} {}", x.text, op.symbol(), n.text),
        )
    }
    fn quot(&mut self, t: PrimType, x: C, y: C) -> C {
        self.bind(t, format!("{} / {}", x.text, y.text))
    }
    fn rem(&mut self, t: PrimType, x: C, y: C) -> C {
        self.bind(t, format!("{} % {}", x.text, y.text))
    }
    fn add(&mut self, t: PrimType, x: C, y: C) -> C {
        self.bind(t, format!("og_add({}, {})", x.text, y.text))
    }
    fn add_imm(&mut self, t: PrimType, x: C, n: i64) -> C {
        let n = self.int_const(t, n);
        self.add(t, x, n)
    }
    fn neg(&mut self, t: PrimType, x: C) -> C {
        self.bind(t, format!("og_neg({})", x.text))
    }
}

impl FloatSteps for Body {
    fn float_const(&mut self, t: PrimType, x: f64) -> C {
        C::new(literal(convert(Const::F64(x), t)), t)
    }
    fn fcmp(&mut self, op: BinOp, x: C, y: C) -> C {
        self.bind(
            PrimType::Bool,
            format!("{} {} {}", x.text, op.symbol(), y.text),
        )
    }
    fn fadd(&mut self, x: C, y: C) -> C {
        self.bind(x.ty, format!("{} + {}", x.text, y.text))
    }
}

impl Fmod for Body {
    fn fmod(&mut self, t: PrimType, x: C, y: C) -> C {
        let f = if t == PrimType::F32 { "fmodf" } else { "fmod" };
        self.bind(t, format!("{f}({}, {})", x.text, y.text))
    }
}

impl FloatToInt for Body {
    fn to_float(&mut self, to: PrimType, x: C) -> C {
        self.bind(to, format!("({}){}", ctype(to), x.text))
    }
    fn truncate(&mut self, to: PrimType, x: C) -> C {
        self.bind(to, format!("({}){}", ctype(to), x.text))
    }
}

/// The generated section: integer division by type, floored float `%` by type, float-to-integer
/// conversion by pair of types.
fn scalar_section() -> String {
    let ints = PrimType::ALL.into_iter().filter(|t| t.is_int());
    let floats = [PrimType::F32, PrimType::F64];
    let mut out = String::from(
        "// ---- generated from the shared description of scalar operations \
         (compiler/src/back/steps.rs) ----\n\
         // Integer `//` and `%%` truncate, `/` and `%` floor; `lowest / -1` wraps to `lowest`.\n",
    );
    for t in ints.clone() {
        let c = ctype(t);
        for (name, op) in [
            ("og_quot", BinOp::Quot),
            ("og_rem", BinOp::Rem),
            ("og_div", BinOp::Div),
            ("og_mod", BinOp::Mod),
        ] {
            let mut body = Body::default();
            let r = steps::int_division(&mut body, op, t, C::new("x", t), C::new("y", t));
            let header = format!("__device__ __forceinline__ {c} {name}({c} x, {c} y)");
            body.write(&mut out, &header, &r);
        }
    }
    out.push_str("// Float `%` floors (`%%` is C's `fmod`).\n");
    for t in floats {
        let c = ctype(t);
        let mut body = Body::default();
        let r = steps::float_mod(&mut body, t, C::new("x", t), C::new("y", t));
        let header = format!("__device__ __forceinline__ {c} og_fmod_floor({c} x, {c} y)");
        body.write(&mut out, &header, &r);
    }
    out.push_str(
        "// Float to integer: truncates, saturates at the type's bounds `lo` and `hi`, NaN gives \
         0.\ntemplate <class T, class F> __device__ T og_f2i(F x, T lo, T hi);\n",
    );
    for from in floats {
        for to in ints.clone() {
            let (f, c) = (ctype(from), ctype(to));
            let mut body = Body::default();
            let bounds = (C::new("lo", to), C::new("hi", to));
            let r = steps::float_to_int(&mut body, (from, to), C::new("x", from), bounds);
            let header = format!(
                "template <> __device__ __forceinline__ {c} og_f2i<{c}, {f}>({f} x, {c} lo, {c} hi)"
            );
            body.write(&mut out, &header, &r);
        }
    }
    out.push_str("// ---- end of the generated section ----\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of the generated function whose header contains `signature`.
    fn function(signature: &str) -> &'static str {
        let text = prelude();
        let at = text
            .find(signature)
            .unwrap_or_else(|| panic!("no `{signature}` in the prelude"));
        let body = &text[at..];
        &body[..body.find("\n}\n").expect("a function ends")]
    }

    #[test]
    fn the_section_replaces_the_marker() {
        assert!(!prelude().contains(MARKER.trim_end()));
        for t in ["i8", "i16", "i32", "i64", "u8"] {
            for f in ["og_quot", "og_rem", "og_div", "og_mod"] {
                function(&format!("{t} {f}({t} x, {t} y)"));
            }
            for from in ["float", "double"] {
                function(&format!(
                    "{t} og_f2i<{t}, {from}>({from} x, {t} lo, {t} hi)"
                ));
            }
        }
        assert!(function("float og_fmod_floor(float x, float y)").contains("fmodf(x, y)"));
        // Generated before `og_ipow`, which calls `og_rem`.
        assert!(prelude().find("og_rem(i64 x").unwrap() < prelude().find("og_ipow").unwrap());
    }

    #[test]
    fn only_the_steps_a_result_needs_are_written() {
        let quot = function("i32 og_quot(i32 x, i32 y)");
        assert!(quot.contains("x / s1") && !quot.contains('%'), "{quot}");
        let rem = function("i32 og_rem(i32 x, i32 y)");
        assert!(rem.contains("x % s1") && !rem.contains(" / "), "{rem}");
        let unsigned = function("u8 og_div(u8 x, u8 y)");
        assert_eq!(unsigned.lines().count(), 3, "{unsigned}");
    }
}
