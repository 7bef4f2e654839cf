//! `ogham lsp` as an editor runs it: a client speaking the Language Server Protocol to the
//! binary over its standard input and output. It opens a file with an error (diagnostics with
//! the code and the quick fix), fixes it, and asks for hover (a definition's signature and doc),
//! definition (into another file and into the standard library), completion, inlay hints and
//! code lenses (evaluation comments, one of which never ends and must time out, computed while
//! the server answers other requests) and formatting, then shuts the server down.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// How long any answer may take before the test fails (instead of hanging).
const PATIENCE: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for answers.
    notifications: Vec<Value>,
}

/// Reads one `Content-Length`-framed message.
fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The labels of a list of completion items or inlay hints.
fn labels(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["label"].as_str())
        .collect()
}

impl Client {
    fn start(cache: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ogham"))
            .arg("lsp")
            .env("OGHAM_CACHE_DIR", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, messages) = channel();
        std::thread::spawn(move || {
            while let Some(m) = read_message(&mut stdout) {
                if send.send(m).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
            next_id: 0,
            notifications: Vec::new(),
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and waits for its answer (its `result`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let m = self.messages.recv_timeout(PATIENCE).expect("an answer");
            if m["id"] == json!(id) {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
            self.notifications.push(m);
        }
    }

    /// The next message from the server with method `method` (waiting for it if need be).
    fn wait_for(&mut self, method: &str) -> Value {
        loop {
            if let Some(i) = self
                .notifications
                .iter()
                .position(|m| m["method"] == method)
            {
                return self.notifications.remove(i);
            }
            let m = self.messages.recv_timeout(PATIENCE).expect(method);
            self.notifications.push(m);
        }
    }

    /// The next diagnostics published.
    fn diagnostics(&mut self) -> Value {
        self.wait_for("textDocument/publishDiagnostics")["params"]["diagnostics"].clone()
    }
}

const HELPER: &str = "-- | Twice the value.\ndef twice (x: f32) : f32 = 2f32 * x\n";

const BROKEN: &str = "import \"helper\"\n\ndef g (xs: []f32) =\n  let ys = map (\\y -> twice y) xs\n  in sum (lenght ys)\n";

const FIXED: &str = "import \"helper\"\n\ndef g (xs: []f32) =\n  let ys = map (\\y -> twice y) xs\n  in sum ys\n\n-- >>> g [1, 2, 3]\n-- >>> loop i = 0i64 while true do i + 1\n";

#[test]
fn a_client_gets_diagnostics_hovers_definitions_completions_hints_and_lenses() {
    let dir = super::scratch("lsp");
    super::write(&dir, "helper.og", HELPER);
    let main = super::write(&dir, "main.og", BROKEN);
    let uri = format!("file://{}", main.canonicalize().unwrap().display());
    let mut c = Client::start(&dir.join("cache"));
    let caps = json!({ "workspace": { "codeLens": { "refreshSupport": true } } });
    let init = c.request("initialize", json!({ "capabilities": caps }));
    assert_eq!(init["capabilities"]["hoverProvider"], json!(true), "{init}");
    c.notify("initialized", json!({}));
    let doc = json!({ "uri": uri });
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "ogham", "version": 1, "text": BROKEN } }),
    );
    let diags = c.diagnostics();
    assert_eq!(diags[0]["code"], "E0204", "{diags}");
    assert_eq!(
        diags[0]["range"]["start"],
        json!({ "line": 4, "character": 10 })
    );
    let range =
        json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 20, "character": 0 } });
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": doc, "range": range, "context": { "diagnostics": [] } }),
    );
    assert!(
        actions.to_string().contains("\"newText\":\"length\""),
        "{actions}"
    );

    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": FIXED }] }),
    );
    assert_eq!(c.diagnostics(), json!([]));
    let at = |line: u32, character: u32| json!({ "textDocument": doc, "position": { "line": line, "character": character } });
    let hover = c.request("textDocument/hover", at(3, 22));
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("def twice (x: f32) : f32") && shown.contains("Twice the value."),
        "{hover}"
    );
    let local = c.request("textDocument/hover", at(4, 9));
    assert!(
        local.to_string().contains("ys : [") && local.to_string().contains("f32"),
        "{local}"
    );

    let def = c.request("textDocument/definition", at(3, 22));
    assert!(
        def["uri"].as_str().unwrap().ends_with("/helper.og"),
        "{def}"
    );
    assert_eq!(def["range"]["start"], json!({ "line": 1, "character": 4 }));
    let def = c.request("textDocument/definition", at(4, 5));
    let lib = def["uri"].as_str().unwrap();
    assert!(lib.ends_with("/lib/prelude.og"), "{def}");
    let lib_text = std::fs::read_to_string(lib.strip_prefix("file://").unwrap()).unwrap();
    let line = def["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(
        lib_text.lines().nth(line).unwrap().starts_with("def sum "),
        "{def}"
    );

    let completion = c.request("textDocument/completion", at(4, 5));
    let completed = labels(&completion);
    for name in ["ys", "xs", "twice", "sum", "map", "g"] {
        assert!(
            completed.contains(&name),
            "{name} missing from {completed:?}"
        );
    }
    let hints = c.request(
        "textDocument/inlayHint",
        json!({ "textDocument": doc, "range": range }),
    );
    assert!(labels(&hints).contains(&": f32"), "{hints}");

    // The values are computed on a thread of the server, which asks the client to ask again.
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": doc }));
    assert_eq!(lenses[0]["command"]["title"], "evaluating…", "{lenses}");
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": doc }),
    );
    assert_eq!(symbols[0]["name"], "g", "{symbols}");
    let refresh = c.wait_for("workspace/codeLens/refresh");
    c.send(json!({ "jsonrpc": "2.0", "id": refresh["id"], "result": null }));
    let lenses = c.request("textDocument/codeLens", json!({ "textDocument": doc }));
    let titles: Vec<&str> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["command"]["title"].as_str())
        .collect();
    assert_eq!(titles[0], "= 12.0f32", "{lenses}");
    assert!(titles[1].starts_with("timed out"), "{lenses}");

    // Formatting: `ogham fmt`'s text as one edit, then nothing once it is applied.
    let messy = "def  twice_plus (x: f32)  :  f32 =   x +   x\n";
    let format = |c: &mut Client, version: i64, text: &str| {
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
        c.diagnostics();
        c.request(
            "textDocument/formatting",
            json!({ "textDocument": doc, "options": { "tabSize": 2, "insertSpaces": true } }),
        )
    };
    let edits = format(&mut c, 3, messy);
    assert_eq!(
        edits[0]["newText"], "def twice_plus (x: f32) : f32 = x + x\n",
        "{edits}"
    );
    assert_eq!(
        edits[0]["range"]["start"],
        json!({ "line": 0, "character": 0 })
    );
    let formatted = edits[0]["newText"].as_str().unwrap().to_string();
    assert_eq!(format(&mut c, 4, &formatted), json!([]));

    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    // The server exits (within the patience: a server that hangs on exit fails the test).
    let asked = std::time::Instant::now();
    let status = loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            break status;
        }
        if asked.elapsed() > PATIENCE {
            let _ = c.child.kill();
            panic!("the server did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}
