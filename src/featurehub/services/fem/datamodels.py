"""Data models: named JSON Schemas (draft 2020-12) of the features' `properties`, per project
(`/models`) or shared by every project from the `*.json` files of FEATUREHUB_MODELS_DIR (a
project's own model of the same name takes precedence).

Validators are compiled once per (project, name, revision) with jsonschema-rs and kept."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
from sqlalchemy import bindparam, exists, func, select
from sqlalchemy.orm import Session

from featurehub.db.base import utcnow
from featurehub.db.fem import DataModel, Feature, FeatureRequest
from featurehub.errors import Conflict, NotFound, Unprocessable

log = logging.getLogger(__name__)

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
PENDING_STATES = ("GRANTED",)


@dataclass(frozen=True)
class ModelDefinition:
    name: str
    description: str | None
    schema: dict[str, Any]
    revision: int
    source: str  # "project" | "directory"

    def as_dict(self) -> dict[str, Any]:
        body = {"name": self.name, "schema": self.schema, "revision": self.revision,
                "source": self.source}
        if self.description is not None:
            body["description"] = self.description
        return body


def _compile(schema: Mapping[str, Any]) -> Any:
    return jsonschema_rs.Draft202012Validator(schema, validate_formats=True, offline=True)


def _path(error: Any) -> str:
    return ".".join(str(part) for part in error.instance_path)


class CompiledModel:
    """A model ready to check properties: the whole schema, and its patch form (top-level
    `required` dropped) for the members a patch supplies."""

    def __init__(self, definition: ModelDefinition) -> None:
        schema = definition.schema
        self.name = definition.name
        declared = schema.get("properties") or {}
        self.declared = frozenset(declared)
        # Properties the model does not declare are refused unless it allows them explicitly.
        self.open = schema.get("additionalProperties", False) not in (False, None)
        self.required = frozenset(schema.get("required") or ())
        self.fixed = frozenset(name for name, sub in declared.items()
                               if isinstance(sub, dict) and sub.get("x-alterable") is False)
        # A closed model without patternProperties refuses exactly the names it does not
        # declare: its validator then checks that too, and a valid feature costs one call.
        self.closed = not self.open and "patternProperties" not in schema
        self.validator = _compile({**schema, "additionalProperties": False} if self.closed
                                  else schema)
        self.patch_validator = _compile({k: v for k, v in schema.items() if k != "required"})

    def _first_error(self, validator: Any, properties: Mapping[str, Any]) -> str | None:
        if validator.is_valid(properties):
            return None
        error = next(validator.iter_errors(properties))
        kind = type(error.kind).__name__
        path = _path(error)
        if kind == "Required":
            name = f"{path}.{error.kind.property}" if path else str(error.kind.property)
            return f"Missing required property '{name}' of model '{self.name}'."
        if kind == "AdditionalProperties":
            unexpected = error.kind.unexpected[0] if error.kind.unexpected else "?"
            name = f"{path}.{unexpected}" if path else str(unexpected)
            return f"Property '{name}' isn't expected by the model '{self.name}'."
        where = f"'{path}'" if path else "properties"
        return f"Property {where} of model '{self.name}': {error.message}."

    def _unexpected(self, properties: Mapping[str, Any]) -> str | None:
        if self.open:
            return None
        for name in properties:
            if name not in self.declared:
                return f"Property '{name}' isn't expected by the model '{self.name}'."
        return None

    def creation_problem(self, properties: Mapping[str, Any]) -> str | None:
        if self.closed and self.validator.is_valid(properties):
            return None
        return self._unexpected(properties) or self._first_error(self.validator, properties)

    def patch_problem(self, properties: Mapping[str, Any]) -> str | None:
        unexpected = self._unexpected(properties)
        if unexpected:
            return unexpected
        supplied = {}
        for name, value in properties.items():
            if name in self.fixed:
                return (f"Property '{name}' of model '{self.name}' cannot be patched "
                        f"(x-alterable: false).")
            if value is None:
                if name in self.required:
                    return (f"Property '{name}' is required by the model '{self.name}': a patch "
                            f"cannot unset it.")
            else:
                supplied[name] = value
        return self._first_error(self.patch_validator, supplied)

    def full_problem(self, properties: Mapping[str, Any]) -> str | None:
        return self.creation_problem(properties)


_compiled: dict[tuple[Any, ...], CompiledModel] = {}
_lock = threading.Lock()


def compiled(definition: ModelDefinition, key: tuple[Any, ...]) -> CompiledModel:
    model = _compiled.get(key)
    if model is None:
        model = CompiledModel(definition)
        with _lock:
            if len(_compiled) > 10_000:
                _compiled.clear()
            _compiled[key] = model
    return model


# ---- the models directory (shared by every project) ----

_directory: dict[str, Any] = {"key": None, "models": {}}


def directory_models(models_dir: Path | None) -> dict[str, ModelDefinition]:
    """The models of FEATUREHUB_MODELS_DIR, read again when a file changes."""
    if models_dir is None or not models_dir.is_dir():
        return {}
    files = sorted(models_dir.glob("*.json"))
    key = (str(models_dir), tuple((f.name, f.stat().st_mtime_ns) for f in files))
    if _directory["key"] == key:
        return _directory["models"]
    models: dict[str, ModelDefinition] = {}
    defined_by: dict[str, Path] = {}
    for file in files:
        try:
            body = orjson.loads(file.read_bytes())
            name = body.get("name") or file.stem
            schema = body["schema"]
            check_schema(name, schema)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, Unprocessable) as error:
            log.warning("model file %s ignored: %s", file, getattr(error, "detail", error))
            continue
        if name in defined_by:
            log.warning("model file %s ignored: model '%s' is defined by %s already", file,
                        name, defined_by[name].name)
            continue
        defined_by[name] = file
        models[name] = ModelDefinition(name, body.get("description"), schema,
                                       file.stat().st_mtime_ns, "directory")
    _directory.update(key=key, models=models)
    return models


# ---- lookups ----

# Built once (acceptance asks at every request): the statement and its cache key cost more
# to build than the query costs to run.
_REVISIONS = select(DataModel.name, DataModel.revision).where(
    DataModel.project_id == bindparam("project_id"),
    DataModel.name.in_(bindparam("names", expanding=True)))


def resolve_models(session: Session, *, project_id: int, names: Iterable[str],
                   models_dir: Path | None) -> dict[str, CompiledModel]:
    """The compiled models among `names` (one query), unknown names left out."""
    # A name with a NUL names no model (and PostgreSQL refuses it as a parameter).
    wanted = {name for name in names if isinstance(name, str) and "\x00" not in name}
    if not wanted:
        return {}
    found: dict[str, CompiledModel] = {}
    rows = session.execute(_REVISIONS, {"project_id": project_id,
                                        "names": sorted(wanted)}).all()
    missing_schemas = [name for name, revision in rows
                       if ("project", project_id, name, revision) not in _compiled]
    schemas = {}
    if missing_schemas:
        schemas = {row.name: row for row in session.scalars(select(DataModel).where(
            DataModel.project_id == project_id, DataModel.name.in_(missing_schemas)))}
    for name, revision in rows:
        key = ("project", project_id, name, revision)
        model = _compiled.get(key)
        if model is None:
            row = schemas[name]
            model = compiled(_definition(row), key)
        found[name] = model
    shared = directory_models(models_dir)
    for name in wanted - set(found):
        definition = shared.get(name)
        if definition is not None:
            found[name] = compiled(definition, ("directory", str(models_dir), name,
                                                definition.revision))
    return found


def _definition(row: DataModel) -> ModelDefinition:
    return ModelDefinition(row.name, row.description, row.schema, row.revision, "project")


def list_models(session: Session, *, project_id: int, models_dir: Path | None,
                offset: int, limit: int) -> tuple[list[ModelDefinition], int]:
    own = {row.name: _definition(row) for row in session.scalars(
        select(DataModel).where(DataModel.project_id == project_id))}
    merged = {**directory_models(models_dir), **own}
    ordered = [merged[name] for name in sorted(merged)]
    return ordered[offset:offset + limit], len(ordered)


def get_model(session: Session, *, project_id: int, name: str,
              models_dir: Path | None) -> ModelDefinition:
    row = session.scalars(select(DataModel).where(
        DataModel.project_id == project_id, DataModel.name == name)).first()
    if row is not None:
        return _definition(row)
    shared = directory_models(models_dir).get(name)
    if shared is None:
        raise NotFound(f"Model '{name}' does not exist.")
    return shared


def check_schema(name: str, schema: Any) -> None:
    """A usable model: a valid draft 2020-12 object schema with `properties`."""
    if not isinstance(schema, dict):
        raise Unprocessable(f"Model '{name}': the schema is a JSON object.")
    declared = schema.get("$schema", DRAFT_2020_12)
    if declared != DRAFT_2020_12:
        raise Unprocessable(f"Model '{name}': the schema is JSON Schema draft 2020-12 "
                            f"($schema {DRAFT_2020_12}), not {declared}.")
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise Unprocessable(f"Model '{name}': the schema describes an object "
                            f"(\"type\": \"object\") and declares its \"properties\".")
    try:
        jsonschema_rs.meta.validate(schema)
        _compile(schema)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as error:
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise Unprocessable(f"Model '{name}': invalid JSON Schema: {first_line}") from error


def put_model(session: Session, *, project_id: int, name: str, body_name: str | None,
              description: str | None, schema: dict[str, Any]) -> ModelDefinition:
    if body_name is not None and body_name != name:
        raise Unprocessable(f"The model name in the body ('{body_name}') is not the one in the "
                            f"path ('{name}').")
    check_schema(name, schema)
    row = session.scalars(select(DataModel).where(
        DataModel.project_id == project_id, DataModel.name == name)).first()
    if row is None:
        row = DataModel(project_id=project_id, name=name, revision=1)
        session.add(row)
    else:
        row.revision += 1
    row.description = description
    row.schema = schema
    row.updated = utcnow()
    session.commit()
    return _definition(row)


def delete_model(session: Session, *, project_id: int, name: str,
                 models_dir: Path | None) -> None:
    row = session.scalars(select(DataModel).where(
        DataModel.project_id == project_id, DataModel.name == name)).first()
    if row is None:
        if name in directory_models(models_dir):
            raise Conflict(f"Model '{name}' comes from the models directory "
                           f"(FEATUREHUB_MODELS_DIR); remove its file instead.")
        raise NotFound(f"Model '{name}' does not exist.")
    used = session.scalar(select(func.count()).select_from(Feature).where(
        Feature.project_id == project_id, Feature.model == name)) or 0
    if used:
        raise Conflict(f"Model '{name}' is used by {used} feature(s); it cannot be deleted.")
    pending = session.scalar(select(exists().where(
        FeatureRequest.project_id == project_id, FeatureRequest.model == name,
        FeatureRequest.state.in_(PENDING_STATES))))
    if pending:
        raise Conflict(f"Model '{name}' is named by requests still to be processed; it cannot be "
                       f"deleted.")
    session.delete(row)
    session.commit()
