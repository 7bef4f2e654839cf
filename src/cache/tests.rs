//! Tests of the compile cache: a second compile of the same source returns the same program
//! (in memory and from disk), shared across threads; a change to the source or its imports
//! compiles again; entries keep their docs, types and declared field order; errors are
//! rendered with their codes.
//!
//! Invariants: each test that touches the disk cache uses its own temporary directory.

use super::*;
use ogham_runtime::value::{Array, Scalar};

const PROGRAM: &str = "\
-- | Scales the values.
-- Twice as much.
entry scale [n] (xs: [n]f32) (k: f32) : [n]f32 = map (*k) xs
entry total [n] (xs: [n]f32) : f32 = reduce (+) 0 xs
";

fn xs() -> Value {
    Value::Array(Array::from_f32(vec![3], vec![1.0, 2.0, 3.0]).expect("shape"))
}

fn options(backend: Backend) -> Options {
    Options {
        backend,
        tuning: None,
    }
}

/// A fresh directory `ogham-cache-NAME-PID` (not yet made) in the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ogham-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `source` compiled for the CPU with a disk cache in `dir`: once fresh (and stored there),
/// then again (loaded from there).
fn fresh_and_cached(source: Source, dir: &Path) -> (Arc<Compiled>, Arc<Compiled>) {
    let store = ogham_runtime::cache_file::Store::at(dir, "cpu").expect("a private cache");
    let disk = Disk::Dir(store);
    let root = Root::of(source).expect("a root");
    let key = key(source, &root, Backend::Cpu, None).expect("a key");
    let options = options(Backend::Cpu);
    let fresh =
        compile_fresh(source, &options, Some(root.clone()), &disk, Some(key)).expect("compiles");
    let cached = compile_fresh(source, &options, Some(root), &disk, Some(key)).expect("loads");
    (fresh, cached)
}

#[test]
fn a_second_compile_returns_the_same_program() {
    for backend in [Backend::Cpu, Backend::Interp, Backend::Kir, Backend::Core] {
        let source = Source::Text {
            name: "memory-test.og",
            text: PROGRAM,
        };
        let first = compile_in(source, &options(backend), &Disk::Off).expect("compiles");
        let second = compile_in(source, &options(backend), &Disk::Off).expect("compiles");
        assert!(Arc::ptr_eq(&first, &second), "{}", backend.name());
        assert_eq!(first.backend(), backend);
        let out = first
            .call("scale", vec![xs(), Value::Scalar(Scalar::F32(2.0))])
            .expect("runs");
        assert_eq!(
            format!("{out:?}"),
            format!(
                "{:?}",
                [Value::Array(
                    Array::from_f32(vec![3], vec![2.0, 4.0, 6.0]).expect("shape")
                )]
            )
        );
        let total = first.call("total", vec![xs()]).expect("runs");
        assert_eq!(
            format!("{total:?}"),
            format!("{:?}", [Value::Scalar(Scalar::F32(6.0))])
        );
    }
    let other = Source::Text {
        name: "memory-test.og",
        text: "entry main (x: i32) : i32 = x + 1",
    };
    let compiled = compile_in(other, &options(Backend::Cpu), &Disk::Off).expect("compiles");
    assert_eq!(compiled.entries().len(), 1);
}

#[test]
fn calls_from_many_threads_share_the_code() {
    let source = Source::Text {
        name: "threads-test.og",
        text: PROGRAM,
    };
    let compiled = compile_in(source, &options(Backend::Cpu), &Disk::Off).expect("compiles");
    let results: Vec<String> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..4)
            .map(|_| s.spawn(|| format!("{:?}", compiled.call("total", vec![xs()]))))
            .collect();
        calls
            .into_iter()
            .map(|c| c.join().expect("no panic"))
            .collect()
    });
    assert!(
        results
            .iter()
            .all(|r| *r == results[0] && r.contains("6.0")),
        "{results:?}"
    );
}

#[test]
fn entries_have_their_docs_and_types_in_source_order() {
    for backend in [Backend::Cpu, Backend::Interp] {
        let source = Source::Text {
            name: "docs-test.og",
            text: PROGRAM,
        };
        let compiled = compile_in(source, &options(backend), &Disk::Off).expect("compiles");
        let entries = compiled.entries();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["scale", "total"]);
        assert_eq!(
            entries[0].doc.as_deref(),
            Some("Scales the values.\nTwice as much.")
        );
        assert_eq!(entries[1].doc, None);
        assert_eq!(entries[0].params.len(), 2);
        assert_eq!(entries[0].params[1].0, "k");
        assert_eq!(entries[0].results[0].to_string(), "[n]f32");
    }
}

