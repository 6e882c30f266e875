"""Plain record classes for the recall path, without importing :mod:`dataclasses`.

``import dataclasses`` imports :mod:`inspect` and with it ``ast``, ``dis`` and ``tokenize``: about
20 ms of a one-shot ``dreamdb recall`` process on this project's 2-core machine (≈ 140 ms in all;
``python -c "import dataclasses"`` beside ``python -c pass``, 31 runs alternating, median 81 against
58 ms with ``re``, ``json``, ``pathlib``, ``datetime`` already imported). The classes every recall
builds (:class:`dreamdb.api.Hit`, the query plan, filters, ranked rows, the sync report, source
files) use :func:`record` instead; everything else keeps :mod:`dataclasses`.

:func:`record` is the subset of ``@dataclass`` those classes need: fields are the class's own
annotations in order, a class attribute is the field's default (:func:`factory` for a mutable
one), and the generated methods are ``__init__`` (positional or keyword), ``__repr__`` and
``__eq__`` (fields whose name starts with ``_`` are left out of both, but for one read through a property of its
name without the underscore, which ``__eq__`` compares by that property's value), plus ``__hash__`` (of the values
``__eq__`` compares) and immutability with ``frozen=True``. :func:`fields` gives the field names (strings, where
:func:`dataclasses.fields` gives ``Field`` objects: QA round 57; a private field by the property that reads it)
and :func:`replace` mirrors its namesake.
"""

from __future__ import annotations

