"""Stored products: search, one by urn, and the content of their online files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from featurehub.db.fem import Feature
from featurehub.errors import Conflict, NotFound
from featurehub.services.fem.documents import feature_document
from featurehub.services.fem.requests import last_update_between, text_filter
from featurehub.services.fem.storages import StorageFailure, locations, open_stored
from featurehub.web import PageRequest, order_by

SORTABLE = {"lastUpdate": Feature.last_update, "creationDate": Feature.created_at,
            "providerId": Feature.provider_id, "urn": Feature.urn, "version": Feature.version,
            "model": Feature.model}


def _conditions(project_id: int, criteria: Mapping[str, Any]) -> list[Any]:
    conditions = [Feature.project_id == project_id]
    for member, column in (("ids", Feature.urn), ("providerIds", Feature.provider_id)):
        values = criteria.get(member)
        if values is not None:
            conditions.append(column.in_([text_filter(value, member) for value in values]))
    for member, column in (("model", Feature.model), ("source", Feature.session_owner),
                           ("sessionOwner", Feature.session_owner),
                           ("session", Feature.session)):
        value = text_filter(criteria.get(member), member)
        if value is not None:
            conditions.append(column == value)
    if criteria.get("last") is not None:
        conditions.append(Feature.last.is_(bool(criteria["last"])))
    if criteria.get("disseminationStatus") is not None:
        conditions.append(Feature.dissemination_status == criteria["disseminationStatus"])
    conditions += last_update_between(Feature.last_update, criteria)
    box = criteria.get("bbox")
    if box is not None:
        min_x, min_y, max_x, max_y = box
        conditions += [Feature.max_x >= min_x, Feature.min_x <= max_x,
                       Feature.max_y >= min_y, Feature.min_y <= max_y]
    return conditions


def search_features(session: Session, *, project_id: int, project: str,
                    criteria: Mapping[str, Any], page: PageRequest,
                    settings_file: Path | None) -> tuple[list[dict[str, Any]], int]:
    conditions = _conditions(project_id, criteria)
    total = session.scalar(select(func.count()).select_from(Feature).where(*conditions)) or 0
    rows = session.execute(
        select(Feature.__table__).where(*conditions)
        .order_by(*order_by(page, SORTABLE, default=[("lastUpdate", True)]), Feature.id)
        .offset(page.offset).limit(page.size))
    storages = locations(session, project_id=project_id, project=project,
                         settings_file=settings_file)
    return [feature_document(row._mapping, storages) for row in rows], total


def _row(session: Session, project_id: int, urn: str) -> Any:
    row = session.execute(select(Feature.__table__).where(
        Feature.project_id == project_id, Feature.urn == urn)).first()
    if row is None:
        raise NotFound(f"Feature {urn} does not exist.")
    return row._mapping


def get_feature(session: Session, *, project_id: int, project: str, urn: str,
                settings_file: Path | None) -> dict[str, Any]:
    return feature_document(_row(session, project_id, urn), locations(
        session, project_id=project_id, project=project, settings_file=settings_file))


@dataclass(frozen=True)
class FileContent:
    path: Path
    filename: str
    size: int


def file_content(session: Session, *, project_id: int, project: str, urn: str, checksum: str,
                 settings_file: Path | None) -> FileContent:
    """The local file of an online file of a product; Conflict when it is offline."""
    row = _row(session, project_id, urn)
    file = next((f for f in row["files"]
                 if f["attributes"]["checksum"].lower() == checksum.lower()), None)
    if file is None:
        raise NotFound(f"Feature {urn} has no file of checksum '{checksum}'.")
    configured = locations(session, project_id=project_id, project=project,
                           settings_file=settings_file)
    reasons = []
    for location in file["locations"]:
        storage = configured.get(location.get("storage") or "")
        if storage is None:
            continue
        try:
            path = open_stored(storage, location["url"])
        except StorageFailure as error:
            reasons.append(str(error))
            continue
        return FileContent(path, file["attributes"]["filename"], path.stat().st_size)
    name = file["attributes"]["filename"]
    if reasons:
        raise Conflict(f"File '{name}' of {urn} cannot be read: {' '.join(reasons)}")
    raise Conflict(f"File '{name}' of {urn} is offline: none of its locations is a configured "
                   f"storage location.")
