"""``pysched.lazyclass.dataclass`` behaves as ``dataclasses.dataclass``: the same ``__init__`` signature,
defaults, factories, ``__post_init__``, repr, equality, hashing, frozen refusals, copies and pickles; only
the moment its methods are compiled differs (first use instead of import)."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from dataclasses import field
from typing import Any

import pytest

import pysched
from pysched.lazyclass import dataclass as lazy


def _classes(dc: Any) -> dict[str, type]:
    @dc(slots=True, frozen=True)
    class Frozen:
        a: int
        b: str = "x"
        c: tuple = ()
        d: list = field(default_factory=list, compare=False, hash=False)
        e: int = field(default=3, init=False)
        f: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @dc(slots=True)
    class Slotted:
        self: int  # a field named self: __init__'s first parameter is renamed
        k: int = field(default=1, kw_only=True)
        m: int = 2

        def __post_init__(self) -> None:
            self.m = self.m * 10

    @dc
    class Plain:
        a: int
        b: Any = 0
        c: int = field(default=5, init=False)

    @dc(slots=True, eq=False)
    class NoEq:
        a: int

    @dc(frozen=True)
    class OwnEq:
        a: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OwnEq)

    @dc(frozen=True, slots=True)
    class OwnHash:
        a: int

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    @dc(frozen=True)
    class Child(OwnEq):
        g: int = 9

    @dc
    class Empty:
        pass

    return {c.__name__: c for c in (Frozen, Slotted, Plain, NoEq, OwnEq, OwnHash, Child, Empty)}


STD, LAZY = _classes(dataclasses.dataclass), _classes(lazy)

CALLS: list[tuple[str, tuple, dict]] = [
    ("Frozen", (1,), {}), ("Frozen", (1, "y", (2,)), {"d": [1]}), ("Frozen", (), {}), ("Frozen", (1,), {"e": 2}),
    ("Slotted", (4,), {"k": 5}), ("Slotted", (4, 3), {}), ("Slotted", (4, 3, 2), {}),
    ("Plain", (1,), {}), ("Plain", (1, [2]), {}), ("Plain", (), {"a": 1, "b": 2}), ("Plain", (1,), {"x": 1}),
    ("NoEq", (1,), {}), ("OwnEq", (1,), {}), ("OwnHash", (1,), {}), ("Child", (1,), {"g": 3}),
    ("Child", (), {"a": 2}), ("Empty", (), {}), ("Empty", (1,), {}),
]


def _make(classes: dict[str, type], name: str, args: tuple, kwargs: dict) -> Any:
    try:
        return classes[name](*args, **kwargs)
    except TypeError as e:
        return f"TypeError: {e}"


def _outcome(fn: Any) -> str:
    try:
        return repr(fn())
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def _fails(fn: Any) -> bool:
    """Whether ``fn`` raises: a new attribute on a frozen slotted instance is refused by both, as a TypeError
    by the standard decorator of Python 3.11 (its ``super()`` names the class before slots were added)."""
    try:
        fn()
    except Exception:
        return True
    return False


def _describe(obj: Any, classes: dict[str, type], name: str, args: tuple, kwargs: dict) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    twin = _make(classes, name, args, kwargs)
    out = [repr(obj), str(inspect.signature(type(obj).__init__)), str(obj == twin), str(obj != twin),
           str(obj == 1), _outcome(lambda: hash(obj) == hash(twin)), str(dataclasses.astuple(obj)),
           str([f.name for f in dataclasses.fields(obj)]), str(type(obj).__match_args__),
           str(getattr(type(obj), "__slots__", None)), _outcome(lambda: dataclasses.replace(obj)),
           repr(copy.deepcopy(obj)), repr(copy.copy(obj))]
    changed = copy.copy(obj)
    out += [_outcome(lambda: setattr(changed, "a", 5)), _outcome(lambda: delattr(changed, "a")),
            str(_fails(lambda: setattr(changed, "zz", 5)))]
    return out


@pytest.mark.parametrize(("name", "args", "kwargs"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_lazy_dataclass_behaves_as_the_standard_one(name: str, args: tuple, kwargs: dict) -> None:
    std, lz = _make(STD, name, args, kwargs), _make(LAZY, name, args, kwargs)
    assert _describe(lz, LAZY, name, args, kwargs) == _describe(std, STD, name, args, kwargs)


def test_unhashable_when_not_frozen_and_pickles_of_module_level_classes() -> None:
    for name in ("Plain", "Slotted"):
        assert STD[name].__hash__ is None and LAZY[name].__hash__ is None
    assert LAZY["NoEq"].__hash__ is object.__hash__
    from pysched.model.objects import Taint, Toleration
    for obj in (Taint("k", "v", "NoSchedule"), Toleration("k", "Exists", "", "NoSchedule")):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and hash(back) == hash(obj) and repr(back) == repr(obj)


def test_methods_are_compiled_at_first_use_only() -> None:
    @lazy(slots=True, frozen=True)
    class Late:
        a: int

    stand_in = Late.__dict__["__init__"]
    assert Late.__dict__["__eq__"] is not None
    one = Late(1)
    assert Late.__dict__["__init__"] is not stand_in  # the compiled one replaced the stand-in
    assert Late(1) == one and hash(Late(1)) == hash(one) and repr(one).endswith("Late(a=1)")


def test_recursive_repr_is_cut_as_the_standard_one() -> None:
    for classes in (STD, LAZY):
        obj = classes["Plain"](1)
        obj.b = obj
        assert repr(obj).replace("_classes.<locals>.", "") == "Plain(a=1, b=..., c=5)"


def _pysched_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(pysched.__path__, "pysched."):
        if info.name.endswith(("live", "live_cmd", "extender_http")):
            continue  # the kubernetes client and HTTP servers: not needed to read their dataclasses
        names.append(info.name)
    return names


def _std_twin(cls: type) -> type:
    specs = [(f.name, f.type, field(default=f.default, default_factory=f.default_factory, init=f.init,
                                    repr=f.repr, hash=f.hash, compare=f.compare, kw_only=f.kw_only))
             for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=cls.__dict__["__dataclass_frozen__"])


def test_every_pysched_dataclass_gets_the_standard_init_signature() -> None:
    """The compiled ``__init__`` of every dataclass of the package has the parameters, kinds, defaults and
    annotations the standard decorator gives (built from the same fields)."""
    seen = 0
    for name in _pysched_modules():
        module = importlib.import_module(name)
        for value in list(vars(module).values()):
            if not (isinstance(value, type) and value.__module__ == name and "__dataclass_frozen__" in value.__dict__):
                continue
            from pysched.lazyclass import _make_init
            real = _make_init(value, value.__dict__["__dataclass_frozen__"], "__slots__" in value.__dict__)
            assert str(inspect.signature(real)) == str(inspect.signature(_std_twin(value).__init__)), value
            seen += 1
    assert seen > 100


def _as_compiled(cls: type) -> Any:
    """``__init__`` of ``cls`` compiled from its own source (the fields' names written out)."""
    from pysched.lazyclass import _init_source

    fields = dataclasses.fields(cls)
    me = "__dataclass_self__" if any(f.name == "self" for f in fields) else "self"
    source = _init_source(fields, [f.name for f in fields], me, cls.__dict__["__dataclass_frozen__"],
                          "__slots__" in cls.__dict__, hasattr(cls, "__post_init__"))[0]
    return next(c for c in compile(source, "<string>", "exec").co_consts if inspect.iscode(c))


def test_shared_init_code_is_the_code_of_each_class_own_source() -> None:
    """A class's ``__init__`` made from the compilation shared by its field pattern has the bytecode,
    names and constants that compiling its own source gives."""
    from pysched.lazyclass import _make_init

    seen = 0
    for name in [*_pysched_modules(), __name__]:
        classes = [*vars(importlib.import_module(name)).values(), *LAZY.values()]
        for value in classes:
            if not (isinstance(value, type) and "__dataclass_frozen__" in value.__dict__):
                continue
            code = _make_init(value, value.__dict__["__dataclass_frozen__"], "__slots__" in value.__dict__).__code__
            want = _as_compiled(value)
            assert (code.co_code, code.co_names, code.co_varnames, code.co_consts, code.co_argcount,
                    code.co_kwonlyargcount) == (want.co_code, want.co_names, want.co_varnames, want.co_consts,
                                                want.co_argcount, want.co_kwonlyargcount), value
            seen += 1
    assert seen > 100


@pytest.mark.parametrize("fields", [
    ["_FACTORY: int = 1", "b: list = field(default_factory=list)"],  # a field named as a global the code reads
    ["a: int", "_dflt_a: int = 2"],  # a field named as another field's default
    ["__dataclass_object__: int"],
], ids=["field-named-_FACTORY", "field-named-as-a-default", "field-named-object"])
def test_fields_named_as_the_code_names_get_the_code_of_their_own_source(fields: list[str]) -> None:
    from pysched.lazyclass import _make_init

    body = "\n".join(f"    {line}" for line in fields)
    scope: dict[str, Any] = {"lazy": lazy, "field": field}
    exec(f"@lazy(slots=True)\nclass L:\n{body}\n", scope)
    code, want = _make_init(scope["L"], False, True).__code__, _as_compiled(scope["L"])
    assert (code.co_code, code.co_names, code.co_varnames) == (want.co_code, want.co_names, want.co_varnames)


def test_a_default_before_a_field_without_one_is_still_refused_at_first_use() -> None:
    @lazy
    class Odd:
        a: int = 1
        b: int = field(kw_only=False)  # type: ignore[misc]

    with pytest.raises(SyntaxError):
        Odd(1, 2)


def test_what_it_does_not_reproduce_goes_to_the_standard_decorator() -> None:
    """An InitVar (here or in a base) is handled by the standard decorator: its value reaches
    ``__post_init__`` and it is no field."""

    @lazy(slots=True)
    class WithInitVar:
        a: int
        scale: dataclasses.InitVar[int] = 1

        def __post_init__(self, scale: int) -> None:
            self.a *= scale

    @lazy
    class Base:
        n: dataclasses.InitVar[int]

        def __post_init__(self, n: int) -> None:
            pass

    @lazy
    class Derived(Base):
        b: int = 0

    assert WithInitVar(2, 3).a == 6 and [f.name for f in dataclasses.fields(WithInitVar)] == ["a"]
    assert "__dataclass_frozen__" not in WithInitVar.__dict__  # the standard decorator made it
    assert str(inspect.signature(Derived)) == "(n: 'dataclasses.InitVar[int]', b: 'int' = 0) -> None"


def _package_dataclasses() -> list[type]:
    found = []
    for name in _pysched_modules():
        for value in list(vars(importlib.import_module(name)).values()):
            if isinstance(value, type) and value.__module__ == name and "__dataclass_frozen__" in value.__dict__:
                found.append(value)
    return found


def test_every_stored_template_is_the_code_compiling_its_source_gives() -> None:
    """A template taken from ``pysched/_lazyclass_inits.py`` is the code object compiling its source in
    ``pysched.lazyclass`` gives: bytecode, constants, names, flags, line table, name, file and line."""
    from pysched import _lazyclass_inits as store
    from pysched.lazyclass import _compiled, _template

    assert len(store.SOURCES) == len(store.CODES) > 40
    for source in store.SOURCES:
        got, want = _template(source), _compiled(source)

        def described(c: Any) -> tuple:
            return (c, c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_flags, c.co_argcount,
                    c.co_kwonlyargcount, c.co_linetable, c.co_exceptiontable, c.co_name, c.co_qualname,
                    c.co_filename, c.co_firstlineno, c.co_stacksize)

        assert described(got) == described(want), source


def test_the_store_holds_the_templates_of_the_package_dataclasses() -> None:
    """Most of the package's dataclasses find their template stored (one added since the store was written
    is compiled at its first use, as before: this fails only when many are missing)."""
    from pysched import _lazyclass_inits as store
    from pysched.lazyclass import template_source

    sources = {template_source(cls) for cls in _package_dataclasses()}
    missing = sources - set(store.SOURCES)
    assert len(missing) * 10 <= len(sources), \
        f"{len(missing)} of {len(sources)} templates not stored: run python tools/gen_lazyclass_inits.py"


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "not-stored"])
def test_a_class_gets_its_init_from_the_store_or_compiled(stored: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A template the store holds is not compiled; one it does not hold is, with the same outcome."""
    from pysched import lazyclass

    @lazy(slots=True, frozen=True)
    class Pair:
        a: int
        b: str = "x"  # (a default is no part of the template)

    source = lazyclass.template_source(Pair)
    assert source in lazyclass._stored()
    compiled: list[str] = []
    real = lazyclass._compiled
    monkeypatch.setattr(lazyclass, "_compiled", lambda s: compiled.append(s) or real(s))
    monkeypatch.setattr(lazyclass, "_INIT_CODE", {})
    if not stored:
        monkeypatch.setattr(lazyclass, "_STORED", {})
    one = Pair(1)
    assert (one.a, one.b, Pair(2, "y").b, one == Pair(1), hash(one) == hash(Pair(1))) == (1, "x", "y", True, True)
    assert compiled == ([] if stored else [source])
    assert str(inspect.signature(Pair)) == "(a: 'int', b: 'str' = 'x') -> None"


def _same(a: Any, b: Any) -> bool:
    """Equal, reading functions, descriptors and classes by their qualified names (the two copies of a
    module hold distinct but like objects) and Field objects attribute by attribute."""
    if type(a) is not type(b):
        return False
    if isinstance(a, type):
        return a.__qualname__ == b.__qualname__
    if isinstance(a, classmethod | staticmethod):
        return _same(a.__func__, b.__func__)
    if isinstance(a, property):
        return _same(a.fget, b.fget) and _same(a.fset, b.fset)
    if callable(a) or type(a).__name__ in ("member_descriptor", "getset_descriptor"):
        return getattr(a, "__qualname__", None) == getattr(b, "__qualname__", None)
    if isinstance(a, dataclasses.Field):
        return all(_same(getattr(a, n), getattr(b, n)) for n in a.__slots__)  # type: ignore[attr-defined]
    if isinstance(a, dict) or type(a).__name__ == "mappingproxy":
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or repr(a) == repr(b)


def _copy_of(name: str, own_fields: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh copy of module ``name``, its dataclasses processed by pysched.lazyclass's own steps or by the
    standard decorator."""
    import importlib.util
    import sys

    from pysched import lazyclass

    monkeypatch.setattr(lazyclass, "_OWN_FIELDS", own_fields)
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    copy_name = f"_lazyclass_copy_{own_fields}_{name.replace('.', '_')}"
    copy_spec = importlib.util.spec_from_file_location(copy_name, spec.origin,
                                                       submodule_search_locations=spec.submodule_search_locations)
    assert copy_spec is not None and copy_spec.loader is not None
    module = importlib.util.module_from_spec(copy_spec)
    module.__package__ = name if spec.submodule_search_locations else name.rpartition(".")[0]
    monkeypatch.setitem(sys.modules, copy_name, module)
    copy_spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not __import__("pysched.lazyclass").lazyclass._OWN_FIELDS, reason="Python 3.11 only")
