"""Project settings, generic to every microservice: each declares its settings (name,
description, default, JSON Schema of the value, and a check against the project when the
schema cannot tell); a project stores only values it changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs
from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.platform import SettingValue
from featurehub.errors import NotFound, Unprocessable

# (session, project_id, caller_role, value): raises a DomainError when the project refuses it.
ProjectCheck = Callable[[Session, int, str, Any], None]


@dataclass(frozen=True)
class SettingDefinition:
    name: str
    description: str
    default: Any
    schema: dict[str, Any] = field(default_factory=dict)
    project_check: ProjectCheck | None = None

    def check(self, value: Any) -> None:
        error = next(jsonschema_rs.validator_for(self.schema).iter_errors(value), None)
        if error is not None:
            raise Unprocessable(f"Invalid value for setting '{self.name}': {error.message}.")


# microservice -> setting name -> definition; filled by each microservice's services package.
DEFINITIONS: dict[str, dict[str, SettingDefinition]] = {}


def define(microservice: str, *definitions: SettingDefinition) -> None:
    registry = DEFINITIONS.setdefault(microservice, {})
    for definition in definitions:
        registry[definition.name] = definition


@dataclass(frozen=True)
class Setting:
    name: str
    description: str
    default_value: Any
    value: Any

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "defaultValue": self.default_value, "value": self.value}


def _definition(microservice: str, name: str) -> SettingDefinition:
    definition = DEFINITIONS.get(microservice, {}).get(name)
    if definition is None:
        known = ", ".join(sorted(DEFINITIONS.get(microservice, {}))) or "none"
        raise NotFound(f"Setting '{name}' does not exist in {microservice} (known: {known}).")
    return definition


def _stored(session: Session, project_id: int, microservice: str) -> dict[str, SettingValue]:
    return {row.name: row for row in session.scalars(select(SettingValue).where(
        SettingValue.project_id == project_id, SettingValue.microservice == microservice))}


def list_settings(session: Session, *, project_id: int, microservice: str,
                  names: list[str] | None = None) -> list[Setting]:
    definitions = DEFINITIONS.get(microservice, {})
    names = [name for name in names or () if name]
    wanted = [_definition(microservice, n) for n in names] if names else list(definitions.values())
    stored = _stored(session, project_id, microservice)
    return [
        Setting(d.name, d.description, d.default,
                stored[d.name].value if d.name in stored else d.default)
        for d in sorted(wanted, key=lambda d: d.name)
    ]


def value_of(session: Session, *, project_id: int, microservice: str, name: str) -> Any:
    definition = _definition(microservice, name)
    row = _stored(session, project_id, microservice).get(name)
    return definition.default if row is None else row.value


def update_setting(session: Session, *, project_id: int, microservice: str, name: str,
                   body_name: str, value: Any, caller_role: str) -> Setting:
    """Every way of changing a setting comes here, so that its checks cannot be bypassed."""
    definition = _definition(microservice, name)
    if body_name != name:
        raise Unprocessable(f"The setting name in the body ('{body_name}') is not the one in the "
                            f"path ('{name}').")
    if _holds_nul(value):  # PostgreSQL text cannot hold it, wherever the value is copied to
        raise Unprocessable("The value contains a NUL character.")
    definition.check(value)
    if definition.project_check is not None:
        definition.project_check(session, project_id, caller_role, value)
    row = _stored(session, project_id, microservice).get(name)
    if row is None:
        session.add(SettingValue(project_id=project_id, microservice=microservice, name=name,
                                 value=value))
    else:
        row.value = value
    session.commit()
    return Setting(name, definition.description, definition.default, value)


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def reset_setting(session: Session, *, project_id: int, microservice: str, name: str) -> Setting:
    definition = _definition(microservice, name)
    row = _stored(session, project_id, microservice).get(name)
    if row is not None:
        session.delete(row)
        session.commit()
    return Setting(name, definition.description, definition.default, definition.default)
