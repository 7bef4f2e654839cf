//! The module loader: import resolution (relative files, then the embedded standard library),
//! loading each module once, dependency order, the implicit prelude, and its diagnostics.

use ogham_compiler::loader::{load, load_source};
use ogham_compiler::stdlib;
use ogham_compiler::syntax::ast::{Decl, Program};
use ogham_ir::diag::render;
use ogham_ir::source::SourceMap;
use std::path::{Path, PathBuf};

/// A fresh directory with the given files.
fn project(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ogham-loader-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a directory"))
            .expect("create dir");
        std::fs::write(path, text).expect("write file");
    }
    dir
}

fn names(p: &Program) -> Vec<&str> {
    p.modules.iter().map(|m| m.name.as_str()).collect()
}

fn errors(sources: &SourceMap, result: Result<Program, Vec<ogham_ir::diag::Diagnostic>>) -> String {
    match result {
        Ok(p) => panic!("expected errors, loaded {:?}", names(&p)),
        Err(diags) => render(sources, &diags),
    }
}

#[test]
fn in_memory_program_gets_the_prelude() {
    let mut sources = SourceMap::new();
    let p = load_source(&mut sources, "main.og", "def main = 1").expect("loads");
    assert_eq!(names(&p), [stdlib::PRELUDE, "main.og"]);
    assert_eq!(p.modules[0].imports, Vec::<usize>::new());
    assert_eq!(p.root().imports, [0]);
    assert_eq!(
        sources.get(p.modules[0].file).name,
        "<stdlib>/lib/prelude.og"
    );
    assert!(p.expr_count >= 1);
}

#[test]
fn imports_resolve_relative_then_load_once_in_dependency_order() {
    let dir = project(
        "order",
        &[
            (
                "main.og",
                "import \"sub/a\"\nimport \"sub/b\"\nimport \"lib/prelude\"\ndef main = a + b",
            ),
            ("sub/a.og", "import \"b\"\ndef a = b + 1"),
            ("sub/b.og", "import \"../c\"\ndef b = c"),
            ("c.og", "def c = (1, 2).0"),
        ],
    );
    let mut sources = SourceMap::new();
    let root = dir.join("main.og");
    let p = load(&mut sources, &root).unwrap_or_else(|d| panic!("{}", render(&sources, &d)));
    let short: Vec<String> = p
        .modules
        .iter()
        .map(|m| {
            Path::new(&m.name)
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(short, ["prelude", "c", "b", "a", "main.og"]);
    assert_eq!(p.root().name, root.display().to_string());
    assert_eq!(p.root().imports, [0, 3, 2]);
    assert_eq!(p.modules[3].imports, [0, 2]);
    assert_eq!(p.modules[2].imports, [0, 1]);
    assert_eq!(sources.files().count(), 5);

    // Expression ids are dense over the whole program.
    let mut count = 0;
    for m in &p.modules[1..] {
        for d in &m.decls {
            if let Decl::Def(_) = d {
                count += 1;
            }
        }
    }
    assert_eq!(count, 4);
    let mut prelude_ids = 0;
    let prelude = ogham_compiler::stdlib::lookup(ogham_compiler::stdlib::PRELUDE).unwrap();
    ogham_compiler::syntax::parse_module(p.modules[0].file, prelude, &mut prelude_ids).unwrap();
    assert_eq!(p.expr_count, prelude_ids + 3 + 3 + 1 + 4);
}

#[test]
fn missing_module_points_at_the_import() {
    let mut sources = SourceMap::new();
    let result = load_source(&mut sources, "m.og", "import \"nope/x\"\ndef f = 1");
    let text = errors(&sources, result);
    assert!(
        text.contains("error[E0201]: cannot find module `nope/x`"),
        "{text}"
    );
    assert!(text.contains("import \"nope/x\""), "{text}");
    assert!(
        text.contains("`nope/x.og`") && text.contains("in the standard library"),
        "{text}"
    );
}

#[test]
fn import_cycles_are_reported_with_the_chain() {
    let dir = project(
        "cycle",
        &[
            ("a.og", "import \"b\"\ndef a = 1"),
            ("b.og", "import \"a\"\ndef b = 2"),
        ],
    );
    let mut sources = SourceMap::new();
    let result = load(&mut sources, &dir.join("a.og"));
    let text = errors(&sources, result);
    assert!(text.contains("error[E0203]: import cycle:"), "{text}");
    assert!(
        text.contains("a.og -> ")
            && text.contains("b.og -> ")
            && text.contains("this import closes the cycle"),
        "{text}"
    );
}

#[test]
fn unreadable_root_has_no_span() {
    let mut sources = SourceMap::new();
    let result = load(&mut sources, Path::new("/nonexistent/ogham/main.og"));
    match result {
        Err(d) => {
            assert_eq!(d.len(), 1);
            assert_eq!(d[0].code, "E0202");
            assert!(d[0].primary.is_none());
            assert!(d[0].message.contains("/nonexistent/ogham/main.og"));
        }
        Ok(_) => panic!("loaded a missing file"),
    }
}

#[test]
fn syntax_errors_of_all_modules_are_reported() {
    let dir = project(
        "syntax",
        &[
            ("main.og", "import \"m\"\nimport \"n\"\ndef f = 1"),
            ("m.og", "def g = ("),
            ("n.og", "def h = )"),
        ],
    );
    let mut sources = SourceMap::new();
    let result = load(&mut sources, &dir.join("main.og"));
    match result {
        Err(d) => assert_eq!(
            d.iter().map(|d| d.code).collect::<Vec<_>>(),
            ["E0106", "E0105"]
        ),
        Ok(_) => panic!("loaded a broken program"),
    }
}
