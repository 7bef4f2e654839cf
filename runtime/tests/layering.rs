//! The runtime's layering, checked on its sources, its manifest and its dependency graph: the
//! runtime depends on the IR (`ogham-ir`) and never on the compiler. No runtime code names the
//! compiler or Cranelift; the executors of compiled code get their code generators from the
//! caller through traits (`cpu::CpuCodegen`, `cuda::CudaCodegen`, which the root crate
//! implements with the compiler's backends) and read only the IR's artefacts
//! (`ogham_ir::artifact`). The reference interpreter, which evaluates the AST, is the
//! `ogham-interp` crate, built on the runtime. Without default features the runtime, and the C
//! interface built on it, contain neither the compiler nor Cranelift.
//!
//! Also checked here, for the IR, the compiler, the runtime and the interpreter: no import
//! cycles between modules. Module `a` depends on module `b` when code in `a`'s subtree names
//! `b`'s subtree (`crate::b::...`, `super::b::...`, `use crate::{b, ...}`), where `a` and `b` are
//! siblings (children of the same module); a module naming its own ancestors or descendants is
//! not a dependency between modules (a child may use what its parent declares). These sibling
//! dependencies, at every level, must form no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The compiler's crate, in code.
const COMPILER: &str = "ogham_compiler";

/// Names that no runtime code may use: the compiler, its parser generators and Cranelift.
const FORBIDDEN: &[&str] = &[COMPILER, "cranelift", "lalrpop", "logos"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the runtime's sources are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of `text` without its comments (`//` to the end of the line).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The runtime's source files whose code names one of `forbidden`, one line per name; and how
/// many files there are.
fn violations(forbidden: &[&str]) -> (usize, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let text = code(&std::fs::read_to_string(file).expect("a readable source file"));
        for name in forbidden {
            if text.contains(name) {
                found.push(format!("{} uses {name}", relative.display()));
            }
        }
    }
    (files.len(), found)
}

