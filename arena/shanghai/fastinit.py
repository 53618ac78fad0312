"""A faster ``__init__`` for the engine's hot frozen dataclasses.

A frozen dataclass's generated ``__init__`` sets each field through
``object.__setattr__(self, name, value)``, which looks the slot up by name on
every call.  Views, events, melds and decisions are built on every decision
(melds thousands of times in a contract search), and that look-up made a
22-field view cost half again what it had to.  ``fast_init`` swaps in an
``__init__`` with the same signature that writes each slot through its
descriptor, fetched once.  Everything else about the dataclass stays: fields,
equality, hashing, ``dataclasses.replace``, pickling, frozenness.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass a descriptor-based ``__init__``.

    Only for classes whose fields are all ``init`` fields and that have no
    ``__post_init__``; anything else is refused, so the swap cannot drop work.
    """
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    frozen = cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    if not frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_init is for frozen, slotted dataclasses")
    if hasattr(cls, "__post_init__") or not all(f.init for f in params):
        raise TypeError(f"{cls.__name__}: fast_init does not handle __post_init__ or init=False fields")
    scope: dict[str, Any] = {"_MISSING": dataclasses.MISSING}
    args: list[str] = []
    body: list[str] = []
    for i, f in enumerate(params):
        scope[f"_set{i}"] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            scope[f"_d{i}"] = f.default
            args.append(f"{f.name}=_d{i}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_f{i}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            body.append(f"    if {f.name} is _MISSING: {f.name} = _f{i}()")
        else:
            args.append(f.name)
        body.append(f"    _set{i}(self, {f.name})")
    src = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(src, scope)  # noqa: S102 - generated from the class's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
