//! The bundled programs (`programs/*.og`), embedded in the extension so that an installed package
//! runs them without the repository. They are compiled from this text alone
//! (`cache::Source::Bundled`): their `import "lib/..."` resolve to the compiler's embedded
//! standard library, never to a file on disk.

/// `(name, text)` of every bundled program (`programs/<name>.og` of the repository).
pub const FILES: &[(&str, &str)] = &[
    ("bfast", include_str!("../../programs/bfast.og")),
    ("stl", include_str!("../../programs/stl.og")),
    ("twdtw", include_str!("../../programs/twdtw.og")),
    ("ptsel", include_str!("../../programs/ptsel.og")),
    ("trend", include_str!("../../programs/trend.og")),
];
