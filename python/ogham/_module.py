"""Loading programs: `ogham.load` and the module / entry-point objects it returns.

A `Module` wraps one compiled program of the extension (`ogham._ogham.Program`); each entry point
is an `Entry`, a callable with a real `inspect.Signature` (parameter names, annotated with their
Ogham types) and the entry's `-- |` doc comment as its docstring.

Modules are kept per process, keyed by (where the program comes from, backend, tuning): loading
the same program again returns the same object without touching the compiler. Modules and entries
pickle as that key, so a dask worker process that receives one re-opens it (compiled once per
process; the compiler's own cache makes that a cache hit) instead of receiving compiled code.
"""

import hashlib
import inspect
import keyword
import os
import threading

from . import _ogham

_lock = threading.Lock()
_modules = {}


def _source_kind(path_or_source):
    """("file", absolute path), ("library", absolute path) or ("text", name, text)."""
    if isinstance(path_or_source, os.PathLike):
        path_or_source = os.fspath(path_or_source)
    if not isinstance(path_or_source, str):
        raise TypeError(
            "ogham.load(path_or_source): expects a path to a .og program or a .ogl library, or a "
            f"program's text; given a `{type(path_or_source).__name__}`")
    text = path_or_source
    if "\n" not in text and (text.endswith(".og") or text.endswith(".ogl") or os.path.exists(text)):
        path = os.path.abspath(text)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"ogham.load: no such program file: {text}")
        return ("library" if path.endswith(".ogl") else "file", path)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return ("text", f"<python-{digest}>.og", text)


def _compile(origin, backend, tuning):
    tuning = os.path.abspath(os.fspath(tuning)) if tuning is not None else None
    if origin[0] == "file":
        return _ogham.compile_file(origin[1], backend, tuning)
    if origin[0] == "bundled":
        return _ogham.compile_bundled(origin[1], backend, tuning)
    if origin[0] == "library":
        if backend != "cpu" or tuning is not None:
            raise ValueError("ogham.load: a .ogl library runs on the cpu backend with its own "
                             "thresholds; leave `backend` and `tuning` at their defaults")
        return _ogham.open_library(origin[1])
    return _ogham.compile_text(origin[1], origin[2], backend, tuning)


def _open(origin, backend, tuning):
    """The module of `origin`, compiled once per process."""
    key = (origin, backend, None if tuning is None else os.path.abspath(os.fspath(tuning)))
    with _lock:
        module = _modules.get(key)
        if module is None:
            module = Module(_compile(origin, backend, tuning), key)
            _modules[key] = module
        return module


def load(path_or_source, backend="cpu", tuning=None):
    """Compiles an Ogham program (a `.og` file or its text) or opens a built `.ogl` library.

    Returns a `Module` whose entry points are callables: `ogham.load("prog.og").main(xs)`.
    `backend` is "cpu" (the kernels compiled for all cores; the default), "interp" (the
    reference interpreter), "cuda" (an NVIDIA GPU), or one of the IR evaluators ("core", "kir");
    `tuning` is a tuning file written by `ogham autotune`. Loading the same program again in the
    same process returns the same module.
    """
    return _open(_source_kind(path_or_source), backend, tuning)


class Module:
    """A compiled Ogham program; its entry points are attributes (see `entries`)."""

    def __init__(self, program, key):
        self._program = program
        self._key = key
        self.entries = {}
        for name, doc, params, results in program.entries():
            entry = Entry(self, name, doc, params, results)
            self.entries[name] = entry
            if name.isidentifier() and not hasattr(Module, name):
                setattr(self, name, entry)

    @property
    def backend(self):
        return self._program.backend

    @property
    def origin(self):
        """Where the program came from: ("file" | "library", path), ("text", name, text) or
        ("bundled", name)."""
        return self._key[0]

    def __getitem__(self, name):
        return self.entries[name]

    def __reduce__(self):
        return (_open, self._key)

    def __repr__(self):
        what = self._key[0][1]
        return f"<ogham module {what} ({self.backend}): {', '.join(self.entries)}>"


class Param:
    """One parameter of an entry point: name, Ogham type text, dims (size names, numbers or
    None, outermost first; None for tuples and records) and NumPy dtype name."""

    __slots__ = ("name", "pyname", "type", "dims", "dtype")

    def __init__(self, name, typ, index=0):
        self.name = name
        self.type, self.dims, self.dtype = typ
        # Its name in Python: keywords get a trailing underscore (`lambda_`); patterns that are
        # not names (`(a, b)`) are positional `arg<i>`.
        if keyword.iskeyword(name):
            self.pyname = name + "_"
        elif name.isidentifier():
            self.pyname = name
        else:
            self.pyname = f"arg{index}"

    def __repr__(self):
        return f"{self.name}: {self.type}"


class Entry:
    """An entry point of a compiled program, called like a Python function."""

    def __init__(self, module, name, doc, params, results):
        self.module = module
        self.__name__ = name
        self.__qualname__ = name
        self.params = [Param(n, t, i) for i, (n, t) in enumerate(params)]
        self.results = [Param(f"result{i}", t) for i, t in enumerate(results)]
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(p.pyname, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               annotation=p.type)
             for p in self.params],
            return_annotation=(self.results[0].type if len(self.results) == 1 else
                               "(" + ", ".join(r.type for r in self.results) + ")"))
        header = f"{name}{self.__signature__}"
        self.__doc__ = header + ("\n\n" + doc if doc else "")
        self._call = module._program.call

    def __call__(self, *args, **kwargs):
        return self._call(self.__name__, self._positional(args, kwargs))

    def _positional(self, args, kwargs):
        if not kwargs:
            return args
        # A misspelt keyword is named as such (`bind` would first report the parameter it
        # leaves missing).
        names = [p.pyname for p in self.params]
        for name in kwargs:
            if name not in names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument "
                                f"{name!r} (its parameters: {', '.join(names)})")
        bound = self.__signature__.bind(*args, **kwargs)
        return tuple(bound.arguments.values())

    def trace(self, *args, pixel=None, **kwargs):
        """Runs the entry point on the reference interpreter (or on this module's backend if it
        traces: "interp", "core", "kir") and returns `(result, traces)`: the result as a call
        returns it, and the values of its `trace "label" e` expressions in evaluation order, as
        `(label, "file:line:col", value)` tuples.

        `pixel=i` (or `pixel=(row, col)`) runs one pixel: the arguments whose leading
        dimension is the pixel axis (the leading dimension of the entry's first result; with
        two coordinates its first two) are cut to that pixel, kept as a dimension of size 1,
        and the others passed whole, so the result has leading dimensions of size 1.
        """
        module = self.module
        if module.backend not in ("interp", "core", "kir"):
            if module.origin[0] == "library":
                raise ValueError("trace: a .ogl library has no source to run on the "
                                 "interpreter; load the .og program")
            module = _open(module.origin, "interp", None)
        if pixel is not None:
            pixel = [int(pixel)] if isinstance(pixel, int) else [int(i) for i in pixel]
        args = self._positional(args, kwargs)
        return module._program.trace(self.__name__, args, pixel)

    def __reduce__(self):
        return (getattr, (self.module, self.__name__))

    def __repr__(self):
        return f"<ogham entry {self.__name__}{self.__signature__}>"


def load_count():
    """How many programs this process has compiled or opened (each one once: see `load`)."""
    return _ogham.load_count()
