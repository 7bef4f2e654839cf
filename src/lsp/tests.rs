//! The server's robustness: every `.og` file of the repository, and mutated versions of a
//! sample of them (cut at random points, a random token deleted or duplicated), opened and
//! changed and queried (hover, definition, completion, inlay hints, symbols, code actions)
//! without a panic; and the answers on a small program.

use super::*;
use lsp_server::RequestId;
use lsp_types::{Position, Uri};
use serde_json::json;
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

/// A small deterministic generator (xorshift), so a failure can be reproduced.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

fn og_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() && !name.starts_with('.') && name != "target" {
            og_files(&p, out);
        } else if name.ends_with(".og") {
            out.push(p);
        }
    }
}

/// Sends a request; a panic inside (an internal error answer) fails the test.
fn ask(server: &mut Server, method: &str, params: Value) -> Value {
    let req = Request::new(RequestId::from(1), method.to_string(), params);
    let resp = server.answer(req);
    if let Some(e) = &resp.error {
        assert_ne!(
            e.code,
            ErrorCode::InternalError as i32,
            "{method}: {}",
            e.message
        );
    }
    resp.result.unwrap_or(Value::Null)
}

/// Opens `text` and queries it at `positions`.
fn exercise(server: &mut Server, uri: &Uri, text: &str, positions: &[Position]) {
    server.open(uri.clone(), text);
    let doc = json!({ "uri": uri.as_str() });
    for p in positions {
        let at = json!({ "textDocument": doc, "position": p });
        ask(server, "textDocument/hover", at.clone());
        ask(server, "textDocument/definition", at.clone());
        ask(server, "textDocument/completion", at);
    }
    let whole = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 1_000_000, "character": 0 } });
    ask(
        server,
        "textDocument/inlayHint",
        json!({ "textDocument": doc, "range": whole }),
    );
    ask(
        server,
        "textDocument/documentSymbol",
        json!({ "textDocument": doc }),
    );
    ask(
        server,
        "textDocument/codeAction",
        json!({ "textDocument": doc, "range": whole, "context": { "diagnostics": [] } }),
    );
}

fn mutate(text: &str, rng: &mut Rng) -> String {
    let tokens: Vec<&str> = text.split_inclusive(char::is_whitespace).collect();
    match rng.below(3) {
        0 => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        }
        1 => {
            let i = rng.below(tokens.len());
            tokens
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, t)| *t)
                .collect()
        }
        _ => {
            let i = rng.below(tokens.len());
            let mut out: Vec<&str> = tokens.clone();
            if let Some(t) = tokens.get(i) {
                out.insert(i, t);
            }
            out.concat()
        }
    }
}

/// Opens `file` and queries it; with `mutations`, mutated versions of it too.
fn serve_one(server: &mut Server, rng: &mut Rng, file: &Path, mutations: bool) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let uri = text::path_to_uri(file).unwrap();
    let lines = text.lines().count().max(1);
    let positions: Vec<Position> = (0..3)
        .map(|_| Position::new(rng.below(lines) as u32, rng.below(40) as u32))
        .collect();
    exercise(server, &uri, &text, &positions);
    if mutations {
        for _ in 0..4 {
            let mutated = mutate(&text, rng);
            exercise(server, &uri, &mutated, &positions);
        }
    }
}

#[test]
fn every_repository_file_and_mutations_of_some_are_served_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    og_files(root, &mut files);
    assert!(files.len() > 100, "found only {} .og files", files.len());
    let start = Instant::now();
    // The files are shared out between threads, each with its own server and generator.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    std::thread::scope(|scope| {
        for t in 0..threads {
            let files = &files;
            scope.spawn(move || {
                let mut server = Server::new(None, None);
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 + t as u64);
                for (n, file) in files.iter().enumerate().skip(t).step_by(threads) {
                    serve_one(&mut server, &mut rng, file, n % 32 == 0);
                }
            });
        }
    });
    eprintln!("{} files in {:?}", files.len(), start.elapsed());
}

