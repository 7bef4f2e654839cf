"""A Pygments lexer for Ogham, so that notebooks, Sphinx/nbconvert pages and any Pygments-based
highlighter colour Ogham code.

It is registered under the alias `ogham` (file names `*.og`) through the package's
`pygments.lexers` entry point: once the package is installed, ```` ```ogham ```` blocks in
Markdown rendered with Pygments and `pygmentize -l ogham file.og` work. The tokens follow the
compiler's lexer (`compiler/src/syntax/lexer.rs`): keywords, the numeric literal forms with
their type suffixes, `-- |` doc comments, attributes `#[...]`, type parameters `'t`, sizes in
brackets and qualified names such as `f32.sqrt`. Anything the compiler's lexer accepts is
highlighted without error tokens (python/tests/test_notebook.py checks every `.og` file of the
repository).
"""

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (Comment, Error, Keyword, Name, Number, Operator, Punctuation, String,
                            Whitespace)

__all__ = ["OghamLexer"]

_TYPES = ("bool", "i8", "i16", "i32", "i64", "u8", "f32", "f64")
_SUFFIX = r"(?:i8|i16|i32|i64|u8|f32|f64)?"
_FLOAT_SUFFIX = r"(?:f32|f64)?"
_IDENT = r"[a-zA-Z_][a-zA-Z0-9_']*"


class OghamLexer(RegexLexer):
    """Ogham, the data-parallel array language for satellite time series."""

    name = "Ogham"
    aliases = ["ogham"]
    filenames = ["*.og"]
    mimetypes = ["text/x-ogham"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"--\s?\|[^\n]*", String.Doc),
            (r"--[^\n]*", Comment.Single),
            (r"#\[", Name.Decorator, "attribute"),
            (r'"', String.Double, "string"),
            (r"(def|entry)(\s+)(" + _IDENT + ")",
             bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (words(("def", "entry", "type"), suffix=r"\b"), Keyword.Declaration),
            (r"(import)(\s+)", bygroups(Keyword.Namespace, Whitespace)),
            (words(("let", "in", "if", "then", "else", "loop", "for", "while", "do", "with",
                    "assert"), suffix=r"\b"), Keyword),
            (words(("true", "false"), suffix=r"\b"), Keyword.Constant),
            # Qualified names: `f32.sqrt`, `i64.max`, `t.nan` is a field access of a type
            # parameter's module, highlighted the same way.
            (r"(%s)(\.)(%s)" % ("|".join(_TYPES), _IDENT),
             bygroups(Keyword.Type, Punctuation, Name.Function)),
            (words(_TYPES, suffix=r"\b"), Keyword.Type),
            (r"'" + _IDENT, Name.Variable.Class),
            (r"0[xX][0-9a-fA-F][0-9a-fA-F_]*" + _SUFFIX, Number.Hex),
            (r"0[bB][01][01_]*" + _SUFFIX, Number.Bin),
            (r"[0-9][0-9_]*\.[0-9][0-9_]*(?:[eE][+-]?[0-9][0-9_]*)?" + _FLOAT_SUFFIX,
             Number.Float),
            (r"[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*" + _FLOAT_SUFFIX, Number.Float),
            (r"[0-9][0-9_]*" + _SUFFIX, Number.Integer),
            (r"(nan|inf)\b", Number.Float),
            (_IDENT, Name),
            (r"\.(?:" + _IDENT + r"|[0-9]+)", Name.Attribute),
            (r"[-+*/%=!<>&|^.:\\]+", Operator),
            (r"[()\[\]{},_]", Punctuation),
            (r".", Error),
        ],
        "attribute": [
            (r"\]", Name.Decorator, "#pop"),
            (r"[^\]]+", Name.Decorator),
        ],
        "string": [
            (r'\\.', String.Escape),
            (r'"', String.Double, "#pop"),
            (r'[^"\\\n]+', String.Double),
            (r"\n", String.Double, "#pop"),
        ],
    }
