"""Loading programs: `ogham.load` and the module / entry-point objects it returns.

A `Module` wraps one compiled program of the extension (`ogham._ogham.Program`); each entry point
is an `Entry`, a callable with a real `inspect.Signature` (parameter names, annotated with their
Ogham types) and the entry's `-- |` doc comment as its docstring.

Results are named: several results come back as `Results` (a tuple whose items are also
attributes: `result0`, `result1`, ...), and so does a tuple or record result or an array of
them, split into its parts (`result0`, ... for a tuple; the fields, in the order the entry's
return type declares them, for a record). `Entry.outputs` lists the leaves of that structure
with their names, which `cube.ogham.apply` turns into the variables of a Dataset.

Modules are kept per process, keyed by (where the program comes from, backend, tuning): loading
the same program again returns the same object without touching the compiler. Modules and entries
pickle as that key, so a dask worker process that receives one re-opens it (compiled once per
process; the compiler's own cache makes that a cache hit) instead of receiving compiled code.
"""

import difflib
import functools
import hashlib
import inspect
import keyword
import os
import threading

from . import _ogham

_lock = threading.Lock()
_modules = {}


def _source_kind(path_or_source, name=None):
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
        if name is not None:
            raise TypeError("ogham.load: `name` names a program given as text; a file keeps its "
                            "own name")
        return ("library" if path.endswith(".ogl") else "file", path)
    if name is not None:
        if not isinstance(name, str) or not name or "\n" in name:
            raise TypeError(f"ogham.load: `name` must be a one-line string; given {name!r}")
        return ("text", name, text)
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


def load(path_or_source, backend="cpu", tuning=None, *, name=None):
    """Compiles an Ogham program (a `.og` file or its text) or opens a built `.ogl` library.

    Returns a `Module` whose entry points are callables: `ogham.load("prog.og").main(xs)`.
    `backend` is "cpu" (the kernels compiled for all cores; the default), "interp" (the
    reference interpreter), "cuda" (an NVIDIA GPU), or one of the IR evaluators ("core", "kir");
    `tuning` is a tuning file written by `ogham autotune`; `name` is the file name diagnostics
    show for a program given as text (default `<python-HASH>.og`). Loading the same program
    again in the same process returns the same module.
    """
    return _open(_source_kind(path_or_source, name), backend, tuning)


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


def unexpected_keyword(function, name, names):
    """The `TypeError` for keyword argument `name` of `function`, whose parameters are `names`:
    Python's own message, with the closest parameter name when one is close."""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    close += [n for n in names if n.startswith(name) or name.startswith(n.rstrip("_"))]
    hint = (f"did you mean {close[0]!r}?" if close else
            f"its parameters: {', '.join(names)}" if names else "it has no parameters")
    return TypeError(f"{function}() got an unexpected keyword argument {name!r} ({hint})")


def keywords_checked(function):
    """`function` (which takes no `**kwargs`), raising `unexpected_keyword` for a keyword it
    does not have instead of Python's message without a suggestion."""
    names = list(inspect.signature(function).parameters)

    @functools.wraps(function)
    def checked(*args, **kwargs):
        for name in kwargs:
            if name not in names:
                shown = [n for n in names if n != "self"]
                raise unexpected_keyword(function.__name__, name, shown)
        return function(*args, **kwargs)
    return checked


class Results(tuple):
    """Several results, or the parts of a tuple or record result: a tuple whose items are also
    attributes named by `_fields` (`r.magnitude`), like a named tuple; `_asdict()` maps the
    names to the items."""

    def __new__(cls, items, fields):
        results = super().__new__(cls, items)
        results._fields = tuple(fields)
        return results

    def __getnewargs__(self):
        return (tuple(self), self._fields)

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields", ())
        if name in fields:
            return self[fields.index(name)]
        raise AttributeError(f"the results have no {name!r} (they are {', '.join(fields)})")

    def _asdict(self):
        return dict(zip(self._fields, self))

    def __repr__(self):
        return "Results(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self)) + ")"


class Param:
    """One parameter or result of an entry point: name, Ogham type text, dims (size names,
    numbers or None, outermost first; None for tuples and records), NumPy dtype name, and for
    a tuple or record (or an array of them) its `parts` (`Param`s, named `result0`, ... or by
    field in declared order; None otherwise)."""

    __slots__ = ("name", "pyname", "type", "dims", "dtype", "parts")

    def __init__(self, name, typ, index=0):
        self.name = name
        self.type, self.dims, self.dtype, parts = typ
        self.parts = (None if parts is None else
                      [Param(n, t, i) for i, (n, t) in enumerate(parts)])
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
        self.results = [Param(f"result{i}", t, i) for i, t in enumerate(results)]
        # What the call returns: its one result, or `Results` of several (see `named`).
        self._shape = self.results[0] if len(self.results) == 1 else _Group(self.results)
        self.outputs = list(_leaves(self._shape, ""))
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
        return _named(self._call(self.__name__, self._positional(args, kwargs)), self._shape)

    def flatten(self, value):
        """The leaves of a value this entry returned, in the order of `outputs`."""
        return list(_leaf_values(value, self._shape))

    def _positional(self, args, kwargs):
        if not kwargs:
            return args
        # A misspelt keyword is named as such (`bind` would first report the parameter it
        # leaves missing).
        names = [p.pyname for p in self.params]
        for name in kwargs:
            if name not in names:
                raise unexpected_keyword(self.__name__, name, names)
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
        result, traces = module._program.trace(self.__name__, args, pixel)
        return _named(result, self._shape), traces

    def __reduce__(self):
        return (getattr, (self.module, self.__name__))

    def __repr__(self):
        return f"<ogham entry {self.__name__}{self.__signature__}>"


class _Group:
    """Several results, shaped like a tuple result's parts."""

    def __init__(self, parts):
        self.parts = parts


def _named(value, shape):
    """`value` (what the extension returned for `shape`) with its tuples as `Results`."""
    if shape.parts is None:
        return value
    return Results((_named(v, p) for v, p in zip(value, shape.parts)),
                   [p.name for p in shape.parts])


def _leaves(shape, prefix):
    """`(name, Param)` of the leaves under `shape`: a part's name, prefixed by the names of the
    parts it is in (`result0_mean`) except the outermost."""
    if shape.parts is None:
        yield prefix + shape.name, shape
        return
    for part in shape.parts:
        inner = prefix + part.name + "_" if part.parts is not None else prefix
        if part.parts is None:
            yield prefix + part.name, part
        else:
            yield from _leaves(_Group(part.parts), inner)


def _leaf_values(value, shape):
    if shape.parts is None:
        yield value
        return
    for item, part in zip(value, shape.parts):
        yield from _leaf_values(item, part)


def load_count():
    """How many programs this process has compiled or opened (each one once: see `load`)."""
    return _ogham.load_count()
