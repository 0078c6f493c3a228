"""Validated env configs: a frozen dataclass per env, built from keyword or command-line values.

Nonsense fails early with a ValueError that names the field, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, ClassVar, Self

from datagauntlet.core.limits import Limits


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Base of every env's config. Subclasses add fields (all with defaults) and `validate`.

    `max_turns` is common to every env: the model turns a front door allows per episode.
    Left as None it is the env's own default, from the limits in its registration (which
    its Environment class hands to its config class as `limits`).
    """

    limits: ClassVar[Limits] = Limits()
    max_turns: int | None = None

    def __post_init__(self) -> None:
        if self.max_turns is None:
            object.__setattr__(self, "max_turns", self.limits.max_turns)

    # Import path of a user's module adding families and splits (core/family_module.py).
    family_module: str | None = None

    def validate(self) -> None:
        """Raise ValueError for values outside what the env supports."""

    def check_limits(self) -> None:
        cap = self.limits.max_turns_cap
        if self.max_turns is not None and not 1 <= self.max_turns <= cap:
            raise ValueError(f"max_turns must be in 1..{cap}, got {self.max_turns}")

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def build(cls, **values: Any) -> Self:
        unknown = sorted(set(values) - set(cls.field_names()))
        if unknown:
            raise ValueError(
                f"unknown config field {unknown[0]!r} for {cls.__name__}; "
                f"known fields: {', '.join(cls.field_names())}"
            )
        hints = typing.get_type_hints(cls)
        for name, value in values.items():
            _check_type(name, value, hints[name])
        config = cls(**values)
        config.check_limits()
        config.validate()
        return config

    @classmethod
    def from_strings(cls, values: dict[str, str]) -> Self:
        """Build from command-line text, converting each value to its field's type."""
        hints = typing.get_type_hints(cls)
        converted: dict[str, Any] = {}
        for name, text in values.items():
            if name not in cls.field_names():
                cls.build(**{name: text})  # raises the unknown-field error
            converted[name] = _convert(name, text, hints[name])
        return cls.build(**converted)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def changed(self) -> dict[str, Any]:
        """Only the fields that differ from the defaults (for short labels)."""
        default = type(self)()
        return {k: v for k, v in self.as_dict().items() if getattr(default, k) != v}


def _allowed_types(hint: Any) -> tuple[type, ...]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        out: tuple[type, ...] = ()
        for arg in typing.get_args(hint):
            out += _allowed_types(arg)
        return out
    if origin is typing.Literal:
        return tuple({type(a) for a in typing.get_args(hint)})
    if hint is type(None) or hint is None:
        return (type(None),)
    if origin is not None:
        return (origin,)
    return (hint,)


def _check_type(name: str, value: Any, hint: Any) -> None:
    allowed = _allowed_types(hint)
    if isinstance(value, bool) and bool not in allowed:
        raise ValueError(f"config field {name!r} must be {_names(allowed)}, got {value!r}")
    if float in allowed and isinstance(value, int):
        return
    if not isinstance(value, allowed):
        raise ValueError(f"config field {name!r} must be {_names(allowed)}, got {value!r}")
    if typing.get_origin(hint) is typing.Literal and value not in typing.get_args(hint):
        choices = ", ".join(str(a) for a in typing.get_args(hint))
        raise ValueError(f"config field {name!r} must be one of {choices}, got {value!r}")


def _names(types_: tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in types_)


def _convert(name: str, text: str, hint: Any) -> Any:
    allowed = _allowed_types(hint)
    if type(None) in allowed and text.lower() in ("none", "null", ""):
        return None
    if bool in allowed:
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
    for kind in (int, float):
        if kind in allowed:
            try:
                return kind(text)
            except ValueError:
                continue
    if str in allowed:
        return text
    raise ValueError(f"config field {name!r} must be {_names(allowed)}, got {text!r}")
