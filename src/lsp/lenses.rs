//! The code lenses of a document: the values of its `-- >>> EXPR` comments ([`eval`]), one
//! lens on each comment's line.
//!
//! With a client that can be asked to refresh its code lenses (`workspace/codeLens/refresh`),
//! the evaluation runs on a thread of its own: the first answer shows `evaluating…`, and the
//! thread asks the client to ask again when the values are there, so the server answers other
//! requests meanwhile. With another client the answer waits for the values (at most
//! [`eval::TIME_LIMIT`]).
//!
//! Invariants: a [`Pending`] belongs to one version of a document (a change makes a new one),
//! so values are never shown against another text; it is filled at most once.

use super::analysis::Analysis;
use super::eval;
use super::text::LineIndex;
use lsp_types::{CodeLens, Command, Range};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Asks the client to ask for the code lenses again.
pub type Refresh = Arc<dyn Fn() + Send + Sync>;

/// The lens titles of one version of a document, once evaluated.
pub type Pending = Arc<OnceLock<Vec<String>>>;

/// What an evaluation needs, owned (it may run on another thread).
struct Job {
    worker: Option<PathBuf>,
    path: PathBuf,
    text: String,
    clean: bool,
    exprs: Vec<String>,
}

impl Job {
    fn titles(self) -> Vec<String> {
        let n = self.exprs.len();
        match self.worker {
            Some(_) if !self.clean => vec!["not evaluated: the file has errors".to_string(); n],
            Some(w) => eval::evaluate(&w, &self.path, &self.text, self.exprs),
            None => vec!["not evaluated: no evaluator".to_string(); n],
        }
    }
}

/// The lenses of `a`: from `pending` if it is there, else starting the evaluation (stored in
/// a new `pending`); `evaluating…` while it runs.
pub fn lenses(
    a: &Analysis,
    pending: &mut Option<Pending>,
    worker: Option<PathBuf>,
    refresh: Option<Refresh>,
) -> Vec<CodeLens> {
    let comments = eval::comments(&a.text);
    if comments.is_empty() {
        return Vec::new();
    }
    let cell = match pending {
        Some(cell) => cell.clone(),
        None => {
            let cell: Pending = Arc::default();
            *pending = Some(cell.clone());
            let job = Job {
                worker,
                path: a.path.clone(),
                text: a.text.clone(),
                clean: a.clean,
                exprs: comments.iter().map(|(_, e)| e.clone()).collect(),
            };
            match refresh {
                Some(refresh) => {
                    let filled = cell.clone();
                    std::thread::spawn(move || {
                        let titles = std::panic::catch_unwind(|| job.titles());
                        let _ = filled.set(titles.unwrap_or_default());
                        refresh();
                    });
                }
                None => {
                    let _ = cell.set(job.titles());
                }
            }
            cell
        }
    };
    let titles = cell.get().cloned().unwrap_or_default();
    let idx = LineIndex::new(&a.text);
    comments
        .iter()
        .enumerate()
        .map(|(i, (line, _))| {
            let start = idx.line_start(*line);
            let end = start + idx.line(*line).len();
            let title = titles.get(i).map_or("evaluating…", String::as_str);
            CodeLens {
                range: Range::new(idx.position(start), idx.position(end)),
                command: Some(Command::new(title.to_string(), String::new(), None)),
                data: None,
            }
        })
        .collect()
}
