// Checks editors/vscode without VS Code (which cannot be installed where the tests run), run by
// scripts/editor-check as `node scripts/editors/vscode-check.js`: loads extension.js with stand-ins
// for the `vscode` and `vscode-languageclient/node` modules, activates it, and checks that it
// starts `ogham lsp` (the binary named by the `ogham.server.path` setting, whose default
// package.json declares) for the language package.json contributes, on activation by that
// language, and stops the client on deactivation.
"use strict";

const assert = require("assert");
const Module = require("module");
const path = require("path");

const dir = path.join(__dirname, "..", "..", "editors", "vscode");
const manifest = require(path.join(dir, "package.json"));
const language = manifest.contributes.languages[0].id;
const setting = manifest.contributes.configuration.properties["ogham.server.path"];

let created = null;
let stopped = false;
const stubs = {
  vscode: {
    workspace: {
      getConfiguration: (section) => ({
        get: (key, fallback) => {
          assert.strictEqual(`${section}.${key}`, "ogham.server.path");
          return fallback;
        },
      }),
    },
  },
  "vscode-languageclient/node": {
    LanguageClient: class {
      constructor(id, name, server, client) {
        created = { id, name, server, client };
      }
      start() {
        return Promise.resolve();
      }
      stop() {
        stopped = true;
        return Promise.resolve();
      }
    },
  },
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  return request in stubs ? stubs[request] : load.call(this, request, parent, isMain);
};

const extension = require(path.join(dir, manifest.main));
const context = { subscriptions: [] };
Promise.resolve(extension.activate(context))
  .then(() => {
    assert.deepStrictEqual(manifest.activationEvents, [`onLanguage:${language}`]);
    assert.ok(created, "activate() made no LanguageClient");
    for (const mode of ["run", "debug"]) {
      assert.strictEqual(created.server[mode].command, setting.default);
      assert.deepStrictEqual(created.server[mode].args, ["lsp"]);
    }
    assert.deepStrictEqual(created.client.documentSelector, [{ scheme: "file", language }]);
    assert.strictEqual(manifest.contributes.grammars[0].language, language);
    assert.ok(manifest.dependencies["vscode-languageclient"], "vscode-languageclient not a dependency");
    assert.ok(context.subscriptions.length > 0, "the client is not disposed with the extension");
    return extension.deactivate();
  })
  .then(() => {
    assert.ok(stopped, "deactivate() did not stop the client");
    console.log(`vscode: ok   extension.js starts \`${setting.default} lsp\` for \`${language}\` files and stops it`);
  })
  .catch((e) => {
    console.log(`vscode: FAIL ${e.message}`);
    process.exitCode = 1;
  });