def test_own_field_steps_make_the_classes_the_standard_decorator_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every dataclass of the package, processed by pysched.lazyclass's own steps (the fields of classes
    without dataclass bases or pseudo-fields), is the class the standard decorator makes: the same class
    attributes in the same order, fields (every attribute of each Field), parameters, ``__match_args__``,
    ``__slots__``, bases and names."""
    compared = 0
    for name in _pysched_modules():
        if name in ("pysched._lazyclass_inits", "pysched.cli.main") or name.endswith("__main__"):
            continue
        with monkeypatch.context() as m:
            try:
                ours, std = _copy_of(name, True, m), _copy_of(name, False, m)
            except ValueError as e:  # a module that registers something once (report.expect's step)
                assert "already registered" in str(e)
                continue
        for attr, value in vars(ours).items():
            if not (isinstance(value, type) and value.__module__ == ours.__name__
                    and "__dataclass_fields__" in value.__dict__):
                continue
            twin = getattr(std, attr)
            assert [b.__qualname__ for b in value.__mro__] == [b.__qualname__ for b in twin.__mro__], value
            mine, theirs = dict(value.__dict__), dict(twin.__dict__)
            assert (mine.pop("__module__"), theirs.pop("__module__")) == (ours.__name__, std.__name__)
            assert _same(mine, theirs), value
            assert _same(dataclasses.fields(value), dataclasses.fields(twin)), value
            compared += 1
    assert compared > 100


def _shaped(source: str, own_fields: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The class ``C`` a module of ``source`` makes (or the error it raises), its dataclass processed by
    pysched.lazyclass's own steps or by the standard decorator."""
    import sys
    import types

    from pysched import lazyclass

    monkeypatch.setattr(lazyclass, "_OWN_FIELDS", own_fields)
    name = f"_lazyclass_shaped_{own_fields}"
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    try:
        exec(compile(source, "<shape>", "exec"), module.__dict__)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return module.C