#[test]
fn a_program_from_the_disk_cache_is_the_same_program() {
    let dir = scratch("same");
    let source = Source::Text {
        name: "disk-same.og",
        text: PROGRAM,
    };
    let (fresh, cached) = fresh_and_cached(source, &dir);
    assert!(matches!(fresh.code, Code::Cpu(_)));
    assert!(matches!(cached.code, Code::Cached(_)));
    assert_eq!(fresh.entries(), cached.entries());
    for compiled in [&fresh, &cached] {
        let out = compiled.call("total", vec![xs()]).expect("runs");
        assert_eq!(
            format!("{out:?}"),
            format!("{:?}", [Value::Scalar(Scalar::F32(6.0))])
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The declared field order of record results reaches every way a program is opened: the
/// checker's entries (interp), a fresh CPU compile and the disk cache (its packed library).
#[test]
fn record_results_keep_their_declared_field_order() {
    const RECORDS: &str = "type px = {zeta: f32, alpha: i64, mid: bool}\n\
        type px = [1]px\n\
        entry pixels [m] (xs: [m]f32) : ([m]f32, [m]{b: f32, a: f32}) =\n  \
          (xs, map (\\x -> {b = x, a = x}) xs)\n\
        entry shadowed (x: f32) : px = [{zeta = x, alpha = 1, mid = true}]\n\
        entry plain (x: f32) : f32 = x\n";
    let dir = scratch("fields");
    let source = Source::Text {
        name: "fields.og",
        text: RECORDS,
    };
    let (fresh, cached) = fresh_and_cached(source, &dir);
    assert!(matches!(cached.code, Code::Cached(_)));
    let interp = compile_in(source, &options(Backend::Interp), &Disk::Off).expect("compiles");
    for compiled in [&fresh, &cached, &interp] {
        let entries = compiled.entries();
        assert_eq!(entries[0].fields, [vec![], vec!["b", "a"]]);
        // the second `px` is an array of the first; the shadowing stops the expansion
        // without finding the record, which keeps the type's order
        assert_eq!(
            entries[1].results[0].to_string(),
            "[1]{alpha: i64, mid: bool, zeta: f32}"
        );
        assert!(entries[1].fields.is_empty());
        assert!(entries[2].fields.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bundled text imports from the embedded standard library only: a module planted on disk
/// changes the same text compiled as a file, never the bundled one.
#[test]
fn bundled_sources_never_import_from_disk() {
    let dir = scratch("bundled");
    std::fs::create_dir_all(dir.join("lib")).expect("a directory");
    let text = "import \"lib/linalg\"\nentry main (x: i32) : i32 = x + 1\n";
    let file = dir.join("prog.og");
    std::fs::write(&file, text).expect("written");
    std::fs::write(dir.join("lib/linalg.og"), "planted: this does not parse\n").expect("written");
    let options = options(Backend::Interp);
    assert!(compile_in(Source::File(&file), &options, &Disk::Off).is_err());
    let name = dir.join("prog.og").display().to_string();
    let source = Source::Bundled { name: &name, text };
    let bundled = compile_in(source, &options, &Disk::Off).expect("compiles");
    assert!(bundled.sources().files().all(|(_, f)| f.path.is_none()));
    let out = bundled.call("main", vec![Value::Scalar(Scalar::I32(1))]);
    assert_eq!(format!("{out:?}"), "Ok([Scalar(I32(2))])");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn changed_imports_and_shadowed_library_modules_compile_again() {
    let dir = scratch("imports");
    std::fs::create_dir_all(&dir).expect("a directory");
    let main = dir.join("main.og");
    let helper = dir.join("helper.og");
    std::fs::write(
        &main,
        "import \"helper\"\nimport \"lib/linalg\"\nentry main (x: i32) : i32 = bump x\n",
    )
    .expect("written");
    std::fs::write(&helper, "def bump (x: i32) : i32 = x + 1\n").expect("written");
    let compile =
        || compile_in(Source::File(&main), &options(Backend::Cpu), &Disk::Off).expect("compiles");
    let run = |c: &Compiled| format!("{:?}", c.call("main", vec![Value::Scalar(Scalar::I32(1))]));
    let first = compile();
    assert!(Arc::ptr_eq(&first, &compile()));
    std::fs::write(&helper, "def bump (x: i32) : i32 = x + 2\n").expect("written");
    let changed = compile();
    assert!(!Arc::ptr_eq(&first, &changed));
    assert_ne!(run(&first), run(&changed));
    std::fs::create_dir_all(dir.join("lib")).expect("a directory");
    std::fs::write(dir.join("lib/linalg.og"), "def unused = 0i32\n").expect("written");
    assert!(
        !Arc::ptr_eq(&changed, &compile()),
        "a shadowed library module"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_are_rendered_with_codes() {
    let source = Source::Text {
        name: "bad.og",
        text: "entry main (x: f32) : f32 = x + 1i64",
    };
    let err = compile_in(source, &options(Backend::Cpu), &Disk::Off)
        .err()
        .expect("a type error");
    assert_eq!(err.codes, ["E0301"]);
    assert!(err.to_string().contains("bad.og:1:"), "{err}");
    let compiled = compile_in(
        Source::Text {
            name: "pick.og",
            text: "entry pick [n] (xs: [n]f32) (i: i64) : f32 = xs[i]",
        },
        &options(Backend::Cpu),
        &Disk::Off,
    )
    .expect("compiles");
    let d = compiled
        .call("pick", vec![xs(), Value::Scalar(Scalar::I64(7))])
        .expect_err("out of bounds");
    assert!(
        compiled.render(&d).contains("pick.og:1:"),
        "{}",
        compiled.render(&d)
    );
    assert!(compiled.entry("nope").is_err());
}
