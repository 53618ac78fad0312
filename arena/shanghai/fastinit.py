"""Fast construction for the engine's hot frozen dataclasses.

A frozen dataclass cannot assign its fields the ordinary way: its
``__setattr__`` raises, so the generated ``__init__`` goes through
``object.__setattr__(self, name, value)`` per field, and even writing each
slot through its descriptor costs a method-wrapper call per field.  Views,
events, melds and decisions are built on every decision (melds thousands of
times in a contract search): a 22-field view cost about 17,000 machine
instructions to build that way.

``fast_init`` builds the object as an instance of a plain twin class with the
same ``__slots__`` (so every field is a plain, specialised slot store), then
switches its ``__class__`` to the frozen class; CPython allows that between
classes of identical slot layout.  The view then costs about 5,700
instructions.  Everything else about the dataclass stays: fields, equality,
hashing, ``dataclasses.replace``, pickling and frozenness.  The class gets a
``__new__`` that does the building and ``object.__init__`` (so nothing runs
twice), and cannot be subclassed (a subclass's layout would differ).
"""

from __future__ import annotations

import dataclasses

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any, TypeVar
    T = TypeVar("T")


def _no_subclass(cls: type) -> None:
    raise TypeError(f"{cls.__name__}: a fast_init class cannot be subclassed")


def fast_init(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass the fast construction described above.

    Only for classes whose fields are all ``init`` fields and that have no
    ``__post_init__``; anything else is refused, so the swap cannot drop work.
    """
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    slots = cls.__dict__.get("__slots__")
    if not frozen or slots is None:
        raise TypeError(f"{cls.__name__}: fast_init is for frozen, slotted dataclasses")
    if hasattr(cls, "__post_init__") or not all(f.init for f in params):
        raise TypeError(f"{cls.__name__}: fast_init does not handle __post_init__ or init=False fields")
    names = tuple(f.name for f in params)
    if tuple(slots) != names:
        raise TypeError(f"{cls.__name__}: fast_init needs exactly the fields as slots")
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": names})
    scope: dict[str, Any] = {"_MISSING": dataclasses.MISSING, "_new": object.__new__, "_Twin": twin, "_cls": cls}
    args: list[str] = []
    body = ["    self = _new(_Twin)"]
    for i, f in enumerate(params):
        if f.default is not dataclasses.MISSING:
            scope[f"_d{i}"] = f.default
            args.append(f"{f.name}=_d{i}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_f{i}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING: {f.name} = _f{i}()")
        else:
            args.append(f.name)
        body.append(f"    self.{f.name} = {f.name}")
    body.append("    self.__class__ = _cls")  # the same slot layout: CPython allows the switch
    body.append("    return self")
    src = f"def __new__(cls, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(src, scope)  # noqa: S102 - generated from the class's own field names
    new = scope["__new__"]
    new.__qualname__ = f"{cls.__qualname__}.__new__"
    new.__doc__ = cls.__init__.__doc__

    def __reduce__(self: Any) -> tuple[Any, tuple[Any, ...]]:
        # pickle and copy would otherwise call __new__ without the fields
        return cls, tuple(getattr(self, n) for n in names)

    cls.__new__ = staticmethod(new)  # type: ignore[method-assign]
    cls.__init__ = object.__init__  # type: ignore[method-assign]
    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    cls.__init_subclass__ = classmethod(_no_subclass)  # type: ignore[assignment,method-assign]
    return cls