SHAPES = {
    "classvar": "from typing import ClassVar\n@lazy\nclass C:\n    a: int\n    b: ClassVar[int] = 3\n",
    "classvar-string": "from __future__ import annotations\nfrom typing import ClassVar\n"
                       "@lazy(slots=True)\nclass C:\n    a: int\n    b: ClassVar[int] = 3\n",
    "classvar-prefixed": "from __future__ import annotations\nimport typing as t\n"
                         "@lazy\nclass C:\n    a: int\n    b: t.ClassVar[int] = 3\n",
    "classvar-alias": "from __future__ import annotations\nfrom typing import ClassVar\nCV = ClassVar\n"
                      "@lazy\nclass C:\n    a: int\n    b: CV[int] = 3\n",
    "kw-only-marker": "from __future__ import annotations\nfrom dataclasses import KW_ONLY\n"
                      "@lazy(slots=True)\nclass C:\n    a: int\n    _: KW_ONLY\n    b: int = 2\n",
    "mutable-default": "@lazy\nclass C:\n    a: list = []\n",
    "field-without-annotation": "@lazy\nclass C:\n    a: int\n    b = field(default=1)\n",
    "dataclass-base": "@lazy\nclass B:\n    a: int = 1\n@lazy(slots=True)\nclass C(B):\n    b: int = 2\n",
    "plain-base-slots": "class B:\n    __slots__ = ('a',)\n@lazy(slots=True)\nclass C(B):\n    a: int\n    b: int = 2\n",
    "kw-only-match-args": "@lazy(kw_only=True, match_args=True)\nclass C:\n    a: int\n"
                          "    b: int = field(default=2, kw_only=False)\n    c: list = field(default_factory=list)\n",
    "own-match-args": "@lazy\nclass C:\n    __match_args__ = ('b',)\n    a: int\n    b: int = 0\n",
    "no-match-args": "@lazy(match_args=False, slots=True, frozen=True)\nclass C:\n    a: int\n",
}


@pytest.mark.skipif(not __import__("pysched.lazyclass").lazyclass._OWN_FIELDS, reason="Python 3.11 only")
@pytest.mark.parametrize("shape", SHAPES)
def test_own_field_steps_leave_what_they_do_not_make_to_the_standard_decorator(
        shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pseudo-fields (ClassVar, KW_ONLY, however named), refused classes and dataclass bases give the class
    or the error the standard decorator gives."""
    future = "from __future__ import annotations\n"
    body = SHAPES[shape]
    source = (future if body.startswith(future) else "") + "from dataclasses import field\n" \
        "from pysched.lazyclass import dataclass as lazy\n" + body.removeprefix(future)
    with monkeypatch.context() as m:
        ours = _shaped(source, True, m)
    with monkeypatch.context() as m:
        std = _shaped(source, False, m)
    if isinstance(std, str):
        assert ours == std
        return
    mine, theirs = dict(ours.__dict__), dict(std.__dict__)
    assert mine.pop("__module__") != theirs.pop("__module__")
    assert _same(mine, theirs) and _same(dataclasses.fields(ours), dataclasses.fields(std))
    assert [b.__qualname__ for b in ours.__mro__] == [b.__qualname__ for b in std.__mro__]
