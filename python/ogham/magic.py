"""The `%%ogham` cell magic: Ogham code in a Jupyter notebook (or an IPython session).

    %load_ext ogham

    %%ogham
    entry mean_valid [m][n] (stack: [m][n]f32) : [m]f32 = ...

compiles the cell with `ogham.load` and binds each entry point as a Python callable of the same
name in the notebook's namespace (`mean_valid(stack)`); `%%ogham --module NAME` also binds the
module. Options: `--backend` (as `ogham.load`), `--module NAME`, `--quiet`.

A cell that does not compile shows the compiler's diagnostic, with the cell's own line numbers
(line 1 is the `%%ogham` line, as Jupyter numbers it), instead of a Python traceback. The
exception is still raised (`ogham.OghamError`), so "run all" stops at that cell. Imports in a
cell (`import "lib/stats"`) resolve as for `ogham.load` of a text: the standard library, then
the notebook's working directory.
"""

import argparse
import shlex

from . import _module
from ._ogham import OghamError

__all__ = ["CellError", "OptionError", "ogham_cell", "register"]


class CellError(OghamError):
    """A cell that did not compile: shown as the compiler's diagnostic, without a traceback."""

    def _render_traceback_(self):
        # IPython calls this instead of printing the traceback (the hook of its custom
        # exceptions); the diagnostic already names the cell, the line and the column.
        return str(self).splitlines()


class OptionError(ValueError):
    """Bad options on the `%%ogham` line: shown as one line, without a traceback."""

    def _render_traceback_(self):
        return [f"OptionError: {self}"]


class _Parser(argparse.ArgumentParser):
    """argparse's parser, raising instead of exiting (which would stop the kernel)."""

    def error(self, message):
        raise OptionError(f"%%ogham: {message} (options: --backend B, --module NAME, --quiet)")


_PARSER = _Parser(prog="%%ogham", add_help=False)
_PARSER.add_argument("--backend", default="cpu")
_PARSER.add_argument("--module", default=None)
_PARSER.add_argument("--quiet", action="store_true")


def ogham_cell(line, cell, namespace, cell_name="cell"):
    """The magic's work, without IPython: compiles `cell` (options in `line`), binds its entry
    points (and the module with `--module`) in `namespace`, and returns the module.

    The source is named `cell_name` in diagnostics; one empty line is put before the cell's text
    so that line numbers count the `%%ogham` line, as Jupyter shows them.
    """
    options = _PARSER.parse_args(shlex.split(line))
    if options.module is not None and not options.module.isidentifier():
        raise OptionError(f"%%ogham --module {options.module!r}: not a Python identifier")
    try:
        module = _module.load("\n" + cell, backend=options.backend, name=cell_name)
    except OghamError as e:
        error = CellError(str(e))
        error.code = getattr(e, "code", None)
        raise error from None
    for name, entry in module.entries.items():
        namespace[name] = entry
    if options.module is not None:
        namespace[options.module] = module
    if not options.quiet:
        bound = ", ".join(module.entries) or "(no entry points)"
        print(f"ogham: {bound}" + (f"; module {options.module}" if options.module else ""))
    return module


def register(ipython):
    """Registers `%%ogham` with an IPython shell (what `%load_ext ogham` calls)."""

    def ogham(line, cell):
        count = getattr(ipython, "execution_count", None)
        name = f"cell In[{count}]" if count is not None else "cell"
        ogham_cell(line, cell, ipython.user_ns, name)

    ogham.__doc__ = __doc__
    ipython.register_magic_function(ogham, magic_kind="cell", magic_name="ogham")
