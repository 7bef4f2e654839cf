// The Ogham extension's code: starts the language server, `ogham lsp`, for Ogham files
// (diagnostics, hover, go to definition, completion, inlay hints, `-- >>>` values). Needs the
// `vscode-languageclient` package: run `npm install` in this folder once.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("ogham").get("server.path", "ogham");
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "ogham",
    "Ogham",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "ogham" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