#[test]
fn no_runtime_code_names_the_compiler_or_cranelift() {
    let (files, violations) = violations(FORBIDDEN);
    assert!(files > 20, "the sources were found: {files}");
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The output of cargo's command `command` (offline, with the lock file as it is) with `args`,
/// run in the runtime's directory.
fn cargo(command: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO"))
        .args([command, "--offline", "--locked"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The crates a package depends on (normal dependencies) with `args`, by `cargo tree`.
fn dependencies(args: &[&str]) -> String {
    let args = [&["-e", "normal", "--prefix", "none"], args].concat();
    cargo("tree", &args)
}

#[test]
fn neither_the_compiler_nor_cranelift_is_linked_into_the_runtime() {
    // With every feature, then without default features (the C interface's build).
    for args in [
        &["-p", "ogham-runtime", "--all-features"][..],
        &["-p", "ogham-runtime", "--no-default-features"],
        &["-p", "ogham-capi", "--no-default-features"],
    ] {
        let tree = dependencies(args);
        assert!(tree.contains("ogham-ir"), "{tree}");
        for forbidden in ["ogham-compiler", "cranelift", "lalrpop", "logos"] {
            assert!(
                !tree.contains(forbidden),
                "{args:?} needs {forbidden}:\n{tree}"
            );
        }
    }
    // The check sees them where they are: the C interface's JIT (its default feature) links
    // the compiler through `ogham-codegen`, but neither CUDA nor the command-line tool's crate.
    let tree = dependencies(&["-p", "ogham-capi"]);
    assert!(
        tree.contains("cranelift-jit") && tree.contains("ogham-compiler"),
        "{tree}"
    );
    for forbidden in ["cudarc", "clap", "ogham v"] {
        assert!(
            !tree.contains(forbidden),
            "the C interface needs {forbidden}:\n{tree}"
        );
    }
}

/// The runtime's package in `cargo metadata` (the manifest as cargo reads it).
fn runtime_manifest() -> serde_json::Value {
    let json = cargo("metadata", &["--no-deps", "--format-version", "1"]);
    let metadata: serde_json::Value =
        serde_json::from_str(&json).expect("cargo metadata writes JSON");
    let packages = metadata["packages"].as_array().expect("a package list");
    packages
        .iter()
        .find(|p| p["name"] == env!("CARGO_PKG_NAME"))
        .expect("the runtime is a workspace member")
        .clone()
}

/// The runtime's dependencies on the compiler (of any kind), and the features that name it
/// (with an entry `dep:ogham-compiler`, `ogham-compiler/...` or `ogham-compiler?/...`).
fn compiler_dependencies(
    package: &serde_json::Value,
) -> (Vec<serde_json::Value>, BTreeSet<String>) {
    const PACKAGE: &str = "ogham-compiler";
    let dependencies = package["dependencies"]
        .as_array()
        .expect("a dependency list")
        .iter()
        .filter(|d| d["name"] == PACKAGE)
        .cloned()
        .collect();
    let features = package["features"].as_object().expect("a feature table");
    let enabling = features
        .iter()
        .filter(|(_, entries)| {
            let entries = entries.as_array().expect("a feature's entries");
            entries.iter().filter_map(|e| e.as_str()).any(|e| {
                let name = e.strip_prefix("dep:").unwrap_or(e);
                name.split(['/', '?']).next() == Some(PACKAGE)
            })
        })
        .map(|(feature, _)| feature.clone())
        .collect();
    (dependencies, enabling)
}

#[test]
fn the_runtime_does_not_depend_on_the_compiler() {
    let (dependencies, enabling) = compiler_dependencies(&runtime_manifest());
    assert!(
        enabling.is_empty(),
        "features naming the compiler: {enabling:?}"
    );
    // Not even a dev- or build-dependency.
    assert!(dependencies.is_empty(), "{dependencies:?}");
}

#[test]
fn the_checks_see_a_violation() {
    assert!(code("use ogham_compiler::syntax::ast::Expr;").contains(COMPILER));
    assert!(!code("/// like `ogham_compiler::syntax::ast`").contains(COMPILER));
    let package = serde_json::json!({
        "dependencies": [{"name": "ogham-compiler", "optional": false, "kind": null}],
        "features": {"interp": ["ogham-compiler?/x"], "jit": ["dep:cranelift-jit"]},
    });
    let (dependencies, enabling) = compiler_dependencies(&package);
    assert_eq!(dependencies.len(), 1);
    assert_eq!(enabling, BTreeSet::from(["interp".to_string()]));
}

/// A module's path from its crate's root (`["cpu", "aot"]`; the root is `[]`).
type ModPath = Vec<String>;

/// The modules of the crate in `dir` (`dir/src`), each with its file's code (comments removed).
fn modules(dir: &Path) -> BTreeMap<ModPath, String> {
    let src = dir.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let relative = file
            .strip_prefix(&src)
            .expect("under src")
            .with_extension("");
        let mut path: ModPath = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            path.last().map(String::as_str),
            Some("lib" | "main" | "mod")
        ) {
            path.pop();
        }
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        out.insert(path, code(&text));
    }
    out
}

/// The tokens of code that paths are made of: identifiers, `::`, `{`, `}`, `,`; anything else
/// is a break (`;`).
fn path_tokens(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&d) = chars.peek().filter(|d| d.is_alphanumeric() || **d == '_') {
                word.push(d);
                chars.next();
            }
            tokens.push(word);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            tokens.push("::".to_string());
        } else if matches!(c, '{' | '}' | ',') {
            tokens.push(c.to_string());
        } else if !c.is_whitespace() {
            tokens.push(";".to_string());
        }
    }
    tokens
}

