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
