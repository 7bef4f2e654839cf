//! `ogham lsp`: a language server over standard input and output (the Language Server
//! Protocol, with the `lsp-server` and `lsp-types` crates).
//!
//! Documents are synchronised in full: every `didOpen`/`didChange` replaces the text, which is
//! analysed at once ([`analysis`]: loaded with its imports, type-checked, indexed) and its
//! diagnostics published. Requests are answered from the latest analysis: hover, definition,
//! document symbols, completion, inlay hints, code actions (quick fixes from the diagnostics'
//! help) and code lenses (the values of `-- >>> EXPR` comments, computed once per version of
//! a document that checks: [`eval`] in a child process, [`lenses`] on a thread when the client
//! can be asked to refresh them).
//!
//! Adding a request is one arm in [`Server::request`] and, if clients must be told, one field
//! in [`capabilities`]. Formatting (`textDocument/formatting`) is `ogham fmt`'s
//! (`ogham_compiler::syntax::format`): one edit replacing the whole text, none when the text is
//! already formatted, has a `-- ogham-fmt: off` line or does not parse (its diagnostics say why).
//!
//! Invariants: the server never panics out of its loop: each message is handled under
//! `catch_unwind`, a panicking request is answered with an error and the server goes on.
//! Imports are read from disk, so an import's unsaved edits are not seen until saved.

mod analysis;
mod convert;
pub mod eval;
mod features;
mod index;
mod lenses;
mod library;
mod stdlib_files;
mod text;

use analysis::Analysis;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{Notification as _, PublishDiagnostics};
use lsp_types::{
    CodeActionProviderCapability, CodeLens, CodeLensOptions, CompletionOptions,
    HoverProviderCapability, OneOf, PublishDiagnosticsParams, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// An open document.
struct Document {
    analysis: Analysis,
    /// The values of this version's evaluation comments, once asked for.
    lenses: Option<lenses::Pending>,
}

/// The server's state: the open documents, by URI.
pub struct Server {
    docs: HashMap<String, Document>,
    /// The binary that evaluates `-- >>>` comments (`ogham`), if known.
    worker: Option<PathBuf>,
    /// How to ask the client to ask for code lenses again, if it can be asked.
    refresh: Option<lenses::Refresh>,
}

/// What the server can do, for `initialize`.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions::default()),
        inlay_hint_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        ..Default::default()
    }
}

/// Serves on standard input and output until the client says `exit`.
pub fn serve_stdio() -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let init = connection.initialize(caps).map_err(|e| e.to_string())?;
    let can_refresh = init["capabilities"]["workspace"]["codeLens"]["refreshSupport"] == true;
    let sender = connection.sender.clone();
    let asked = AtomicU64::new(0);
    let refresh: lenses::Refresh = Arc::new(move || {
        let id = format!("ogham-refresh-{}", asked.fetch_add(1, Ordering::Relaxed));
        let req = Request::new(id.into(), "workspace/codeLens/refresh".to_string(), ());
        // A client that went away needs no refresh.
        let _ = sender.send(Message::Request(req));
    });
    // The library's definitions (for completion) are checked once: start now, not on the first
    // completion.
    std::thread::spawn(library::definitions);
    let worker = std::env::current_exe().ok();
    let mut server = Server::new(worker, can_refresh.then_some(refresh));
    main_loop(&connection, &mut server)?;
    // The writer thread ends when every sender is gone: the connection's and the refresh's.
    drop(server);
    drop(connection);
    io_threads.join().map_err(|e| e.to_string())
}

