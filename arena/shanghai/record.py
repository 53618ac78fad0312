"""Frozen value classes without the ``dataclasses`` module.

Every bot process built on botkit imports the engine's value classes (cards,
melds, actions, views, the ruleset) before it can answer ``start``, and a
tournament starts many bot processes.  As frozen, slotted dataclasses they
cost about 1.3 ms of CPU each on Python 3.11 (each generated method is
compiled on its own, and ``slots=True`` builds the class twice), and
importing ``dataclasses`` itself another 10 ms (it loads ``inspect``, which
loads ``ast``, ``dis``, ``tokenize`` and ``enum``): about half of a shipped
bot's start over a bare interpreter's (benchmarks/botstart.py).

``record`` makes the same kind of class for a fraction of that: one compiled
source per class, no imports.  What it gives is what the engine used of
``@dataclass(frozen=True, slots=True)``:

- fields from the class's annotations, in order; a default is a class value,
  or ``field(default=..., default_factory=..., init=, repr=, compare=)``;
- construction by position or keyword, then ``__post_init__`` if defined;
- ``__repr__``, ``__eq__`` (same class, fields compared as a tuple) and
  ``__hash__`` over the compared fields, unless the class defines its own;
- frozen: assigning or deleting an attribute raises ``FrozenInstanceError``;
- ``__slots__`` (unless ``slots=False``), ``__match_args__``, and pickling and
  copying through the init fields (``__reduce__``).

A slotted class with no ``__post_init__``, no ``init=False`` field and no
``__new__`` of its own is built fast, as the engine's hot values need (a view
and its melds on every decision, melds by the thousand in a contract
search): the object is made as an instance of a plain twin class with the
same slots (each field a plain slot store, not an ``object.__setattr__``
call, which a frozen class would need), then switched to the frozen class,
which CPython allows between classes of one slot layout.  Such a class
cannot be subclassed (a subclass's layout would differ).

``replace`` and ``fields`` stand in for their ``dataclasses`` namesakes.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:
    def dataclass_transform(**_kwargs: object) -> Callable[[T], T]:
        return lambda f: f


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An attempt to change a field of a frozen record."""


class Field:
    """One field of a record class, as ``fields()`` gives it."""

    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
                 repr: bool = True, compare: bool = True) -> None:  # noqa: A002 - dataclasses' name
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("a field cannot have both a default and a default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
          repr: bool = True, compare: bool = True) -> Any:  # noqa: A002 - dataclasses' name
    """A field's options, written as its class value (as ``dataclasses.field``)."""
    return Field(default, default_factory, init, repr, compare)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _no_subclass(cls: type) -> None:
    raise TypeError(f"{cls.__name__}: a record class built fast cannot be subclassed")


def _reduce(self: Any) -> tuple[Any, tuple[Any, ...]]:
    # pickle and copy would otherwise make the object without its fields
    cls = type(self)
    return cls, tuple([getattr(self, name) for name in cls.__record_init__])


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: Any = None, /, *, slots: bool = True) -> Any:
    """Make ``cls`` a frozen record (see the module's docstring)."""
    if cls is None:
        return lambda c: _build(c, slots)
    return _build(cls, slots)


def fields(cls_or_obj: Any) -> tuple[Field, ...]:
    """A record class's fields, in order (``dataclasses.fields``)."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    found: tuple[Field, ...] | None = getattr(cls, "__record_fields__", None)
    if found is None:
        raise TypeError(f"{cls.__name__} is not a record class")
    return found


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes`` (``dataclasses.replace``)."""
    cls = type(obj)
    for f in fields(cls):
        if not f.init and f.name in changes:
            raise ValueError(f"field {f.name!r} is not set at construction: it cannot be replaced")
        if f.init and f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return cls(**changes)


def _fields_of(cls: type) -> list[Field]:
    out: list[Field] = []
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        out.append(f)
    return out


