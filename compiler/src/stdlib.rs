//! The Ogham standard library (`lib/*.og`), embedded in the compiler so that `import "lib/..."`
//! works from anywhere and the prelude is always available. `docs/stdlib.md` lists every
//! module's functions.

/// `(import path, source text)` of every embedded library module.
pub const MODULES: &[(&str, &str)] = &[
    ("lib/prelude", include_str!("../../lib/prelude.og")),
    ("lib/linalg", include_str!("../../lib/linalg.og")),
    ("lib/segmented", include_str!("../../lib/segmented.og")),
    ("lib/stats", include_str!("../../lib/stats.og")),
    ("lib/trend", include_str!("../../lib/trend.og")),
    ("lib/regression", include_str!("../../lib/regression.og")),
    ("lib/mosum", include_str!("../../lib/mosum.og")),
    ("lib/bfast", include_str!("../../lib/bfast.og")),
    ("lib/loess", include_str!("../../lib/loess.og")),
    ("lib/stl", include_str!("../../lib/stl.og")),
    ("lib/dtw", include_str!("../../lib/dtw.og")),
    ("lib/insar", include_str!("../../lib/insar.og")),
];

/// The module every program imports implicitly.
pub const PRELUDE: &str = "lib/prelude";

/// The embedded source of a library module, by import path (`lib/linalg`).
pub fn lookup(path: &str) -> Option<&'static str> {
    MODULES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::MODULES;
    use crate::syntax::ast::{Decl, Pattern, TypeExp};
    use crate::syntax::parse_module;
    use ogham_ir::source::FileId;

    /// The rule for readable calls (docs/stdlib.md): every library function with six or
    /// more value parameters takes its settings as a record (a parameter whose type is one of
    /// the library's record types, e.g. `tw_params`), has a record form beside it (`NAME_with`,
    /// or `STEM_with` for `STEM_f64`), or says in its documentation that it is internal.
    #[test]
    fn functions_with_many_parameters_have_readable_calls() {
        let mut decls = Vec::new();
        for (path, text) in MODULES {
            let parsed = parse_module(FileId(0), text, &mut 0)
                .unwrap_or_else(|_| panic!("{path} does not parse"));
            decls.extend(parsed.into_iter().map(|d| (*path, d)));
        }
        let records: Vec<&str> = decls
            .iter()
            .filter_map(|(_, d)| match d {
                Decl::TypeAlias(a) if matches!(a.body, TypeExp::Record(..)) => {
                    Some(a.name.name.as_str())
                }
                _ => None,
            })
            .collect();
        let names: Vec<&str> = decls
            .iter()
            .filter_map(|(_, d)| match d {
                Decl::Def(def) => Some(def.name.name.as_str()),
                _ => None,
            })
            .collect();
        let takes_record = |p: &Pattern| {
            matches!(p, Pattern::Ascribed(_, TypeExp::Name(n, _, _), _)
                         if records.contains(&n.name.as_str()))
        };
        let mut missing = Vec::new();
        for (path, decl) in &decls {
            let Decl::Def(def) = decl else { continue };
            let name = def.name.name.as_str();
            let with = format!("{}_with", name.strip_suffix("_f64").unwrap_or(name));
            let internal = def
                .doc
                .as_deref()
                .is_some_and(|d| d.starts_with("Internal"));
            if def.params.len() >= 6
                && !internal
                && !names.contains(&with.as_str())
                && !def.params.iter().any(takes_record)
            {
                missing.push(format!("{path}: {name} ({} parameters)", def.params.len()));
            }
        }
        assert!(missing.is_empty(), "no readable call: {missing:?}");
    }
}