fn main_loop(connection: &Connection, server: &mut Server) -> Result<(), String> {
    for message in &connection.receiver {
        let replies = match message {
            Message::Request(req) => {
                if connection
                    .handle_shutdown(&req)
                    .map_err(|e| e.to_string())?
                {
                    return Ok(());
                }
                vec![Message::Response(server.answer(req))]
            }
            Message::Notification(n) => server.notify(n),
            Message::Response(_) => Vec::new(),
        };
        for reply in replies {
            connection.sender.send(reply).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Decodes `params` as `P` and encodes what `f` makes of them.
fn with<P: DeserializeOwned, R: Serialize>(
    params: Value,
    f: impl FnOnce(P) -> R,
) -> Result<Value, String> {
    let params = serde_json::from_value(params).map_err(|e| format!("bad parameters: {e}"))?;
    serde_json::to_value(f(params)).map_err(|e| e.to_string())
}

impl Server {
    pub fn new(worker: Option<PathBuf>, refresh: Option<lenses::Refresh>) -> Server {
        Server {
            docs: HashMap::new(),
            worker,
            refresh,
        }
    }

    /// Answers a request; a panic while answering is an error answer.
    pub fn answer(&mut self, req: Request) -> Response {
        let Request { id, method, params } = req;
        match catch_unwind(AssertUnwindSafe(|| self.request(&method, params))) {
            Ok(Ok(value)) => Response {
                id,
                result: Some(value),
                error: None,
            },
            Ok(Err(message)) => Response::new_err(id, ErrorCode::InvalidParams as i32, message),
            Err(_) => {
                // Standard error is the client's log of the server.
                let message = format!("internal error while answering `{method}`");
                eprintln!("ogham lsp: {message}");
                Response::new_err(id, ErrorCode::InternalError as i32, message)
            }
        }
    }

    fn doc(&self, uri: &Uri) -> Option<&Analysis> {
        self.docs.get(uri.as_str()).map(|d| &d.analysis)
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        use lsp_types::*;
        match method {
            "textDocument/hover" => with(params, |p: HoverParams| {
                let at = p.text_document_position_params;
                features::hover(self.doc(&at.text_document.uri)?, at.position)
            }),
            "textDocument/definition" => with(params, |p: GotoDefinitionParams| {
                let at = p.text_document_position_params;
                let a = self.doc(&at.text_document.uri)?;
                let found = features::definition(a, &at.text_document.uri, at.position)?;
                Some(GotoDefinitionResponse::Scalar(found))
            }),
            "textDocument/documentSymbol" => with(params, |p: DocumentSymbolParams| {
                let a = self.doc(&p.text_document.uri)?;
                Some(DocumentSymbolResponse::Nested(features::symbols(a)))
            }),
            "textDocument/completion" => with(params, |p: CompletionParams| {
                let at = p.text_document_position;
                let a = self.doc(&at.text_document.uri)?;
                Some(CompletionResponse::Array(features::completion(
                    a,
                    at.position,
                )))
            }),
            "textDocument/inlayHint" => with(params, |p: InlayHintParams| {
                Some(features::inlay_hints(
                    self.doc(&p.text_document.uri)?,
                    p.range,
                ))
            }),
            "textDocument/codeAction" => with(params, |p: CodeActionParams| {
                let uri = &p.text_document.uri;
                Some(convert::code_actions(self.doc(uri)?, uri, p.range))
            }),
            "textDocument/codeLens" => with(params, |p: CodeLensParams| {
                self.lenses(&p.text_document.uri)
            }),
            "textDocument/formatting" => with(params, |p: DocumentFormattingParams| {
                Some(features::formatting(self.doc(&p.text_document.uri)?))
            }),
            _ => Err(format!("unsupported request `{method}`")),
        }
    }

    /// Handles a notification: the diagnostics to publish, if it changed a document.
    pub fn notify(&mut self, n: Notification) -> Vec<Message> {
        let method = n.method.clone();
        match catch_unwind(AssertUnwindSafe(|| self.notification(n))) {
            Ok(reply) => reply.into_iter().collect(),
            Err(_) => {
                eprintln!("ogham lsp: internal error while handling `{method}`");
                Vec::new()
            }
        }
    }

    fn notification(&mut self, n: Notification) -> Option<Message> {
        use lsp_types::*;
        let (uri, text) = match n.method.as_str() {
            "textDocument/didOpen" => {
                let p: DidOpenTextDocumentParams = serde_json::from_value(n.params).ok()?;
                (p.text_document.uri, p.text_document.text)
            }
            "textDocument/didChange" => {
                let p: DidChangeTextDocumentParams = serde_json::from_value(n.params).ok()?;
                // Full synchronisation: the last change is the whole text.
                (
                    p.text_document.uri,
                    p.content_changes.into_iter().last()?.text,
                )
            }
            "textDocument/didClose" => {
                let p: DidCloseTextDocumentParams = serde_json::from_value(n.params).ok()?;
                self.docs.remove(p.text_document.uri.as_str());
                return Some(publish(p.text_document.uri, Vec::new()));
            }
            _ => return None,
        };
        let diagnostics = self.open(uri.clone(), &text);
        Some(publish(uri, diagnostics))
    }

    /// Analyses `text` as the document `uri`: its diagnostics.
    pub fn open(&mut self, uri: Uri, text: &str) -> Vec<lsp_types::Diagnostic> {
        let path = text::uri_to_path(&uri).unwrap_or_else(|| PathBuf::from(uri.as_str()));
        let analysis = Analysis::new(&path, text);
        let diagnostics = convert::diagnostics(&analysis, &uri);
        self.docs.insert(
            uri.as_str().to_string(),
            Document {
                analysis,
                lenses: None,
            },
        );
        diagnostics
    }

    /// The code lenses of a document: the values of its evaluation comments.
    fn lenses(&mut self, uri: &Uri) -> Option<Vec<CodeLens>> {
        let (worker, refresh) = (self.worker.clone(), self.refresh.clone());
        let doc = self.docs.get_mut(uri.as_str())?;
        Some(lenses::lenses(
            &doc.analysis,
            &mut doc.lenses,
            worker,
            refresh,
        ))
    }
}

fn publish(uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>) -> Message {
    let params = PublishDiagnosticsParams::new(uri, diagnostics, None);
    Message::Notification(Notification::new(
        PublishDiagnostics::METHOD.to_string(),
        params,
    ))
}

#[cfg(test)]
mod tests;
