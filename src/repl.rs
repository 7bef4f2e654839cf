//! `ogham repl [FILE]`: evaluates expressions on the reference interpreter in the scope of a
//! program's definitions, one line at a time, from standard input (interactive or piped).
//!
//! Each line is checked and run as a small program of its own, whose root module sits beside
//! FILE and imports it and FILE's own imports (so FILE's definitions and those it imports are in
//! scope, as inside FILE), then holds the definitions the session has made (`def` lines), then
//! the line:
//!
//! ```text
//! import "FILE"                             -- and each `import` of FILE
//! import ...                                -- earlier `import` lines
//! def ...                                   -- earlier `def` lines
//! entry <repl> (x: []f32) (k: i64) ... =    -- one parameter per bound name
//! EXPR
//! ```
//!
//! Names bound by `let NAME = EXPR` and `:load NAME FILE.npy` are values (evaluated once; a
//! trace in `EXPR` prints when the `let` runs) passed as the entry's arguments, so a value is
//! never recomputed. A line that does not check or fails at run time is reported as a
//! diagnostic (pointing into the line) and the session goes on with what it had. Invariant: a
//! definition or binding is kept only after the program containing it checked.

use crate::Frontend;
use ogham_compiler::syntax::ast::Decl;
use ogham_ir::diag::render;
use ogham_ir::types::Type;
use ogham_runtime::trace;
use ogham_runtime::value::Value;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The name of the entry point each line becomes.
const ENTRY: &str = "repl_value";

const HELP: &str = "\
commands:
  EXPR                  evaluate an expression and print its value
  let NAME = EXPR       evaluate and bind NAME for later lines
  def NAME ... = EXPR   add a definition (a function, a constant)
  import \"PATH\"         bring a module's definitions into scope (import \"lib/stats\")
  :type EXPR            print the type of an expression (also :t)
  :load NAME FILE.npy   bind NAME to the array in a .npy file
  :help                 this list
  :quit                 leave (also :q, or the end of the input)
traces (`trace \"label\" e`) print as they happen, on standard error.";

/// One session: the program whose definitions are in scope, and what the session added.
pub struct Session {
    /// `import "..."` of the program and of the session's `import` lines.
    import: String,
    /// Where the synthetic root module is (relative imports resolve from its directory).
    name: String,
    defs: Vec<String>,
    /// Bound names: name, type text (sizes anonymous), value.
    bound: Vec<(String, String, Value)>,
}

/// What a line asks for.
enum Line<'a> {
    Empty,
    Quit,
    Help,
    Type(&'a str),
    Load(&'a str, &'a str),
    Let(&'a str, &'a str),
    Def(&'a str),
    Import(&'a str),
    Eval(&'a str),
    Bad(String),
}

fn parse_line(line: &str) -> Line<'_> {
    let line = line.trim();
    let word = |s: &str| s.split_whitespace().next().unwrap_or("").to_string();
    if line.is_empty() || line.starts_with("--") {
        return Line::Empty;
    }
    if let Some(command) = line.strip_prefix(':') {
        let (name, rest) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let rest = rest.trim();
        return match name {
            "q" | "quit" => Line::Quit,
            "h" | "help" => Line::Help,
            "t" | "type" if !rest.is_empty() => Line::Type(rest),
            "load" => match rest.split_whitespace().collect::<Vec<_>>()[..] {
                [name, file] if is_name(name) => Line::Load(name, file),
                _ => Line::Bad("usage: :load NAME FILE.npy".to_string()),
            },
            _ => Line::Bad(format!("unknown command `:{name}` (:help lists them)")),
        };
    }
    if word(line) == "def" {
        return Line::Def(line);
    }
    if word(line) == "import" {
        return Line::Import(line);
    }
    if word(line) == "let"
        && let Some((lhs, rhs)) = line[3..].split_once('=')
        && is_name(lhs.trim())
        && !rhs.starts_with('=')
    {
        return Line::Let(lhs.trim(), rhs.trim());
    }
    Line::Eval(line)
}

fn is_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '\'')
}

