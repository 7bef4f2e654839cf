//! What code generators hand to the runtime: plain data about compiled code (descriptions of
//! kernels, addresses of machine code with the owner of its memory, object files), one module
//! per backend. Nothing here generates or runs code; the compiler's backends make these values
//! and the runtime's executors consume them.

pub mod cpu;
