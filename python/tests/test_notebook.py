"""The notebook side of the package: the `%%ogham` cell magic (ogham/magic.py), the Pygments
lexer (ogham/lexer.py) and the example notebook docs/notebook.ipynb, executed on a real kernel."""

import glob
import os

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name, Number, String

import ogham
from ogham.lexer import OghamLexer
from ogham.magic import CellError, OptionError, ogham_cell

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CELL = '''-- | Twice the elements.
entry double [n] (xs: [n]f32) : [n]f32 = map (\\x -> 2 * x) xs

entry total [n] (xs: [n]i64) : i64 = reduce (+) 0 xs
'''


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "ogham")
    return ip


def test_magic_binds_the_entry_points(shell, capsys):
    result = shell.run_cell("%%ogham --module cellmod\n" + CELL)
    assert result.success, result.error_in_exec
    assert "ogham: double, total; module cellmod" in capsys.readouterr().out
    ns = shell.user_ns
    np.testing.assert_array_equal(ns["double"](np.array([1, 2.5], dtype=np.float32)), [2, 5])
    assert ns["total"](np.arange(5)) == 10
    assert ns["cellmod"].entries["double"] is ns["double"]
    assert ns["double"].__doc__.endswith("Twice the elements.")


def test_magic_shows_the_diagnostic_with_the_cells_line_numbers(shell, capsys):
    # Line 1 is the `%%ogham` line, the error is on line 3 of the cell as Jupyter shows it.
    result = shell.run_cell("%%ogham\nentry f (x: i64) : i64 =\n  x + y\n")
    assert not result.success
    assert isinstance(result.error_in_exec, CellError)
    assert result.error_in_exec.code == "E0204"
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "error[E0204]: cannot find `y` in this scope" in text
    assert ":3:7" in text and "3 │   x + y" in text
    assert "Traceback" not in text


def test_magic_rejects_bad_options(shell, capsys):
    result = shell.run_cell("%%ogham --bogus\nentry f (x: i64) : i64 = x\n")
    assert isinstance(result.error_in_exec, OptionError)
    assert "unrecognized arguments: --bogus" in str(result.error_in_exec)
    result = shell.run_cell("%%ogham --module 2x\nentry f (x: i64) : i64 = x\n")
    assert isinstance(result.error_in_exec, OptionError)
    capsys.readouterr()


def test_cell_without_ipython_and_other_backends():
    ns = {}
    module = ogham_cell("--backend interp --quiet", CELL, ns, cell_name="cell 7")
    assert ns["total"](np.arange(4)) == 6
    assert module is ogham.load("\n" + CELL, backend="interp", name="cell 7")
    with pytest.raises(CellError) as e:
        ogham_cell("--quiet", "entry g (x: i64) : i64 = x +\n", {}, cell_name="cell 8")
    assert "cell 8:2:" in str(e.value)


def test_load_name_is_for_texts_only(tmp_path):
    path = tmp_path / "p.og"
    path.write_text(CELL)
    with pytest.raises(TypeError, match="names a program given as text"):
        ogham.load(str(path), name="x")
    with pytest.raises(TypeError, match="one-line string"):
        ogham.load(CELL, name="two\nlines")


def test_lexer_is_registered_and_classifies_tokens():
    assert isinstance(get_lexer_by_name("ogham"), OghamLexer)
    assert isinstance(get_lexer_for_filename("bfast.og"), OghamLexer)
    src = ('-- | doc\n#[unsafe]\ndef f [n] (xs: [n]f32) : f32 = f32.sqrt (xs[0] + 1.5e3f32) + '
           '0x1Fi64 + "s"\n')
    toks = [(t, v) for t, v in OghamLexer().get_tokens(src) if v.strip()]
    assert (String.Doc, "-- | doc") in toks
    assert (Name.Decorator, "#[") in toks
    assert (Name.Function, "f") in toks
    assert (Keyword.Type, "f32") in toks
    assert (Name.Function, "sqrt") in toks
    assert (Number.Float, "1.5e3f32") in toks
    assert (Number.Hex, "0x1Fi64") in toks
    assert (Error, "$") in list(OghamLexer().get_tokens("let x = $"))


def test_lexer_accepts_every_program_of_the_repository():
    files = (glob.glob(os.path.join(ROOT, "lib", "*.og"))
             + glob.glob(os.path.join(ROOT, "programs", "*.og"))
             + glob.glob(os.path.join(ROOT, "tests", "cases", "**", "*.og"), recursive=True))
    assert len(files) > 100
    expected_errors = {os.path.join(ROOT, "tests", "cases", "errors", "syntax_unexpected_char.og")}
    for path in files:
        with open(path, encoding="utf-8") as f:
            errors = [v for t, v in OghamLexer().get_tokens(f.read()) if t is Error]
        assert bool(errors) == (path in expected_errors), (path, errors[:5])


def test_example_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(os.path.join(ROOT, "docs", "notebook.ipynb"), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": ROOT}})
    client.execute()
    printed = [o.get("text", "") for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []) if o.get("output_type") == "stream"]
    assert any("of the changed half" in t for t in printed), printed
