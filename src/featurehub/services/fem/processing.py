"""Processing of claimed requests: creation of versions, patches, file storage, and the
events and notifications of each finished request, in one transaction per batch.

A batch never holds two requests on one product (see worker.claim), so versions can be
assigned from one query per batch. Finishing is planned first (`plan`: reads and computing,
which may run in a read-only transaction: nothing but the worker holding a product's claim
changes that product), then written in one short transaction (`apply`)."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from featurehub.db.fem import (
    Feature,
    FeatureRequest,
    OutboxEntry,
    among,
    insert_rows,
    serialize_json,
    update_rows_by_id,
)
from featurehub.db.platform import Project
from featurehub.services import settings as project_settings
from featurehub.services.fem import outbox
from featurehub.services.fem.acceptance import latest_versions
from featurehub.services.fem.datamodels import CompiledModel, resolve_models
from featurehub.services.fem.documents import (
    bbox_columns,
    dissemination_status,
    feature_document,
    normalized_files,
)
from featurehub.services.fem.lifecycle import (
    CREATION,
    ERROR,
    LOCAL_ERROR,
    LOCAL_TO_BE_NOTIFIED,
    REMOTE_STORAGE_ERROR,
    SUCCESS,
)
from featurehub.services.fem.settings import (
    DISSEMINATION_RECIPIENTS,
    FILE_FETCH_TIMEOUT,
    MICROSERVICE,
)
from featurehub.services.fem.storages import Location, StorageFailure, locations, store_file
from featurehub.services.fem.urns import MAX_VERSION, parse_urn, urn_of

log = logging.getLogger(__name__)

# The columns a worker reads of each claimed request.
CLAIMED_COLUMNS = (
    FeatureRequest.id, FeatureRequest.request_id, FeatureRequest.project_id,
    FeatureRequest.type, FeatureRequest.product_key, FeatureRequest.provider_id,
    FeatureRequest.urn, FeatureRequest.request_owner, FeatureRequest.session_owner,
    FeatureRequest.session, FeatureRequest.feature, FeatureRequest.options,
)


@dataclass(frozen=True)
class Sources:
    """Where the configuration shared by every project comes from."""

    models_dir: Path | None = None
    storage_settings_file: Path | None = None


@dataclass
class ProjectContext:
    id: int
    name: str
    locations: dict[str, Location]
    recipients: list[str]
    fetch_timeout: float


def project_context(session: Session, project_id: int, sources: Sources) -> ProjectContext:
    name = session.scalar(select(Project.name).where(Project.id == project_id)) or ""
    return ProjectContext(
        project_id, name,
        locations(session, project_id=project_id, project=name,
                  settings_file=sources.storage_settings_file),
        list(project_settings.value_of(session, project_id=project_id, microservice=MICROSERVICE,
                                       name=DISSEMINATION_RECIPIENTS)),
        float(project_settings.value_of(session, project_id=project_id,
                                        microservice=MICROSERVICE, name=FILE_FETCH_TIMEOUT)),
    )


class RequestFailed(Exception):
    def __init__(self, step: str, reason: str) -> None:
        super().__init__(reason)
        self.step = step
        self.reason = reason


@dataclass
class Outcome:
    """What finishing a batch writes: request updates, features, outbox entries."""

    now: datetime
    request_updates: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    # The writes to the products: versions no longer last (project id, product uuids),
    # versions deleted by `override`, versions inserted, versions patched.
    superseded: list[tuple[int, list[str]]] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)
    features: list[dict[str, Any]] = field(default_factory=list)
    feature_updates: list[dict[str, Any]] = field(default_factory=list)

    def succeeded(self, request: Any, urn: str) -> None:
        self.request_updates.append({
            "id": request.id, "state": SUCCESS, "step": LOCAL_TO_BE_NOTIFIED, "urn": urn,
            "errors": None, "last_update": self.now, "claimed_by": None, "claimed_at": None})
        self.entries.append(outbox.request_event(
            project_id=request.project_id, created=self.now, type_=request.type,
            request_id=request.request_id, request_owner=request.request_owner,
            provider_id=request.provider_id, urn=urn, state=SUCCESS, errors=None))

    def failed(self, request: Any, step: str, reason: str) -> None:
        self.request_updates.append({
            "id": request.id, "state": ERROR, "step": step, "errors": [reason],
            "last_update": self.now, "claimed_by": None, "claimed_at": None})
        self.entries.append(outbox.request_event(
            project_id=request.project_id, created=self.now, type_=request.type,
            request_id=request.request_id, request_owner=request.request_owner,
            provider_id=request.provider_id, urn=request.urn, state=ERROR, errors=[reason]))


# ---- files to store (before the finishing transaction, outside of any) ----

def store_files(request: Any, context: ProjectContext) -> list[dict[str, Any]]:
    """Fetch every file without storage into the request's target storages; the files as they
    will be recorded. RequestFailed(REMOTE_STORAGE_ERROR) on any failure."""
    feature, options = request.feature, request.options or {}
    targets = options.get("storages") or []
    stored = []
    for file in normalized_files(feature.get("files") or ()):
        if all(location.get("storage") for location in file["locations"]):
            stored.append(file)
            continue
        attributes = file["attributes"]
        new_locations = []
        for target in targets:
            types = target.get("targetTypes") or []
            if types and attributes["dataType"] not in types:
                continue
            name = target["pluginBusinessId"]
            location = context.locations.get(name)
            if location is None:
                raise RequestFailed(REMOTE_STORAGE_ERROR,
                                    f"Storage '{name}' is not a configured storage location.")
            url = _fetch(file, location, target.get("storePath"), context.fetch_timeout)
            new_locations.append({"storage": name, "url": url})
        if not new_locations:
            raise RequestFailed(REMOTE_STORAGE_ERROR, (
                f"File '{attributes['filename']}': no target storage accepts data type "
                f"{attributes['dataType']}."))
        stored.append({"locations": new_locations, "attributes": attributes})
    return stored


def _fetch(file: Mapping[str, Any], location: Location, store_path: str | None,
           timeout: float) -> str:
    attributes = file["attributes"]
    errors = []
    for source in file["locations"]:
        try:
            return store_file(location, url=source["url"], store_path=store_path,
                              filename=attributes["filename"], algorithm=attributes["algorithm"],
                              checksum=attributes["checksum"], timeout=timeout)
        except StorageFailure as error:
            errors.append(str(error))
    raise RequestFailed(REMOTE_STORAGE_ERROR,
                        f"File '{attributes['filename']}' not stored in '{location.name}': "
                        + " ".join(errors))


# ---- the finishing transaction ----

def plan(session: Session, requests: Sequence[Any], *, now: datetime, sources: Sources,
         contexts: dict[int, ProjectContext], stored: Mapping[int, list[dict[str, Any]]]
         ) -> Outcome:
    """What creating and patching the products of `requests` writes (nothing is written)."""
    outcome = Outcome(now)
    by_project: dict[int, list[Any]] = defaultdict(list)
    for request in requests:
        by_project[request.project_id].append(request)
    for project_id, group in by_project.items():
        context = contexts.get(project_id) or project_context(session, project_id, sources)
        contexts[project_id] = context
        creations = [request for request in group if request.type == CREATION]
        patches = [request for request in group if request.type != CREATION]
        if creations:
            _create(session, creations, context, outcome, stored)
        if patches:
            _patch(session, patches, context, outcome, stored, sources)
    serialize_json(_FEATURES, outcome.features)
    serialize_json(_FEATURES, outcome.feature_updates)
    serialize_json(OutboxEntry.__table__, outcome.entries)
    return outcome


def apply(session: Session, outcome: Outcome) -> None:
    """Write a planned outcome (the caller commits)."""
    for project_id, uuids in outcome.superseded:
        session.execute(update(Feature).where(
            Feature.project_id == project_id, among(session, Feature.uuid, uuids),
            Feature.last.is_(True)).values(last=False))
    if outcome.deleted:
        session.execute(delete(Feature).where(among(session, Feature.id, outcome.deleted)))
    if outcome.features:
        insert_rows(session, _FEATURES, outcome.features)
    if outcome.feature_updates:
        update_rows_by_id(session, _FEATURES, outcome.feature_updates)
    record_outcome(session, outcome)


_REQUESTS = FeatureRequest.__table__
_FEATURES = Feature.__table__


def record_outcome(session: Session, outcome: Outcome) -> None:
    if outcome.request_updates:
        update_rows_by_id(session, _REQUESTS, outcome.request_updates)
    outbox.record(session, outcome.entries)


def _dissemination(recipients: Sequence[str]) -> list[dict[str, Any]]:
    return [{"recipient": recipient, "status": "PENDING"} for recipient in recipients]


def _create(session: Session, requests: Sequence[Any], context: ProjectContext,
            outcome: Outcome, stored: Mapping[int, list[dict[str, Any]]]) -> None:
    now = outcome.now
    keys = {request.product_key for request in requests}
    latest = latest_versions(session, project_id=context.id, products=keys)
    previous: dict[str, Any] = {}
    if latest:
        previous = {row.uuid: row for row in session.execute(
            select(Feature.__table__).where(Feature.project_id == context.id,
                                            among(session, Feature.uuid, latest),
                                            Feature.last.is_(True)))}
    rows, deleted, superseded = outcome.features, outcome.deleted, []
    dissemination = _dissemination(context.recipients)
    status = dissemination_status(dissemination)
    storages = context.locations
    for request in requests:
        feature = request.feature
        current = latest.get(request.product_key, 0)
        if request.urn:
            version = parse_urn(request.urn).version
            if version <= current:
                outcome.failed(request, LOCAL_ERROR, (
                    f"Version is invalid: V{version} of {request.urn} is not above the latest "
                    f"version V{current} of this product."))
                continue
        else:
            version = current + 1
            if version > MAX_VERSION:
                outcome.failed(request, LOCAL_ERROR, (
                    f"Product '{request.provider_id}' has {MAX_VERSION} versions already: no "
                    f"version can be added."))
                continue
        urn = request.urn or urn_of(feature["entityType"], context.name, request.product_key,
                                    version)
        geometry = feature.get("geometry")
        files = stored.get(request.id) or normalized_files(feature.get("files") or ())
        row = {
            "project_id": context.id, "urn": urn, "uuid": request.product_key,
            "provider_id": request.provider_id, "version": version, "last": True,
            "entity_type": feature["entityType"], "model": feature["model"],
            "session_owner": request.session_owner, "session": request.session,
            "geometry": geometry, "properties": feature.get("properties") or {},
            "files": files, **bbox_columns(geometry), "dissemination": dissemination,
            "dissemination_status": status, "created_by": request.request_owner,
            "updated_by": request.request_owner, "created_at": now, "last_update": now,
        }
        rows.append(row)
        outcome.succeeded(request, urn)
        outcome.entries.append(outbox.notification(
            project_id=context.id, created=now, action="CREATED",
            feature=feature_document(row, storages), session_owner=request.session_owner,
            session_name=request.session, changed=()))
        old = previous.get(request.product_key)
        if old is None:
            continue
        superseded.append(old.uuid)
        if (request.options or {}).get("override") and not request.urn:
            deleted.append(old.id)
            old_document = feature_document({**old._mapping, "last": False}, storages)
            outcome.entries.append(outbox.notification(
                project_id=context.id, created=now, action="DELETED", feature=old_document,
                session_owner=old.session_owner, session_name=old.session, changed=()))
            outcome.entries.append(outbox.override_notice(
                project_id=context.id, created=now, replaced=old.urn, replaced_by=urn,
                provider_id=old.provider_id))
    if superseded:
        outcome.superseded.append((context.id, superseded))


def _merge_files(current: list[dict[str, Any]], supplied: list[dict[str, Any]],
                 mode: str) -> list[dict[str, Any]]:
    if mode == "REPLACE":
        return supplied
    replaced = {file["attributes"]["checksum"].lower() for file in supplied}
    return [file for file in current
            if file["attributes"]["checksum"].lower() not in replaced] + supplied


def _patch(session: Session, requests: Sequence[Any], context: ProjectContext,
           outcome: Outcome, stored: Mapping[int, list[dict[str, Any]]],
           sources: Sources) -> None:
    now = outcome.now
    urns = {request.urn for request in requests}
    current = {row.urn: row for row in session.execute(select(Feature.__table__).where(
        Feature.project_id == context.id, among(session, Feature.urn, urns)))}
    models = resolve_models(session, project_id=context.id, models_dir=sources.models_dir,
                            names={row.model for row in current.values()})
    updates = outcome.feature_updates
    storages = context.locations
    for request in requests:
        row = current.get(request.urn)
        if row is None:
            outcome.failed(request, LOCAL_ERROR, f"URN {request.urn} does not exist anymore.")
            continue
        try:
            changes, changed = _patched(row._mapping, request, models.get(row.model),
                                        stored.get(request.id), now)
        except RequestFailed as failure:
            outcome.failed(request, failure.step, failure.reason)
            continue
        updates.append({"id": row.id, **changes})
        outcome.succeeded(request, request.urn)
        outcome.entries.append(outbox.notification(
            project_id=context.id, created=now, action="UPDATED",
            feature=feature_document({**row._mapping, **changes}, storages),
            session_owner=row.session_owner, session_name=row.session, changed=changed))


def _patched(row: Mapping[str, Any], request: Any, model: CompiledModel | None,
             stored_files: list[dict[str, Any]] | None, now: datetime
             ) -> tuple[dict[str, Any], list[str]]:
    """The columns a patch changes, and the names of the changed attributes."""
    feature, options = request.feature, request.options or {}
    if model is None:
        raise RequestFailed(LOCAL_ERROR, f"Unknown model '{row['model']}'.")
    changed: list[str] = []
    properties = dict(row["properties"])
    for name, value in (feature.get("properties") or {}).items():
        if name in model.fixed and properties.get(name) != value:
            raise RequestFailed(LOCAL_ERROR, f"Property '{name}' of model '{model.name}' cannot "
                                             f"be patched (x-alterable: false).")
        if value is None:
            if name in properties:
                del properties[name]
                changed.append(name)
        elif properties.get(name) != value:
            properties[name] = value
            changed.append(name)
    problem = model.full_problem(properties)
    if problem:
        raise RequestFailed(LOCAL_ERROR, problem)
    changes: dict[str, Any] = {"properties": properties, "updated_by": request.request_owner,
                               "last_update": now}
    if "geometry" in feature and feature["geometry"] != row["geometry"]:
        changes["geometry"] = feature["geometry"]
        changes.update(bbox_columns(feature["geometry"]))
        changed.append("geometry")
    if feature.get("files") is not None:
        supplied = stored_files or normalized_files(feature["files"])
        files = _merge_files(row["files"], supplied, options.get("fileUpdateMode", "APPEND"))
        if files != row["files"]:
            changes["files"] = files
            changed.append("files")
    recipient = options.get("acknowledgedRecipient")
    if recipient:
        entries = [dict(entry) for entry in row["dissemination"]]
        entry = next((e for e in entries if e["recipient"] == recipient), None)
        if entry is None:
            entry = {"recipient": recipient}
            entries.append(entry)
        if entry.get("status") != "DONE":
            entry.update(status="DONE", date=now.isoformat())
            changes["dissemination"] = entries
            changes["dissemination_status"] = dissemination_status(entries)
            changed.append("disseminationInfo")
    return changes, changed
