//! Runs the tests/cases corpus. TODO(harness helper).
fn main() {}
