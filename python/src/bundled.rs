//! The bundled programs (`programs/*.og`), embedded in the extension so that an installed package
//! runs them without the repository. The Python package writes them once into a directory of the
//! cache (`ogham/programs.py`); their `import "lib/..."` resolve to the compiler's embedded
//! standard library.

/// `(path relative to the repository root, text)` of every embedded file.
pub const FILES: &[(&str, &str)] = &[
    ("programs/bfast.og", include_str!("../../programs/bfast.og")),
    ("programs/stl.og", include_str!("../../programs/stl.og")),
    ("programs/twdtw.og", include_str!("../../programs/twdtw.og")),
    ("programs/ptsel.og", include_str!("../../programs/ptsel.og")),
];