/// The modules that the code of `module` names (the longest module prefix of each path that
/// starts with `crate`, `super`, `self` or a child module's name), itself excluded.
fn named_modules(
    module: &ModPath,
    code: &str,
    all: &BTreeMap<ModPath, String>,
) -> BTreeSet<ModPath> {
    let tokens = path_tokens(code);
    let mut named = BTreeSet::new();
    let resolve = |path: &[String], named: &mut BTreeSet<ModPath>| {
        if let Some(k) = (0..=path.len())
            .rev()
            .find(|k| all.contains_key(&path[..*k]))
        {
            named.insert(path[..k].to_vec());
        }
    };
    for start in 0..tokens.len() {
        let mut path: ModPath = match tokens[start].as_str() {
            "crate" => Vec::new(),
            "self" => module.clone(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            word if all.contains_key(&[module.as_slice(), &[word.to_string()]].concat()) => {
                [module.as_slice(), &[word.to_string()]].concat()
            }
            _ => continue,
        };
        if start > 0 && tokens[start - 1] == "::" {
            continue; // the middle of a longer path
        }
        let mut i = start + 1;
        let mut grouped = false;
        while tokens.get(i).map(String::as_str) == Some("::") {
            match tokens.get(i + 1).map(String::as_str) {
                Some("super") => {
                    path.pop();
                }
                Some("{") => {
                    // `{a::x, b, ...}`: the first word of each element.
                    let mut j = i + 2;
                    let mut element_start = true;
                    let mut depth = 0;
                    while let Some(t) = tokens.get(j) {
                        match t.as_str() {
                            "{" => depth += 1,
                            "}" if depth == 0 => break,
                            "}" => depth -= 1,
                            "," if depth == 0 => element_start = true,
                            word if element_start && word != "self" => {
                                element_start = false;
                                resolve(
                                    &[path.as_slice(), &[word.to_string()]].concat(),
                                    &mut named,
                                );
                            }
                            _ => element_start = false,
                        }
                        j += 1;
                    }
                    grouped = true;
                    break;
                }
                Some(word) if word != "::" && word != ";" => path.push(word.to_string()),
                _ => break,
            }
            i += 2;
        }
        if !grouped {
            resolve(&path, &mut named);
        }
    }
    named.remove(module);
    named
}

/// The sibling dependencies of the crate in `dir` (see the module header).
fn sibling_dependencies(dir: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let all = modules(dir);
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (module, code) in &all {
        for target in named_modules(module, code, &all) {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common == module.len() || common == target.len() {
                continue; // an ancestor or a descendant
            }
            edges
                .entry(module[..=common].to_vec())
                .or_default()
                .insert(target[..=common].to_vec());
        }
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct Search<'e> {
        edges: &'e BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'e ModPath, (usize, usize)>,
        stack: Vec<&'e ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    impl<'e> Search<'e> {
        fn visit(&mut self, v: &'e ModPath) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let low = match self.index.get(w) {
                    None => {
                        self.visit(w);
                        self.index[w].1
                    }
                    Some(&(i, _)) if self.stack.contains(&w) => i,
                    Some(_) => continue,
                };
                let entry = self.index.get_mut(v).expect("visited");
                entry.1 = entry.1.min(low);
            }
            if self.index[v].0 == self.index[v].1 {
                let at = self
                    .stack
                    .iter()
                    .position(|m| *m == v)
                    .expect("on the stack");
                let component: Vec<ModPath> = self.stack.drain(at..).cloned().collect();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut search = Search {
        edges,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !search.index.contains_key(v) {
            search.visit(v);
        }
    }
    search.found
}

#[test]
fn no_import_cycles_between_modules() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["ir", "compiler", "runtime", "interp"] {
        let edges = sibling_dependencies(&workspace.join(krate));
        // The interpreter's crate is small: five of its modules name siblings.
        assert!(edges.len() >= 5, "{krate}'s modules were found");
        for cycle in cycles(&edges) {
            let names: Vec<String> = cycle.iter().map(|m| m.join("/")).collect();
            found.push(format!("{krate}: {}", names.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let all: BTreeMap<ModPath, String> = [
        (vec![], String::new()),
        (vec!["a".to_string()], "use crate::b::X;".to_string()),
        (vec!["b".to_string()], "use super::{a::Y, c};".to_string()),
        (vec!["c".to_string()], String::new()),
    ]
    .into_iter()
    .collect();
    let named = named_modules(&vec!["b".to_string()], &all[&vec!["b".to_string()]], &all);
    assert_eq!(
        named,
        BTreeSet::from([vec!["a".to_string()], vec!["c".to_string()]])
    );
    let edges = BTreeMap::from([
        (
            vec!["a".to_string()],
            BTreeSet::from([vec!["b".to_string()]]),
        ),
        (
            vec!["b".to_string()],
            BTreeSet::from([vec!["a".to_string()]]),
        ),
    ]);
    assert_eq!(cycles(&edges).len(), 1);
}