#[test]
fn answers_on_a_small_program() {
    let text = "-- | Squares.\ndef sq (x: f32) = x * x\n\ndef g (xs: []f32) =\n  let ys = map (\\y -> sq y) xs\n  in lenght ys\n";
    let uri = Uri::from_str("file:///nonexistent/t.og").unwrap();
    let mut server = Server::new(None, None);
    let diags = server.open(uri.clone(), text);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        diags[0].code,
        Some(lsp_types::NumberOrString::String("E0204".into()))
    );
    let doc = json!({ "uri": uri.as_str() });
    let at = |line: u32, character: u32| json!({ "textDocument": doc, "position": { "line": line, "character": character } });
    let hover = ask(&mut server, "textDocument/hover", at(4, 22));
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("def sq (x: f32) : f32") && shown.contains("Squares."),
        "{hover}"
    );
    let def = ask(&mut server, "textDocument/definition", at(4, 22));
    assert_eq!(def["range"]["start"], json!({ "line": 1, "character": 4 }));
    let local = ask(&mut server, "textDocument/definition", at(5, 12));
    assert_eq!(
        local["range"]["start"],
        json!({ "line": 4, "character": 6 })
    );
    let whole =
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 9, "character": 0 } });
    let hints = ask(
        &mut server,
        "textDocument/inlayHint",
        json!({ "textDocument": doc, "range": whole }),
    );
    let labels: Vec<&str> = hints
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["label"].as_str())
        .collect();
    assert!(labels.contains(&": f32"), "{hints}");
    let actions = ask(
        &mut server,
        "textDocument/codeAction",
        json!({ "textDocument": doc, "range": whole, "context": { "diagnostics": [] } }),
    );
    assert!(
        actions.to_string().contains("\"newText\":\"length\""),
        "{actions}"
    );
}

#[test]
fn type_aliases_in_written_types_have_hovers_and_definitions() {
    let text = "-- | Observations.\ntype series = []f32\n\ndef first (s: series) : f32 = s[0]\n";
    let uri = Uri::from_str("file:///nonexistent/a.og").unwrap();
    let mut server = Server::new(None, None);
    assert_eq!(server.open(uri.clone(), text), Vec::new());
    let at = json!({ "textDocument": { "uri": uri.as_str() }, "position": { "line": 3, "character": 16 } });
    let hover = ask(&mut server, "textDocument/hover", at.clone());
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("type series = []f32") && shown.contains("Observations."),
        "{hover}"
    );
    let def = ask(&mut server, "textDocument/definition", at);
    assert_eq!(def["range"]["start"], json!({ "line": 1, "character": 5 }));
}

#[test]
fn library_functions_of_modules_not_imported_complete_with_their_import() {
    let text = "import \"lib/linalg\"\n\ndef f (xs: []f64) =\n  nan\n";
    let uri = Uri::from_str("file:///nonexistent/c.og").unwrap();
    let mut server = Server::new(None, None);
    server.open(uri.clone(), text);
    let at = json!({ "textDocument": { "uri": uri.as_str() }, "position": { "line": 3, "character": 5 } });
    let items = ask(&mut server, "textDocument/completion", at);
    let find = |name: &str| {
        items
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == name)
            .cloned()
    };
    let median = find("nanmedian").expect("nanmedian offered");
    assert!(
        median["detail"]
            .as_str()
            .unwrap()
            .starts_with("def nanmedian ('t: float) [n] (xs: [n]t) : t"),
        "{median}"
    );
    let edit = &median["additionalTextEdits"][0];
    assert_eq!(edit["newText"], "import \"lib/stats\"\n");
    assert_eq!(edit["range"]["start"], json!({ "line": 1, "character": 0 }));
    // A function of an imported module needs no import.
    let imported = find("matmul")
        .or_else(|| find("solve"))
        .expect("a linalg or prelude function");
    assert!(
        imported
            .get("additionalTextEdits")
            .is_none_or(Value::is_null),
        "{imported}"
    );
}