def _build(cls: type, slots: bool) -> type:
    all_fields = _fields_of(cls)
    own = cls.__dict__
    fast = slots and "__post_init__" not in own and "__new__" not in own and all(f.init for f in all_fields)
    if fast and cls.__bases__ != (object,):
        raise TypeError(f"{cls.__name__}: a record class with slots must derive from object alone")
    scope: dict[str, Any] = {"_MISSING": MISSING, "_new": object.__new__, "_set": object.__setattr__}
    src = _methods(cls, all_fields, fast, scope)
    exec(src, scope)  # noqa: S102 - generated from the class's own field names
    namespace = dict(own)
    for f in all_fields:
        namespace.pop(f.name, None)
        if not slots and f.default is not MISSING:
            namespace[f.name] = f.default        # as dataclasses leave it: a class value
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    names = tuple(f.name for f in all_fields)
    if slots:
        namespace["__slots__"] = names
    for method in ("__repr__", "__eq__", "__hash__", "__init__", "__new__"):
        if method in scope and method not in own:
            fn = scope[method]
            fn.__qualname__ = f"{cls.__qualname__}.{method}"
            namespace[method] = staticmethod(fn) if method == "__new__" else fn
    if "__eq__" in own and own.get("__hash__") is None:
        namespace["__hash__"] = scope["__hash__"]      # as a frozen dataclass: hashable by its fields
    namespace.setdefault("__reduce__", _reduce)
    namespace.update({
        "__setattr__": _frozen_setattr, "__delattr__": _frozen_delattr,
        "__match_args__": tuple(f.name for f in all_fields if f.init),
        "__record_fields__": tuple(all_fields), "__record_init__": tuple(f.name for f in all_fields if f.init),
    })
    if fast:
        namespace["__init__"] = object.__init__          # __new__ does it all
        namespace["__init_subclass__"] = classmethod(_no_subclass)
    new_cls = type(cls)(cls.__name__, cls.__bases__, namespace)
    new_cls.__qualname__ = cls.__qualname__
    if fast:
        scope["_Twin"] = type(f"_{cls.__name__}Twin", (), {"__slots__": names})
        scope["_cls"] = new_cls
    return new_cls


def _methods(cls: type, all_fields: list[Field], fast: bool, scope: dict[str, Any]) -> str:
    """The source of the class's generated methods; defaults go into ``scope``."""
    params: list[str] = []
    body: list[str] = []
    for i, f in enumerate(all_fields):
        if not f.init:
            continue
        if f.default is not MISSING:
            scope[f"_d{i}"] = f.default
            params.append(f"{f.name}=_d{i}")
        elif f.default_factory is not MISSING:
            scope[f"_f{i}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING: {f.name} = _f{i}()")
        else:
            params.append(f.name)
    if fast:
        head = f"def __new__(cls, {', '.join(params)}):\n    self = _new(_Twin)\n"
        body += [f"    self.{f.name} = {f.name}" for f in all_fields]
        body += ["    self.__class__ = _cls", "    return self"]
    else:
        head = f"def __init__(self, {', '.join(params)}):\n"
        body += [f"    _set(self, {f.name!r}, {f.name})" for f in all_fields if f.init]
        if "__post_init__" in cls.__dict__:
            body.append("    self.__post_init__()")
        body.append("    return None")
    shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in all_fields if f.repr)
    compared = "".join(f"self.{f.name}," for f in all_fields if f.compare)
    other = "".join(f"other.{f.name}," for f in all_fields if f.compare)
    return (head + "\n".join(body) + "\n"
            f"def __repr__(self):\n    return f'{{type(self).__qualname__}}({shown})'\n"
            "def __eq__(self, other):\n"
            "    if other.__class__ is self.__class__:\n"
            f"        return ({compared}) == ({other})\n"
            "    return NotImplemented\n"
            f"def __hash__(self):\n    return hash(({compared}))\n")