class _NotGiven:
    """The default of a field with a factory, or of a private field's public name: ``<not given>`` in a
    signature (``help(Hit)`` showed ``snippet=<object object at 0x7f…>``: QA round 93-C F9)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


_NO_DEFAULT = _NotGiven()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make) -> None:
        self.make = make


def factory(make) -> _Factory:
    """A field default made fresh for every instance (``factory(list)``, as ``field(default_factory=list)``)."""
    return _Factory(make)


class FrozenRecordError(AttributeError):
    """Raised on assignment to a field of a ``frozen`` record."""


TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing; type checkers read the name alike)
if TYPE_CHECKING:  # a type checker sees the dataclass these records mirror: their fields, __init__ and types
    from dataclasses import dataclass as record
    from typing import Any, TypeVar

    _R = TypeVar("_R")
else:
    _R = Any = object  # (the names the annotations below use, for typing.get_type_hints at run time: QA round 96)

    def record(cls=None, *, frozen: bool = False):
        """Class decorator: generate ``__init__``, ``__repr__``, ``__eq__`` (and ``__hash__`` when frozen)
        from the class's annotations; see the module docstring.

        Raises:
            TypeError: a field without a default follows one with a default.
        """
        def wrap(c):
            return _build(c, frozen)

        return wrap if cls is None else wrap(cls)


def _build(cls, frozen: bool):
    names = list(cls.__dict__.get("__annotations__", {}))
    env: dict = {"_NO_DEFAULT": _NO_DEFAULT}
    params, body = [], []
    seen_default = False
    for name in names:
        default = cls.__dict__.get(name, _NO_DEFAULT)
        if isinstance(default, _Factory):
            env[f"_make_{name}"] = default.make
            params.append(f"{name}=_NO_DEFAULT")
            value = f"_make_{name}() if {name} is _NO_DEFAULT else {name}"
            delattr(cls, name)
        elif default is not _NO_DEFAULT:
            env[f"_default_{name}"] = default
            params.append(f"{name}=_default_{name}")
            value = name
        else:
            if seen_default:
                raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with a default")
            params.append(name)
            value = name
        seen_default = seen_default or default is not _NO_DEFAULT
        body.append(f"    _set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    # a private field read through a property (Hit._snippet, read as snippet) also takes that name as a keyword, so
    # that a record rebuilt from fields() works (QA round 64 L6); given both names, the call is refused
    # (through the property's setter where it has one, so that the keyword means what ``record.public = …`` does:
    # Hit(snippet=None) reads None back, as hit.snippet = None does)
    aliases = [(n, p) for n in names if (p := _public_name(cls, n)) and p != n]
    if aliases:
        params.append("*")
        for name, public in aliases:
            params.append(f"{public}=_NO_DEFAULT")
            setter = getattr(cls, public).fset is not None and not frozen
            body.append(f"    if {public} is not _NO_DEFAULT:\n"
                        f"        if {name} is not _default_{name}:\n"
                        f"            raise TypeError({f'{cls.__name__}() got both {name} and {public}'!r})\n"
                        + (f"        self.{public} = {public}" if setter else
                           f"        _set(self, {name!r}, {public})" if frozen else f"        self.{name} = {public}"))
            env.setdefault(f"_default_{name}", cls.__dict__.get(name, _NO_DEFAULT))
    env["_set"] = object.__setattr__
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, env)  # noqa: S102 - generated from the class's own field names, as dataclasses does
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    shown = tuple(n for n in names if not n.startswith("_"))
    # == and hash compare what fields() gives: a private field read through a property by that property's value
    # (QA round 152-A F9: a hit whose snippet was set still equalled one with its own snippet)
    compared = tuple(p for p in (_public_name(cls, n) for n in names) if p)
    cls.__record_fields__ = tuple(names)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)

    cls.__repr__ = __repr__
    cls.__eq__ = __eq__
    if frozen:
        def __setattr__(self, name, value=None):
            raise FrozenRecordError(f"cannot assign to or delete field {name!r} of a frozen {type(self).__name__}")

        def __hash__(self) -> int:
            return hash(tuple(getattr(self, n) for n in compared))

        cls.__setattr__ = __setattr__
        cls.__delattr__ = __setattr__
        cls.__hash__ = __hash__
    else:
        cls.__hash__ = None  # mutable and compared by value, as a non-frozen dataclass
    return cls


def _public_name(cls, name: str) -> str:
    """The name a field is read by: its own, or for a private field (``_snippet``) the property of the class that
    reads it (``snippet``); ``""`` for a private field with none (an implementation detail)."""
    if not name.startswith("_"):
        return name
    public = name[1:]
    return public if isinstance(getattr(cls, public, None), property) else ""


def fields(obj: object) -> tuple[str, ...]:
    """The field names of a record class or instance, in order, as they are read (strings: ``[name for name in
    fields(hit)]``, where :func:`dataclasses.fields` gives ``Field`` objects with a ``.name``): a private field
    read through a property of the same name without its underscore is given by that name (``Hit._snippet``, a
    snippet made on first read, is ``snippet``), and a private field without one is left out (QA round 62 L5)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return tuple(p for p in (_public_name(cls, n) for n in cls.__record_fields__) if p)


def replace(obj: _R, **changes: Any) -> _R:
    """A copy of record ``obj`` with ``changes`` applied (every field passed to ``__init__`` again), each by a name
    :func:`fields` gives (``replace(hit, snippet="…")`` sets the field ``_snippet``, as ``hit.snippet = "…"`` does:
    through the property's setter, where it has one) or the field's own.

    Raises:
        TypeError: a name in ``changes`` is not a field.
    """
    cls: Any = type(obj)
    names = cls.__record_fields__
    own = {_public_name(cls, n): n for n in names if n.startswith("_")}
    renamed = {own.get(k, k) if k not in names else k: v for k, v in changes.items()}
    if len(renamed) < len(changes):
        raise TypeError(f"{cls.__name__}: a field given twice, by its name and its property's ({', '.join(changes)})")
    unknown = set(renamed).difference(names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    by_property = {own[k]: k for k in changes if k not in names and k in own}
    given = {n: renamed[n] if n in renamed else getattr(obj, n) for n in names if n not in by_property}
    return cls(**given, **{public: changes[public] for public in by_property.values()})
