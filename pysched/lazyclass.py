"""``dataclass`` as the standard library's, with the generated methods compiled on first use.

The standard decorator writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and, for
frozen classes, ``__setattr__``/``__delattr__`` of every class and compiles each at import: for pysched's
~140 dataclasses that was about a fifth of the instructions of a start, and a run constructs fewer than half
of them and compares or prints only a handful. Here the fields, defaults, slots, ``fields()``,
``replace()``, ``asdict()`` and ``__match_args__`` come from the standard decorator itself (called with the
method generation off); each method is put on the class as a small stand-in which, at its first call,
compiles the same code the standard decorator would have compiled, puts it on the class and runs it.
From then on a call costs what it did. (``__init__`` is made from a template shared by the classes whose
fields have the same kinds in the same order; the templates of the package's dataclasses are stored
compiled in ``pysched/_lazyclass_inits.py``, written by ``tools/gen_lazyclass_inits.py``.) ``__repr__``
(printing only) and the frozen classes' refusal to assign are plain functions, never compiled. For type
checkers this module is ``dataclasses.dataclass``.

On Python 3.11 the standard decorator's part (the fields, parameters, ``__match_args__``, slots) is done by
its own steps here (``_fields``) for a class without dataclass bases and pseudo-fields: the same steps on
the same objects, with one search of each annotation for ClassVar, InitVar or KW_ONLY where it makes
three; every other class goes to it.

What it does not reproduce goes to the standard decorator as it is: ``order``, ``unsafe_hash``,
``weakref_slot``, a frozen class defining ``__setattr__``/``__delattr__``, and a class (or a dataclass base)
with an ``InitVar`` pseudo-field. Why this rather than fewer dataclasses at import (the DRA, storage and
extender modules loaded only for inputs that have them): compiling the methods was about half of the
instructions of importing pysched and building its app (callgrind: 412 M before this module, 165 M after),
while those optional modules are a few per cent of the import's time (``-X importtime``; not measured in
instructions) and their loading belongs to the kinds table of the loader.
"""

from __future__ import annotations

import abc
import builtins
import dataclasses
import sys
import threading
import typing
from types import CodeType, FunctionType, MemberDescriptorType
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass"]

_MISSING = dataclasses.MISSING


