//! The runtime's layering, checked on its sources and its dependency graph: only the reference
//! interpreter (`interp/`) may use the AST and the front end. Everything else — the base layer
//! (values, errors, indexing, scalar operations, `.npy`) and the executors of compiled code
//! (`ireval`, `cpu`, `cuda`, `kernel_io`, `memory`, libraries) — depends on the IR
//! (`ogham-ir`) and the base layer; only code generation (the `jit` feature: `cpu/jit.rs`,
//! `cpu/native.rs`, the writing of ahead-of-time objects) uses the compiler's backends; the CUDA
//! executor (`cuda`) gets its kernels through a trait (`cuda::CudaCodegen`) and names only the
//! IR's artefacts. Without default features the runtime, and the C interface built on it,
//! contain neither the compiler nor Cranelift.
//!
//! Also checked here, for the IR, the compiler and the runtime: no import cycles between
//! modules. Module `a` depends on module `b` when code in `a`'s subtree names `b`'s subtree
//! (`crate::b::...`, `super::b::...`, `use crate::{b, ...}`), where `a` and `b` are siblings
//! (children of the same module); a module naming its own ancestors or descendants is not a
//! dependency between modules (a child may use what its parent declares). These sibling
//! dependencies, at every level, must form no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Paths that code outside `interp/` must not name.
const FORBIDDEN: &[&str] = &[
    "crate::interp",
    "ogham_compiler::syntax",
    "ogham_compiler::typeck",
    "ogham_compiler::lower",
    "ogham_compiler::loader",
    "ogham_compiler::stdlib",
    "ogham_compiler::pipeline",
    "ogham_compiler::opt",
    "ogham_compiler::flatten",
];

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

/// The runtime's source files outside those `exempt` accepts (paths relative to `src/`) whose
/// code names one of `forbidden`, one line per name; and how many files there are.
fn violations(exempt: impl Fn(&Path) -> bool, forbidden: &[&str]) -> (usize, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        if exempt(relative) {
            continue;
        }
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
fn only_the_interpreter_depends_on_the_front_end() {
    // The interpreter, and the crate root that declares it.
    let (files, violations) = violations(
        |relative| relative.starts_with("interp") || relative == Path::new("lib.rs"),
        FORBIDDEN,
    );
    assert!(files > 20, "the sources were found: {files}");
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// Where the compiler's backends and Cranelift may be named: the interpreter, the CPU executor's
/// code generation (the `jit` feature; `cpu/mod.rs` and `cpu/helpers.rs` only in items of that
/// feature), and the check of a library's unchecked ranges for that code
/// generation (`cpu/untrusted.rs`, with the `jit` feature: the backend's own `unsafe_ranges`).
const COMPILER_USERS: &[&str] = &[
    "interp",
    "cpu/jit.rs",
    "cpu/native.rs",
    "cpu/aot.rs",
    "cpu/mod.rs",
    "cpu/helpers.rs",
    "cpu/untrusted.rs",
];

#[test]
fn the_base_layer_and_the_ir_evaluator_need_only_the_ir() {
    let (_, violations) = violations(
        |relative| COMPILER_USERS.iter().any(|u| relative.starts_with(u)),
        &["ogham_compiler", "cranelift"],
    );
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The crates a package depends on (normal dependencies) with `args`, by `cargo tree`.
fn dependencies(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
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

#[test]
fn without_default_features_neither_the_compiler_nor_cranelift_is_linked() {
    for package in ["ogham-runtime", "ogham-capi"] {
        let tree = dependencies(&["-p", package, "--no-default-features"]);
        assert!(tree.contains("ogham-ir"), "{tree}");
        for forbidden in ["ogham-compiler", "cranelift", "lalrpop", "logos"] {
            assert!(
                !tree.contains(forbidden),
                "{package} needs {forbidden}:\n{tree}"
            );
        }
    }
    // The CUDA executor alone needs neither: its code generator comes through a trait.
    let tree = dependencies(&[
        "-p",
        "ogham-runtime",
        "--no-default-features",
        "--features",
        "cuda",
    ]);
    assert!(tree.contains("cudarc"), "{tree}");
    for forbidden in ["ogham-compiler", "cranelift"] {
        assert!(
            !tree.contains(forbidden),
            "the cuda feature needs {forbidden}:\n{tree}"
        );
    }
    // The check sees them where they are.
    let tree = dependencies(&["-p", "ogham-capi"]);
    assert!(
        tree.contains("cranelift-jit") && tree.contains("ogham-compiler"),
        "{tree}"
    );
}

#[test]
fn the_check_sees_a_violation() {
    assert!(code("use crate::interp::value::Val;").contains(FORBIDDEN[0]));
    assert!(!code("/// like `crate::interp::value`").contains(FORBIDDEN[0]));
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
    for krate in ["ir", "compiler", "runtime"] {
        let edges = sibling_dependencies(&workspace.join(krate));
        assert!(edges.len() > 5, "{krate}'s modules were found");
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
