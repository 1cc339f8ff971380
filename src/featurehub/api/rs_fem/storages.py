"""Storage locations of the project."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_fem import StorageLocation
from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.fem import storages
from featurehub.web import PageRequest, paged_result, wrap


def list_storages(page: int = 0, size: int = 20) -> dict[str, Any]:
    """A page of the project's storage locations, by name."""
    caller, paging = current_caller(), PageRequest.of(page, size, None)
    items = storages.list_locations(
        db_session(), project_id=caller.project_id, project=caller.project,
        settings_file=current_runtime().settings.storage_settings_file)
    chosen = items[paging.offset:paging.offset + paging.size]
    return paged_result([item.as_dict() for item in chosen], len(items), paging)


def get_storage(name: str) -> dict[str, Any]:
    """One storage location."""
    caller = current_caller()
    return wrap(storages.get_location(
        db_session(), project_id=caller.project_id, project=caller.project, name=name,
        settings_file=current_runtime().settings.storage_settings_file).as_dict())


def put_storage(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create or replace a storage location."""
    location = StorageLocation.model_validate(body)
    return wrap(storages.put_location(
        db_session(), project_id=current_caller().project_id, name=name,
        body_name=location.name, plugin=location.plugin,
        configuration=location.configuration.model_dump(),
        allowed_roots=current_runtime().settings.storage_roots).as_dict())


def delete_storage(name: str) -> dict[str, Any]:
    """Delete a storage location (files stored there become offline)."""
    caller = current_caller()
    storages.delete_location(db_session(), project_id=caller.project_id, project=caller.project,
                             name=name,
                             settings_file=current_runtime().settings.storage_settings_file)
    return wrap(None)