class _FactoryMarker:
    """The default of an ``__init__`` parameter whose field has a ``default_factory``."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _FactoryMarker()


def _compile(name: str, params: list[str], body: list[str], env: dict[str, Any]) -> Any:
    lines = "\n".join(f"  {line}" for line in body)
    source = f"def {name}({', '.join(params)}):\n{lines}\n"
    scope: dict[str, Any] = {}
    exec(source, env, scope)
    return scope[name]


#: compiled ``__init__`` code by its source with the field names numbered: classes whose fields have the
#: same kinds in the same order share one compilation (most of the cost of a first ``__init__``)
_INIT_CODE: dict[str, CodeType] = {}


def _init_source(fields: tuple[dataclasses.Field, ...], names: list[str], me: str, frozen: bool, slots: bool,
                 post_init: bool, defaults: bool = False) -> tuple[str, list[str], list[str]]:
    """The source of ``__init__`` with the fields called ``names``, and the names of its positional and
    keyword-only parameters; with ``defaults``, the parameters name their defaults (which are no part of
    the function's code: without them the code is the same)."""
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f, name in zip(fields, names, strict=True):
        value: str | None = name
        dflt = f"_dflt_{name}"
        if f.default_factory is not _MISSING:
            value = f"{dflt}() if {name} is _FACTORY else {name}" if f.init else f"{dflt}()"
        elif f.default is not _MISSING:
            if not f.init:
                value = dflt if slots else None  # else the class attribute holds the default
        elif not f.init:
            value = None
        if f.init:
            param = f"{name}={dflt}" if defaults and f.default is not _MISSING else \
                f"{name}=_FACTORY" if defaults and f.default_factory is not _MISSING else name
            (keyword if f.kw_only else positional).append(param)
        if value is not None:
            body.append(f"__dataclass_object__.__setattr__({me}, {name!r}, {value})" if frozen
                        else f"{me}.{name} = {value}")
    if post_init:
        body.append(f"{me}.__post_init__()")
    params = [me, *positional, *(["*", *keyword] if keyword else [])]
    lines = "\n".join(f"  {line}" for line in body or ["pass"])
    return f"def __init__({', '.join(params)}):\n{lines}\n", positional, keyword


def _compiled(source: str) -> CodeType:
    """The code of the one function ``source`` defines, compiled as the standard decorator would."""
    return next(c for c in compile(source, "<string>", "exec").co_consts if isinstance(c, CodeType))


#: the stored templates (pysched/_lazyclass_inits.py) by their source; read at the first compilation
_STORED: dict[str, CodeType] | None = None


def _stored() -> dict[str, CodeType]:
    global _STORED
    if _STORED is None:
        from pysched import _lazyclass_inits as store

        _STORED = dict(zip(store.SOURCES, store.CODES, strict=True))
    return _STORED


def _template(source: str) -> CodeType:
    """The compiled template of ``source``: the stored one when the store has it (the code compiling it
    here gives, compiled with the package under another name, file and line: those set as compiling here
    sets them), else compiled now. Compiling the ~40 templates a run uses was some 30 M instructions of
    every run."""
    stored = _stored().get(source)
    template = stored.replace(co_name="__init__", co_qualname="__init__", co_filename="<string>",
                              co_firstlineno=1) if stored is not None else _compiled(source)
    _INIT_CODE[source] = template
    return template


def template_source(cls: type) -> str:
    """The source of the ``__init__`` template of a dataclass made by this module (what the store holds)."""
    fields = dataclasses.fields(cls)
    me = "__dataclass_self__" if any(f.name == "self" for f in fields) else "self"
    return _init_source(fields, [f"_f{i}" for i in range(len(fields))], me, cls.__dict__["__dataclass_frozen__"],
                        "__slots__" in cls.__dict__, hasattr(cls, "__post_init__"))[0]


def _make_init(cls: type, frozen: bool, slots: bool) -> Any:
    fields = dataclasses.fields(cls)
    real = [f.name for f in fields]
    me = "__dataclass_self__" if "self" in real else "self"
    env: dict[str, Any] = {"__dataclass_object__": object, "_FACTORY": _FACTORY, "__builtins__": builtins.__dict__}
    defaults: dict[str, Any] = {}  # parameter -> its default
    for f in fields:
        dflt = f"_dflt_{f.name}"
        if f.default_factory is not _MISSING:
            env[dflt] = f.default_factory
            defaults[f.name] = _FACTORY
        elif f.default is not _MISSING:
            env[dflt] = f.default
            defaults[f.name] = f.default
    post_init = hasattr(cls, "__post_init__")
    numbered = [f"_f{i}" for i in range(len(fields))]
    source, positional, keyword = _init_source(fields, numbered, me, frozen, slots, post_init)
    # the numbered names stand for the fields' names in the variable names, the attribute and global names
    # and (frozen: the names given to __setattr__) the constants: the same bytecode as the real source's
    rename = {n: f.name for n, f in zip(numbered, fields, strict=True)}
    rename.update((f"_dflt_{n}", f"_dflt_{f.name}") for n, f in zip(numbered, fields, strict=True))
    template = _INIT_CODE.get(source) or _template(source)
    names = tuple(rename.get(n, n) for n in template.co_names)
    varnames = tuple(rename.get(n, n) for n in template.co_varnames)
    with_default = [rename[n] in defaults for n in positional]
    ordered = with_default == sorted(with_default)  # (else the real source is refused, as it was)
    if ordered and len(set(names)) == len(names) and len(set(varnames)) == len(varnames):
        code = template.replace(co_names=names, co_varnames=varnames,
                                co_consts=tuple(rename.get(c, c) if type(c) is str else c
                                                for c in template.co_consts))
        fn = FunctionType(code, env, "__init__")
        fn.__defaults__ = tuple(defaults[rename[n]] for n in positional if rename[n] in defaults) or None
        fn.__kwdefaults__ = {rename[n]: defaults[rename[n]] for n in keyword if rename[n] in defaults} or None
    else:  # a field's name is one of the other names the code uses, or a default before none: as it reads
        source = _init_source(fields, real, me, frozen, slots, post_init, defaults=True)[0]
        scope: dict[str, Any] = {}
        exec(compile(source, "<string>", "exec"), env, scope)
        fn = scope["__init__"]
    fn.__annotations__ = {**{f.name: f.type for f in fields if f.init}, "return": None}
    return fn


def _tuple(obj: str, names: list[str]) -> str:
    return f"({''.join(f'{obj}.{n},' for n in names)})"


def _make_eq(cls: type) -> Any:
    names = [f.name for f in dataclasses.fields(cls) if f.compare]
    return _compile("__eq__", ["self", "other"], [
        "if other.__class__ is self.__class__:",
        f"    return {_tuple('self', names)} == {_tuple('other', names)}",
        "return NotImplemented"], {})


def _make_hash(cls: type) -> Any:
    names = [f.name for f in dataclasses.fields(cls) if (f.compare if f.hash is None else f.hash)]
    return _compile("__hash__", ["self"], [f"return hash({_tuple('self', names)})"], {})


def _on_first_call(cls: type, name: str, make: Any) -> Any:
    """A stand-in for ``cls.<name>`` that compiles the real method, installs it and calls it."""

    def first(self: Any, *args: Any, **kwargs: Any) -> Any:
        real = make()
        real.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, real)
        return real(self, *args, **kwargs)

    first.__name__, first.__qualname__ = name, f"{cls.__qualname__}.{name}"
    return first


