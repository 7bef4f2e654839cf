-- Checks `ogham lsp` through Neovim's own LSP client, run by scripts/editor-check as
--   nvim --headless FILE -c "luafile scripts/editors/nvim-check.lua"
-- after Neovim read the init.lua that docs/editors.md gives (so the server was started by the
-- documented set-up, not by this file). FILE is the sample written by scripts/editor-check: an
-- import of lib/stats, a use of `nanmedian`, a line to format, and an unknown name `y`.
-- Works on Neovim 0.7 (Debian 12) to 0.12: only API present in all of them, or a fallback.
-- Prints one line per check and the times since Neovim started; exits non-zero on a failure.

local started = vim.loop.hrtime()
local buf = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(buf)
local failures = 0

local function say(text)
  io.stdout:write("nvim: " .. text .. "\n")
end

local function check(ok, what, detail)
  if ok then
    say("ok   " .. what)
  else
    failures = failures + 1
    say("FAIL " .. what .. (detail and (": " .. detail) or ""))
  end
end

local function ms()
  return string.format("%d ms", (vim.loop.hrtime() - started) / 1e6)
end

-- Exits with the checks' status as the exit code: `:cquit! 0` rather than `:qall!`, whose exit
-- code Neovim 0.12 sometimes made non-zero after every check had passed (a CI run printed
-- "all checks passed" and failed), as it shut the language client down.
local function finish()
  vim.cmd(failures == 0 and "cquit! 0" or "cquit! 1")
end

-- The 0-based position of the first `word` on the 1-based line `lnum` of the buffer.
local function position(lnum, word)
  local text = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, true)[1]
  local col = assert(text:find(word, 1, true), word .. " not on line " .. lnum)
  return { line = lnum - 1, character = col - 1 }
end

local function request(method, pos)
  local params = { textDocument = { uri = uri }, position = pos }
  local answers = vim.lsp.buf_request_sync(buf, method, params, 20000) or {}
  for _, answer in pairs(answers) do
    if answer.result then
      return answer.result
    end
  end
  return nil
end

local function line_of(pattern)
  for i, text in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, true)) do
    if text:find(pattern, 1, true) then
      return i
    end
  end
  error(pattern .. " not in the sample")
end

-- The documented set-up started the server and attached it to this buffer.
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
local client
vim.wait(20000, function()
  for _, c in ipairs(get_clients()) do
    if c.name == "ogham" and vim.lsp.buf_is_attached(buf, c.id) then
      client = c
    end
  end
  return client ~= nil
end, 20)
check(client ~= nil, "the set-up of docs/editors.md attached `ogham lsp` (" .. vim.bo.filetype .. ")")
if not client then
  finish()
  return
end

-- Diagnostics: code, range and message of the unknown name.
local diags = {}
vim.wait(30000, function()
  diags = vim.diagnostic.get(buf)
  return #diags > 0
end, 20)
say("first diagnostic after " .. ms())
local d = diags[1] or {}
local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
local y = position(line_of("x + y"), "y")
check(
  code == "E0204" and d.lnum == y.line and d.col == y.character and d.end_col == y.character + 1
    and (d.message or ""):find("cannot find `y`", 1, true) ~= nil,
  "diagnostic E0204 on `y`",
  vim.inspect(d)
)

-- Hover on a library function: its signature and doc comment.
local use = position(line_of("map nanmedian"), "nanmedian")
local hover = request("textDocument/hover", use)
say("hover answered after " .. ms())
local contents = hover and hover.contents or {}
local text = type(contents) == "string" and contents or contents.value or vim.inspect(contents)
check(
  text:find("def nanmedian ('t: float) [n] (xs: [n]t) : t", 1, true) ~= nil
    and text:find("The median of the valid", 1, true) ~= nil,
  "hover on `nanmedian`: signature and doc comment",
  text
)

-- Completion: names of the file's import and of a library module it does not import.
local items = request("textDocument/completion", use) or {}
items = items.items or items
local labels = {}
for _, item in ipairs(items) do
  labels[item.label] = true
end
check(
  labels.nanmedian and labels.argsort and labels.tw_distance or false,
  "completion offers `nanmedian`, `argsort` and `tw_distance` (lib/dtw, not imported)",
  #items .. " items"
)

-- Formatting through the client's own command, then the buffer's text.
if vim.lsp.buf.format then
  vim.lsp.buf.format({ bufnr = buf, async = false, timeout_ms = 20000 })
else
  vim.lsp.buf.formatting_sync(nil, 20000)
end
local formatted = vim.api.nvim_buf_get_lines(buf, 0, -1, true)
check(
  vim.tbl_contains(formatted, "def row_medians [m][n] (xs: [m][n]f32) : [m]f32 = map nanmedian xs"),
  "formatting joined `row_medians` onto one line",
  table.concat(formatted, "\n")
)

-- Go to definition, as the user does it: the cursor on the use, then the client's command.
use = position(line_of("map nanmedian"), "nanmedian")
vim.api.nvim_win_set_cursor(0, { use.line + 1, use.character })
vim.lsp.buf.definition()
vim.wait(20000, function()
  return vim.api.nvim_get_current_buf() ~= buf
end, 20)
local target = vim.api.nvim_buf_get_name(0)
local row = vim.api.nvim_win_get_cursor(0)[1]
local line = vim.api.nvim_get_current_line()
check(
  target:match("lib/stats%.og$") ~= nil and line:find("^def nanmedian") ~= nil,
  "definition of `nanmedian` opens lib/stats.og at its `def`",
  target .. ":" .. row .. ": " .. line
)

say(failures == 0 and "all checks passed" or (failures .. " checks failed"))
finish()
