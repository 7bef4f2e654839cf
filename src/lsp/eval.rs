//! Evaluation comments: a line `-- >>> EXPR` is evaluated on the reference interpreter in the
//! scope of the file's definitions, and its value is shown as a code lens on that line.
//!
//! The evaluation runs in a child process (`ogham lsp --eval-worker`), never in the server: a
//! loop that does not end or a program that allocates without bound cannot hang or kill the
//! server. The child gets the file's text and the expressions on standard input (JSON), runs
//! each as the entry point of the file's text with `entry <name> = EXPR` appended, and writes
//! one JSON line per expression. The server waits [`TIME_LIMIT`] for all of them, then kills
//! the child; the values it has not written by then show as timed out. The child's arrays are
//! bounded by `OGHAM_MEMORY_LIMIT` ([`MEMORY_LIMIT`]).
//!
//! Invariants: the server evaluates only a document that checked without errors; results are
//! one per comment, in the comments' order; a result is at most [`SHOWN`] characters.

use ogham_runtime::value::Value;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the evaluations of one document may take together.
pub const TIME_LIMIT: Duration = Duration::from_secs(2);
/// The memory limit of the evaluating process's arrays (`OGHAM_MEMORY_LIMIT`).
pub const MEMORY_LIMIT: &str = "512M";
/// The most characters of a value shown.
const SHOWN: usize = 200;
/// The entry point each expression becomes.
const ENTRY: &str = "ogham_lsp_eval";

/// The marker of an evaluation comment.
const MARKER: &str = "-- >>>";

/// What the worker is asked.
#[derive(Serialize, Deserialize)]
struct Request {
    path: PathBuf,
    text: String,
    exprs: Vec<String>,
}

/// The evaluation comments of `text`: line numbers and expressions.
pub fn comments(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let expr = line.trim_start().strip_prefix(MARKER)?.trim();
            (!expr.is_empty()).then(|| (i, expr.to_string()))
        })
        .collect()
}

/// Evaluates `exprs` in the scope of `text` (the file `path`) with the worker `worker` (the
/// `ogham` binary): one result text per expression.
pub fn evaluate(worker: &Path, path: &Path, text: &str, exprs: Vec<String>) -> Vec<String> {
    let n = exprs.len();
    let request = Request {
        path: path.to_path_buf(),
        text: text.to_string(),
        exprs,
    };
    let mut results = match run_worker(worker, &request) {
        Ok(results) => results,
        Err(e) => vec![format!("cannot evaluate: {e}"); n],
    };
    let limit = TIME_LIMIT.as_secs_f64();
    results.resize(n, format!("timed out (the limit is {limit} s)"));
    results.truncate(n);
    results
}

/// Runs the worker on `request`; the results it wrote within the time limit.
fn run_worker(worker: &Path, request: &Request) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + TIME_LIMIT;
    let mut child = Command::new(worker)
        .args(["lsp", "--eval-worker"])
        .env(ogham_runtime::memory::VARIABLE, MEMORY_LIMIT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let input = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        // A worker that died early closed the pipe; its missing results say so.
        let _ = stdin.write_all(&input);
    }
    let (send, receive) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut results = Vec::new();
    while results.len() < request.exprs.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        match receive.recv_timeout(left) {
            Ok(line) => results.push(serde_json::from_str(&line).unwrap_or(line)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(results)
}

/// The worker: reads a request on standard input, writes a JSON string per expression.
pub fn worker() -> Result<(), String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| e.to_string())?;
    let request: Request = serde_json::from_str(&input).map_err(|e| e.to_string())?;
    let mut out = std::io::stdout().lock();
    for expr in &request.exprs {
        let result = evaluate_one(&request.path, &request.text, expr);
        let line = serde_json::to_string(&result).map_err(|e| e.to_string())?;
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The value of `expr` in the scope of `text`, or its first error, as shown on the lens.
fn evaluate_one(path: &Path, text: &str, expr: &str) -> String {
    let program = format!("{text}\nentry {ENTRY} =\n  {expr}\n");
    let fe = match crate::Frontend::load_source(&path.display().to_string(), &program) {
        Ok(fe) => fe,
        Err(e) => return first_error(&e.diagnostics),
    };
    let (sink, _kept) = ogham_runtime::trace::collect();
    let outcome = ogham_runtime::trace::with_sink(Some(sink), || {
        ogham_interp::run_entry(&fe.sources, &fe.program, &fe.checked, ENTRY, Vec::new())
            .map_err(Box::new)
    });
    match outcome {
        Ok(mut values) if values.len() == 1 => shown(&values.swap_remove(0)),
        Ok(values) => shown(&Value::Tuple(values)),
        Err(d) => first_error(&[*d]),
    }
}

fn first_error(diags: &[ogham_ir::diag::Diagnostic]) -> String {
    diags.first().map_or("error".to_string(), |d| {
        format!("error[{}]: {}", d.code, d.message)
    })
}

/// `= value`, cut to [`SHOWN`] characters.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("= {}…", &text[..cut]),
        None => format!("= {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_found_and_evaluated_in_the_file_scope() {
        let text = "def sq (x: i32) = x * x\n-- >>> sq 7\n  -- >>>   [1, 2] \n-- >>>\n";
        assert_eq!(
            comments(text),
            vec![(1, "sq 7".to_string()), (2, "[1, 2]".to_string())]
        );
        let path = Path::new("/nonexistent/t.og");
        assert_eq!(evaluate_one(path, text, "sq 7"), "= 49i32");
        assert!(evaluate_one(path, text, "nope").starts_with("error[E0204]"));
    }
}