_repr_running: set[tuple[int, int]] = set()


def _make_repr(cls: type) -> Any:
    names = [f.name for f in dataclasses.fields(cls) if f.repr]

    def __repr__(self: Any) -> str:
        key = (id(self), threading.get_ident())
        if key in _repr_running:
            return "..."
        _repr_running.add(key)
        try:
            shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        finally:
            _repr_running.discard(key)
        return f"{self.__class__.__qualname__}({shown})"

    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    return __repr__


def _make_frozen(cls: Any) -> tuple[Any, Any]:
    names = frozenset(f.name for f in dataclasses.fields(cls))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)


def _has_initvar(cls: type) -> bool:
    """Whether the class or a base declares an ``InitVar`` (also written as a string annotation)."""
    for klass in cls.__mro__:
        for annotation in klass.__dict__.get("__annotations__", {}).values():  # noqa: RUF063 - as dataclasses reads them
            if annotation is dataclasses.InitVar or isinstance(annotation, dataclasses.InitVar) or (
                    isinstance(annotation, str) and "InitVar" in annotation):
                return True
    return False


# --------------------------------------------------------------------------- the fields, as the standard decorator

#: what the standard decorator of Python 3.11 does with a class (init, repr, eq, order, unsafe_hash, frozen and
#: weakref_slot off) is done by _fields below for most classes, with its own private pieces; on other versions
#: the standard decorator does it
_OWN_FIELDS = sys.version_info[:2] == (3, 11)
if _OWN_FIELDS:
    _FIELD: Any = dataclasses._FIELD  # type: ignore[attr-defined]
    _IDENTIFIER: Any = dataclasses._MODULE_IDENTIFIER_RE  # type: ignore[attr-defined]
    _Params: Any = dataclasses._DataclassParams  # type: ignore[attr-defined]
    _add_slots: Any = dataclasses._add_slots  # type: ignore[attr-defined]
_GenericAlias: Any = getattr(typing, "_GenericAlias", None)


def _special(obj: Any) -> bool:
    """Whether the standard decorator may take an annotation naming ``obj`` for a ClassVar, an InitVar or
    KW_ONLY (its _is_classvar, _is_initvar, _is_kw_only)."""
    return (obj is typing.ClassVar or (type(obj) is _GenericAlias and obj.__origin__ is typing.ClassVar)
            or obj is dataclasses.InitVar or type(obj) is dataclasses.InitVar or obj is dataclasses.KW_ONLY)


def _pseudo_field(annotation: Any, namespace: dict[str, Any]) -> bool:
    """Whether the standard decorator may read ``annotation`` (of a class of the module whose namespace is
    given) as a ClassVar, an InitVar or KW_ONLY: a string is looked up as its _is_type looks it up (the
    first name, in the module, or in typing/dataclasses when it is prefixed by a name bound to them)."""
    if not isinstance(annotation, str):
        return _special(annotation)
    match = _IDENTIFIER.match(annotation)
    if match is None:
        return False
    prefix, name = match.group(1, 2)
    if not prefix:
        return _special(namespace.get(name))
    module = namespace.get(prefix)
    return (module is typing or module is dataclasses) and _special(module.__dict__.get(name))


