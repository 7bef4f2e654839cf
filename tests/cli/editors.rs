//! The editor support in `editors/` against the compiler's lexer: the VS Code extension's
//! manifest names its files (and its code starts `ogham lsp`), its TextMate grammar parses, every regular expression in it compiles, every keyword and
//! primitive type of the lexer (read from `compiler/src/syntax/lexer.rs`, so a new keyword
//! fails here until the editors know it) gets a keyword/type scope, and literals, comments,
//! attributes and operators get theirs; the Vim syntax file and the Emacs mode list exactly the
//! lexer's keywords and types, and the Pygments lexer of the Python package names them all.
//!
//! The grammar's regular expressions are compiled with the `regex` crate: the grammar keeps to
//! the syntax Oniguruma (VS Code's engine) and `regex` share (no look-around, no
//! backreferences). A token's scope is found as TextMate finds it at the start of a line:
//! the first rule, in the grammar's order with includes expanded, that matches there.

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The lexer's word tokens (`def`, `true`, ...) and its primitive types (from the regex of
/// qualified names such as `f32.sqrt`).
fn lexer_words() -> (BTreeSet<String>, BTreeSet<String>) {
    let lexer = read("compiler/src/syntax/lexer.rs");
    let keywords: BTreeSet<String> = Regex::new(r#"#\[token\("([a-z]+)""#)
        .unwrap()
        .captures_iter(&lexer)
        .map(|c| c[1].to_string())
        .collect();
    let types = Regex::new(r#"#\[regex\(r"\(([a-z0-9|]+)\)\\\."#)
        .unwrap()
        .captures(&lexer)
        .expect("the lexer's regex of qualified names lists the primitive types")[1]
        .split('|')
        .map(str::to_string)
        .collect();
    assert!(keywords.contains("def") && keywords.contains("import") && keywords.contains("nan"));
    (keywords, types)
}

/// The symbol tokens of the lexer (`+`, `|>`, `:>`, ...).
fn lexer_symbols() -> Vec<String> {
    let lexer = read("compiler/src/syntax/lexer.rs");
    Regex::new(r#"#\[token\("([^a-z"]+)""#)
        .unwrap()
        .captures_iter(&lexer)
        .map(|c| c[1].replace("\\\\", "\\"))
        .collect()
}

/// The type suffixes of numeric literals (`1i64`, `2f32`).
fn lexer_suffixes() -> Vec<String> {
    let lexer = read("compiler/src/syntax/lexer.rs");
    let suffixes: Vec<String> = Regex::new(r#"\("([a-z0-9]+)", PrimType::"#)
        .unwrap()
        .captures_iter(&lexer)
        .map(|c| c[1].to_string())
        .collect();
    assert!(suffixes.contains(&"f32".to_string()), "{suffixes:?}");
    suffixes
}

fn grammar() -> Value {
    serde_json::from_str(&read("editors/vscode/syntaxes/ogham.tmLanguage.json"))
        .expect("the grammar is JSON")
}

/// The rules of a `patterns` list in order, includes of the repository expanded.
fn rules<'a>(grammar: &'a Value, patterns: &'a Value, out: &mut Vec<&'a Value>) {
    for rule in patterns.as_array().expect("`patterns` is a list") {
        match rule.get("include").and_then(Value::as_str) {
            Some(include) => {
                let name = include
                    .strip_prefix('#')
                    .expect("includes name the repository");
                let entry = &grammar["repository"][name];
                assert!(entry.is_object(), "include of a missing rule: {include}");
                match entry.get("patterns") {
                    Some(patterns) => rules(grammar, patterns, out),
                    None => out.push(entry),
                }
            }
            None => out.push(rule),
        }
    }
}

/// Every regular expression of the grammar (`match`, `begin`, `end`), with where it is.
fn regexes(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let here = format!("{at}/{key}");
                match (key.as_str(), v) {
                    ("match" | "begin" | "end", Value::String(re)) => {
                        out.push((here, re.clone()));
                    }
                    _ => regexes(v, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                regexes(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The scope TextMate gives `text` at the start of a line, and how much of it the rule
/// covers: the rule's name, else its first capture's name.
fn scope(grammar: &Value, text: &str) -> Option<(String, usize)> {
    let mut top = Vec::new();
    rules(grammar, &grammar["patterns"], &mut top);
    top.into_iter().find_map(|rule| {
        let re = rule.get("match").or_else(|| rule.get("begin"))?.as_str()?;
        let m = Regex::new(&format!("^(?:{re})")).unwrap().find(text)?;
        let name = rule
            .get("name")
            .or_else(|| rule.pointer("/captures/1/name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        Some((name.to_string(), m.end()))
    })
}

/// Asserts that `text` is one token of a scope starting with one of `scopes`.
fn assert_scope(grammar: &Value, text: &str, scopes: &[&str]) {
    match scope(grammar, text) {
        Some((name, len)) if len == text.len() && scopes.iter().any(|s| name.starts_with(s)) => {}
        other => panic!("`{text}`: expected one token of scope {scopes:?}, got {other:?}"),
    }
}

#[test]
fn the_textmate_grammar_follows_the_lexer() {
    let grammar = grammar();
    assert_eq!(grammar["scopeName"], "source.ogham");
    let mut all = Vec::new();
    regexes(&grammar, "", &mut all);
    assert!(all.len() > 20, "{all:?}");
    for (at, re) in &all {
        if let Err(e) = Regex::new(re) {
            panic!("{at}: {re}: {e}");
        }
    }
    let (keywords, types) = lexer_words();
    for word in &keywords {
        assert_scope(
            &grammar,
            word,
            &["keyword.", "storage.type", "constant.language"],
        );
    }
    for ty in &types {
        assert_scope(&grammar, ty, &["support.type"]);
        assert_scope(&grammar, &format!("{ty}.sqrt"), &["support.type"]);
    }
    for suffix in lexer_suffixes() {
        assert_scope(&grammar, &format!("1{suffix}"), &["constant.numeric"]);
        assert_scope(&grammar, &format!("0b1{suffix}"), &["constant.numeric"]);
    }
    for symbol in lexer_symbols() {
        match symbol.as_str() {
            // `#[` opens an attribute, `_` is a pattern like a name: tested below.
            "#[" | "_" => {}
            s => assert_scope(&grammar, s, &["keyword.operator", "punctuation"]),
        }
    }
    let samples: &[(&str, &str)] = &[
        ("1_000", "constant.numeric.integer"),
        ("0x1Fi64", "constant.numeric.hex"),
        ("0b101u8", "constant.numeric.binary"),
        ("1.5e3f32", "constant.numeric.float"),
        ("2e-3", "constant.numeric.float"),
        ("-- | The mean.", "comment.line.documentation"),
        ("  -- | Indented.", "comment.line.documentation"),
        ("-- a comment", "comment.line.double-dash"),
        ("#[unsafe]", "meta.attribute"),
        ("\"lib/stats\"", "string.quoted.double"),
        ("'t", "entity.name.type.parameter"),
        ("x'", "variable.other"),
        ("_", "variable.other"),
        ("def mean", "storage.type.function"),
        ("type point", "storage.type.type"),
    ];
    for (text, expected) in samples {
        // A string is a begin/end rule: its begin matches the quote only.
        if text.starts_with('"') {
            let name = scope(&grammar, text).map(|s| s.0).unwrap_or_default();
            assert!(name.starts_with(expected), "`{text}`: {name}");
        } else {
            assert_scope(&grammar, text, &[expected]);
        }
    }
}

/// The extension's manifest names files that exist: the grammar (with its scope name), the
/// language configuration (`--` comments) and the code, which starts `ogham lsp` (the binary
/// of the `ogham.server.path` setting) through the `vscode-languageclient` package it depends
/// on, when an Ogham file opens.
#[test]
fn the_vscode_extension_is_complete() {
    let manifest: Value = serde_json::from_str(&read("editors/vscode/package.json")).unwrap();
    let main = manifest["main"].as_str().expect("the extension's code");
    let code = read(&format!("editors/vscode/{main}"));
    assert!(code.contains("args: [\"lsp\"]"));
    assert!(code.contains("get(\"server.path\", \"ogham\")"));
    assert!(code.contains("require(\"vscode-languageclient/node\")"));
    assert!(manifest["dependencies"]["vscode-languageclient"].is_string());
    assert_eq!(manifest["activationEvents"][0], "onLanguage:ogham");
    let setting = &manifest["contributes"]["configuration"]["properties"]["ogham.server.path"];
    assert_eq!(setting["default"], "ogham");
    let language = &manifest["contributes"]["languages"][0];
    assert_eq!(language["id"], "ogham");
    assert_eq!(language["extensions"][0], ".og");
    let config = language["configuration"].as_str().unwrap();
    let config: Value =
        serde_json::from_str(&read(&format!("editors/vscode/{config}"))).expect("JSON");
    assert_eq!(config["comments"]["lineComment"], "--");
    let contributed = &manifest["contributes"]["grammars"][0];
    assert_eq!(contributed["language"], "ogham");
    assert_eq!(contributed["scopeName"], grammar()["scopeName"]);
    let path = contributed["path"].as_str().unwrap();
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("editors/vscode")
            .join(path)
            .is_file()
    );
}

#[test]
fn vim_and_emacs_know_the_lexer_s_keywords() {
    let (keywords, types) = lexer_words();
    let expected: BTreeSet<String> = keywords.union(&types).cloned().collect();

    let vim = read("editors/vim/syntax/ogham.vim");
    let vim_words: BTreeSet<String> = vim
        .lines()
        .filter_map(|l| l.strip_prefix("syn keyword "))
        .flat_map(|l| l.split_whitespace().skip(1))
        .filter(|w| !w.contains('=') && !["contained", "skipwhite"].contains(w))
        .filter(|w| !["TODO", "FIXME", "XXX", "NOTE"].contains(w))
        .map(str::to_string)
        .collect();
    assert_eq!(vim_words, expected, "editors/vim/syntax/ogham.vim");
    assert!(read("editors/vim/ftdetect/ogham.vim").contains("*.og setfiletype ogham"));

    let emacs = read("editors/emacs/ogham-mode.el");
    let lists = Regex::new(r#"\(defconst ogham-[a-z-]+\s+'\(([^)]*)\)"#).unwrap();
    let emacs_words: BTreeSet<String> = lists
        .captures_iter(&emacs)
        .flat_map(|c| {
            c[1].split_whitespace()
                .map(|w| w.trim_matches('"').to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(emacs_words, expected, "editors/emacs/ogham-mode.el");

    // The Pygments lexer of the Python package names them in its rules' strings.
    let pygments = read("python/ogham/lexer.py");
    let strings = Regex::new(r#""([^"\n]*)""#).unwrap();
    let words: BTreeSet<&str> = strings
        .captures_iter(&pygments)
        .flat_map(|c| {
            let s = c.get(1).unwrap().as_str();
            s.split(|c: char| !c.is_ascii_alphanumeric())
        })
        .collect();
    for word in &expected {
        assert!(
            words.contains(word.as_str()),
            "python/ogham/lexer.py lacks `{word}`"
        );
    }
}
