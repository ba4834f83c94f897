"""A faster ``__init__`` for the frozen slots dataclasses built millions of times in a replay
(events, machine views, advice)."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, TypeVar

C = TypeVar("C")


def direct_init(cls: type[C]) -> type[C]:
    """Give a frozen slots dataclass an ``__init__`` that fills each slot through its descriptor.

    The generated one calls ``object.__setattr__`` per field, about half the cost of building an
    event; a replay builds millions. Same signature and defaults; the class is otherwise untouched
    (still frozen, same equality, hash and repr)."""
    if any(f.default_factory is not MISSING for f in fields(cls)):  # type: ignore[arg-type]
        raise TypeError(f"{cls.__name__}: direct_init does not handle default_factory fields")
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    scope: dict[str, Any] = {f"_set_{n}": getattr(cls, n).__set__ for n in names}
    params = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"\n    _set_{n}(self, {n})" for n in names)
    exec(f"def __init__(self, {', '.join(params)}):{body}", scope)
    init, generated = scope["__init__"], vars(cls)["__init__"]
    init.__qualname__, init.__annotations__ = generated.__qualname__, generated.__annotations__
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses cls.__init__ = ...)
    return cls