/// `t` with every size anonymous (`[n][3]f32` -> `[][]f32`), as a parameter's type.
fn anonymous(t: &Type) -> String {
    match t {
        Type::Array(inner, _) => format!("[]{}", anonymous(inner)),
        Type::Tuple(ts) => {
            let parts: Vec<String> = ts.iter().map(anonymous).collect();
            format!("({})", parts.join(", "))
        }
        Type::Record(fs) => {
            let parts: Vec<String> = fs
                .iter()
                .map(|(n, t)| format!("{n}: {}", anonymous(t)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// The type text of a value read from a `.npy` file.
fn value_type(v: &Value) -> String {
    match v {
        Value::Scalar(s) => s.prim_type().to_string(),
        Value::Array(a) => format!("{}{}", "[]".repeat(a.rank()), a.elem_type()),
        Value::Tuple(vs) => {
            let parts: Vec<String> = vs.iter().map(value_type).collect();
            format!("({})", parts.join(", "))
        }
    }
}

impl Session {
    /// A session in the scope of `file` (or of the standard prelude alone); `file`'s
    /// diagnostics, rendered, when it does not check.
    pub fn new(file: Option<&Path>) -> Result<Session, String> {
        let Some(f) = file else {
            return Ok(Session {
                import: String::new(),
                name: "<repl>".to_string(),
                defs: Vec::new(),
                bound: Vec::new(),
            });
        };
        let fe = Frontend::load(f).map_err(|e| e.render().trim_end().to_string())?;
        let module = f.with_extension("");
        let module = module.file_name().map(PathBuf::from).unwrap_or_default();
        let mut import = format!("import {:?}\n", module.display().to_string());
        let root = fe.program.modules.last().map(|m| m.decls.as_slice());
        for decl in root.unwrap_or_default() {
            if let Decl::Import(i) = decl {
                import.push_str(&format!("import {:?}\n", i.path));
            }
        }
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Session {
            import,
            name: dir.join("<repl>").display().to_string(),
            defs: Vec::new(),
            bound: Vec::new(),
        })
    }

    /// The program text for `body`: `def` (for `:type`, whose value may be a function) or
    /// `entry`, with the bound names as parameters.
    fn program(&self, keyword: &str, extra_def: Option<&str>, body: &str) -> String {
        let params: String = self
            .bound
            .iter()
            .map(|(n, t, _)| format!(" ({n}: {t})"))
            .collect();
        let mut text = self.import.clone();
        for d in self.defs.iter().map(String::as_str).chain(extra_def) {
            text.push_str(d);
            text.push('\n');
        }
        text.push_str(&format!("{keyword} {ENTRY}{params} =\n{body}\n"));
        text
    }

    /// Checks `text`; the diagnostics rendered on failure.
    fn check(&self, text: &str) -> Result<Frontend, String> {
        Frontend::load_source(&self.name, text).map_err(|e| e.render())
    }

    /// Runs the entry of `text` on the bound values, printing its traces to `err`: the result
    /// types and values.
    fn evaluate(&self, expr: &str, err: &mut dyn Write) -> Result<(Type, Value), String> {
        let fe = self.check(&self.program("entry", None, expr))?;
        let results = fe.entry(ENTRY)?.results.clone();
        let args = self.bound.iter().map(|(_, _, v)| v.clone()).collect();
        let (sink, kept) = trace::collect();
        let outcome = trace::with_sink(Some(sink), || {
            ogham_interp::run_entry(&fe.sources, &fe.program, &fe.checked, ENTRY, args)
                .map_err(Box::new)
        });
        for t in kept.lock().map(|t| t.clone()).unwrap_or_default() {
            let _ = writeln!(err, "{}", trace::format(&fe.sources, &t));
        }
        let mut outputs = outcome.map_err(|d| render(&fe.sources, &[*d]))?;
        Ok(match results.len() {
            1 => (results[0].clone(), outputs.swap_remove(0)),
            _ => (Type::Tuple(results), Value::Tuple(outputs)),
        })
    }

    /// The type of `expr` (which may be a function).
    fn type_of(&self, expr: &str) -> Result<String, String> {
        let fe = self.check(&self.program("def", None, expr))?;
        let root = fe.program.modules.last().and_then(|m| m.decls.last());
        let Some(Decl::Def(def)) = root else {
            return Err("internal error: the line's definition is missing".to_string());
        };
        fe.checked
            .expr_types
            .get(def.body.id.0 as usize)
            .map(|t| t.to_string())
            .ok_or_else(|| "internal error: the line has no type".to_string())
    }

    /// Handles one line; `Ok(false)` to stop. Results go to `out`, traces and errors to `err`.
    pub fn line(
        &mut self,
        line: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<bool> {
        let outcome: Result<Option<String>, String> = match parse_line(line) {
            Line::Empty => Ok(None),
            Line::Quit => return Ok(false),
            Line::Help => Ok(Some(HELP.to_string())),
            Line::Bad(message) => Err(format!("error: {message}")),
            Line::Type(expr) => self.type_of(expr).map(|t| Some(format!("{expr} : {t}"))),
            Line::Eval(expr) => self.evaluate(expr, err).map(|(_, v)| Some(v.to_string())),
            Line::Let(name, expr) => self.evaluate(expr, err).map(|(t, v)| {
                self.bind(name, anonymous(&t), v);
                None
            }),
            Line::Load(name, file) => ogham_runtime::npy::read(Path::new(file))
                .map(|v| {
                    let shown = format!("{name} : {}", v.describe());
                    self.bind(name, value_type(&v), v);
                    Some(shown)
                })
                .map_err(|e| format!("error: {e}")),
            Line::Def(def) => self.check(&self.program("def", Some(def), "()")).map(|_| {
                self.defs.push(def.to_string());
                None
            }),
            Line::Import(import) => {
                let kept = self.import.len();
                self.import.push_str(&format!("{import}\n"));
                self.check(&self.program("def", None, "()"))
                    .map(|_| None)
                    .inspect_err(|_| self.import.truncate(kept))
            }
        };
        match outcome {
            Ok(Some(text)) => writeln!(out, "{text}")?,
            Ok(None) => {}
            Err(message) => writeln!(err, "{}", message.trim_end())?,
        }
        Ok(true)
    }

    fn bind(&mut self, name: &str, ty: String, value: Value) {
        self.bound.retain(|(n, _, _)| n != name);
        self.bound.push((name.to_string(), ty, value));
    }
}

/// Runs `session` on `input` until `:quit` or its end; a prompt on `out` when `prompt`.
pub fn run(
    session: &mut Session,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
    prompt: bool,
) -> io::Result<()> {
    let mut line = String::new();
    loop {
        if prompt {
            write!(out, "> ")?;
            out.flush()?;
        }
        line.clear();
        if input.read_line(&mut line)? == 0 || !session.line(&line, out, err)? {
            return Ok(());
        }
    }
}

/// [`run`] on standard input and output, with a prompt when the input is a terminal. FILE
/// must check first (its diagnostics are the error otherwise).
pub fn run_stdio(file: Option<&Path>) -> Result<(), String> {
    let mut session = Session::new(file)?;
    let stdin = io::stdin();
    let prompt = stdin.is_terminal();
    let (mut out, mut err) = (io::stdout(), io::stderr());
    run(&mut session, &mut stdin.lock(), &mut out, &mut err, prompt).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(file: Option<&Path>, input: &str) -> (String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut s = Session::new(file).unwrap();
        run(&mut s, &mut input.as_bytes(), &mut out, &mut err, false).unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn lets_defs_types_and_traces() {
        let (out, err) = session(
            None,
            "let x = [1f32, 2f32, 4f32]\n\
             def double (v: f32) = 2 * v\n\
             map double x\n\
             :type double\n\
             trace \"s\" (x[2] + 3f32)\n\
             :quit\n\
             1 + 1\n",
        );
        assert_eq!(
            out,
            "[2.0f32, 4.0f32, 8.0f32]\ndouble : f32 -> f32\n7.0f32\n"
        );
        assert!(err.starts_with("trace s at <repl>:3:1: 7.0f32"), "{err}");
    }

    #[test]
    fn imports_bring_library_modules_into_scope() {
        let (out, err) = session(
            None,
            "nanmean [1f32, f32.nan, 3f32]\n\
             import \"lib/nowhere\"\n\
             import \"lib/segmented\"\n\
             nanmean [1f32, f32.nan, 3f32]\n\
             :type nanmedian\n",
        );
        assert_eq!(out, "2.0f32\n", "{err}");
        // Not found before the import; `nanmedian` is in `lib/stats`, not imported; the failed
        // import is not kept (the lines after it check).
        assert_eq!(err.matches("E0204").count(), 2, "{err}");
        assert!(
            err.contains("`nanmedian` is defined in `lib/stats`"),
            "{err}"
        );
        assert!(err.contains("lib/nowhere"), "{err}");
    }

    #[test]
    fn errors_are_reported_and_the_session_goes_on() {
        let (out, err) = session(None, "let y = nope + 1\n:bogus\ny\n[1, 2][5]\n41 + 1\n");
        assert_eq!(out, "42i32\n");
        assert!(err.contains("E0204"), "{err}");
        assert!(err.contains("unknown command `:bogus`"), "{err}");
        assert!(err.contains("R0702"), "{err}");
    }
}
