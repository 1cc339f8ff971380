"""A stored product as the API shows it: a GeoJSON Feature with its urn, version, files
(online or offline) and history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from featurehub.services.fem.rules import bounding_box
from featurehub.services.fem.storages import Location, holds

_DEFAULTS = {"dataType": "RAWDATA", "mimeType": "application/octet-stream"}


def normalized_files(files: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Files as stored: attributes with their defaults (dataType RAWDATA, octet-stream),
    locations with their storage (null for none), nothing else."""
    normalized = []
    for file in files:
        attributes = file["attributes"]
        if "dataType" not in attributes or "mimeType" not in attributes:
            attributes = {**_DEFAULTS, **attributes}
        locations = file["locations"]
        if any(len(location) != 2 or "storage" not in location for location in locations):
            locations = [{"storage": location.get("storage"), "url": location["url"]}
                         for location in locations]
        normalized.append({"locations": locations, "attributes": attributes})
    return normalized


def is_online(file: Mapping[str, Any], storages: Mapping[str, Location]) -> bool:
    """Whether a location of the file is in a configured storage location that holds it (it
    can be downloaded). A file at a storage name that is no configured location, or that the
    location's plugin cannot serve (an http url in a local directory), is offline."""
    for location in file["locations"]:
        storage = storages.get(location.get("storage") or "")
        if storage is not None and holds(storage, location["url"]):
            return True
    return False


def dissemination_status(entries: Iterable[Mapping[str, Any]]) -> str:
    statuses = [entry["status"] for entry in entries]
    if not statuses:
        return "NONE"
    return "DONE" if all(status == "DONE" for status in statuses) else "PENDING"


def _date(value: datetime | str) -> str:
    return value if isinstance(value, str) else value.isoformat()


def feature_document(row: Mapping[str, Any], storages: Mapping[str, Location]
                     ) -> dict[str, Any]:
    """The GeoJSON Feature of one stored version (`row` has the fem_features columns),
    `storages` the project's storage locations by name."""
    return {
        "type": "Feature",
        "id": row["provider_id"],
        "urn": row["urn"],
        "entityType": row["entity_type"],
        "model": row["model"],
        "version": row["version"],
        "last": row["last"],
        "session": row["session"],
        "sessionOwner": row["session_owner"],
        "geometry": row["geometry"],
        "properties": row["properties"],
        "files": [{**file, "online": is_online(file, storages)} for file in row["files"]],
        "history": {"createdBy": row["created_by"], "updatedBy": row["updated_by"],
                    "creationDate": _date(row["created_at"]),
                    "updateDate": _date(row["last_update"])},
        "disseminationStatus": row["dissemination_status"],
        "disseminationInfo": row["dissemination"],
    }


def bbox_columns(geometry: Mapping[str, Any] | None) -> dict[str, float | None]:
    box = bounding_box(geometry)
    if box is None:
        return {"min_x": None, "min_y": None, "max_x": None, "max_y": None}
    return {"min_x": box[0], "min_y": box[1], "max_x": box[2], "max_y": box[3]}
