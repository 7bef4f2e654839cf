//! The bundled programs (`programs/*.og`) and the library modules they import that are not part
//! of the compiler's embedded standard library (`lib/bfast.og`, ...), embedded in the extension
//! so that an installed package runs them without the repository. The Python package writes
//! them once into a directory of the cache (`ogham/_bundled.py`), keeping their relative paths
//! so that the programs' `import "../lib/..."` resolve.

/// `(path relative to the repository root, text)` of every embedded file.
pub const FILES: &[(&str, &str)] = &[
    ("programs/bfast.og", include_str!("../../programs/bfast.og")),
    ("programs/stl.og", include_str!("../../programs/stl.og")),
    ("programs/twdtw.og", include_str!("../../programs/twdtw.og")),
    ("programs/ptsel.og", include_str!("../../programs/ptsel.og")),
    ("lib/bfast.og", include_str!("../../lib/bfast.og")),
    ("lib/stl.og", include_str!("../../lib/stl.og")),
    ("lib/dtw.og", include_str!("../../lib/dtw.og")),
    ("lib/insar.og", include_str!("../../lib/insar.og")),
];