def _fields(cls: Any, match_args: bool, kw_only: bool, slots: bool) -> Any:
    """``dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False, match_args=..., kw_only=...,
    slots=...)`` for a class without a dataclass base and without ClassVar, InitVar or KW_ONLY annotations:
    the same steps in the same order on the same objects (its class attributes, Field objects, parameters,
    ``__match_args__``, the class made again with ``__slots__``), without the standard decorator's three
    searches of each field's annotation for those pseudo-fields (one here). ``None`` (nothing changed) for any
    other class, or one the standard decorator would refuse: it processes those."""
    module = sys.modules.get(cls.__module__)
    if module is None or hasattr(cls, "__dataclass_fields__") or not cls.__doc__:
        return None
    namespace = module.__dict__
    own = cls.__dict__
    annotations = own.get("__annotations__", {})
    defaults = []
    for name, annotation in annotations.items():
        if _pseudo_field(annotation, namespace):
            return None
        default = getattr(cls, name, _MISSING)
        value = default.default if isinstance(default, dataclasses.Field) else \
            _MISSING if isinstance(default, MemberDescriptorType) else default
        if value.__class__.__hash__ is None:  # a mutable default: refused with the standard decorator's error
            return None
        defaults.append(default)
    for name, value in own.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            return None  # (refused: a field without an annotation)
    cls.__dataclass_params__ = _Params(False, False, False, False, False, False)
    fields: dict[str, dataclasses.Field] = {}
    for (name, annotation), default in zip(annotations.items(), defaults, strict=True):
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            f = dataclasses.field(default=_MISSING if isinstance(default, MemberDescriptorType) else default)  # type: ignore[arg-type]
        f.name, f.type, f._field_type = name, annotation, _FIELD  # type: ignore[attr-defined]
        if f.kw_only is _MISSING:
            f.kw_only = kw_only
        fields[name] = f
    for name, default in zip(annotations, defaults, strict=True):
        if isinstance(default, dataclasses.Field):  # the class attribute is the default, or is no more
            if default.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, default.default)
    cls.__dataclass_fields__ = fields
    if match_args and "__match_args__" not in own:
        cls.__match_args__ = tuple(f.name for f in fields.values() if f.init and not f.kw_only)  # type: ignore[misc]
    if slots:
        cls = _add_slots(cls, False, False)
    abc.update_abstractmethods(cls)
    return cls


def _lazy_dataclass(cls: type, init: bool, repr: bool, eq: bool, frozen: bool, match_args: bool,
                    kw_only: bool, slots: bool) -> type:
    own = dict(cls.__dict__)
    if (frozen and ("__setattr__" in own or "__delattr__" in own)) or _has_initvar(cls):
        # not reproduced here: the standard decorator (its error message, or its InitVar handling)
        return dataclasses.dataclass(cls, init=init, repr=repr, eq=eq, frozen=frozen, match_args=match_args,
                                     kw_only=kw_only, slots=slots)
    bases_frozen = {b.__dict__["__dataclass_frozen__"] for b in cls.__mro__[1:]
                    if "__dataclass_frozen__" in b.__dict__}
    if bases_frozen and bases_frozen != {frozen}:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one" if not frozen
                        else "cannot inherit frozen dataclass from a non-frozen one")
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    if not own.get("__doc__"):
        cls.__doc__ = cls.__name__  # the standard decorator would ask inspect for the signature
    new: Any = (_OWN_FIELDS and _fields(cls, match_args, kw_only, slots)) or dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, frozen=False, match_args=match_args, kw_only=kw_only, slots=slots)
    new.__dataclass_frozen__ = frozen
    if init and "__init__" not in own:
        new.__init__ = _on_first_call(new, "__init__", lambda: _make_init(new, frozen, slots))
    if repr and "__repr__" not in own:
        new.__repr__ = _make_repr(new)
    if eq and "__eq__" not in own:
        new.__eq__ = _on_first_call(new, "__eq__", lambda: _make_eq(new))
    if frozen:
        new.__setattr__, new.__delattr__ = _make_frozen(new)
        if slots:
            if "__getstate__" not in own:
                new.__getstate__ = _getstate
            if "__setstate__" not in own:
                new.__setstate__ = _setstate
    if eq and not explicit_hash:
        # as the standard decorator: equal values hash alike when frozen, else instances are unhashable
        new.__hash__ = _on_first_call(new, "__hash__", lambda: _make_hash(new)) if frozen else None
    return new


if TYPE_CHECKING:
    from dataclasses import dataclass
else:

    def dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, unsafe_hash=False, frozen=False,
                  match_args=True, kw_only=False, slots=False, weakref_slot=False):
        """``dataclasses.dataclass`` with its methods compiled on first use (order, unsafe_hash and
        weakref_slot, which pysched does not use, go to the standard decorator as they are)."""

        def wrap(cls):
            if order or unsafe_hash or weakref_slot:
                return dataclasses.dataclass(cls, init=init, repr=repr, eq=eq, order=order,
                                             unsafe_hash=unsafe_hash, frozen=frozen, match_args=match_args,
                                             kw_only=kw_only, slots=slots, weakref_slot=weakref_slot)
            return _lazy_dataclass(cls, init, repr, eq, frozen, match_args, kw_only, slots)

        return wrap if cls is None else wrap(cls)
