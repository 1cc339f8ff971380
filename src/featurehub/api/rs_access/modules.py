"""UI modules of an application."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_access import Module
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.access import modules
from featurehub.web import PageRequest, paged_result, wrap


def list_modules(applicationId: str, active: bool | None = None,  # noqa: N803
                 type: str | None = None, page: int = 0, size: int = 20,  # noqa: A002
                 sort: list[str] | None = None, scope: str | None = None) -> dict[str, Any]:
    """A page of the application's modules, optionally filtered by activity and type."""
    request = PageRequest.of(page, size, sort)
    items, total = modules.list_modules(
        db_session(), project_id=current_caller().project_id, application_id=applicationId,
        active=active, module_type=type, page=request)
    return paged_result(items, total, request)


def get_module(applicationId: str, moduleId: int, scope: str | None = None) -> dict[str, Any]:  # noqa: N803
    """One module."""
    return wrap(modules.get_module(db_session(), project_id=current_caller().project_id,
                                   application_id=applicationId, module_id=moduleId))


def create_module(applicationId: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Register a module in the application of the path."""
    return wrap(modules.create_module(db_session(), project_id=current_caller().project_id,
                                      application_id=applicationId,
                                      module=Module.model_validate(body)))


def update_module(applicationId: str, moduleId: int, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Update a module; the body names the module of the path."""
    return wrap(modules.update_module(db_session(), project_id=current_caller().project_id,
                                      application_id=applicationId, module_id=moduleId,
                                      module=Module.model_validate(body)))


def delete_module(applicationId: str, moduleId: int) -> dict[str, Any]:  # noqa: N803
    """Delete a module."""
    modules.delete_module(db_session(), project_id=current_caller().project_id,
                          application_id=applicationId, module_id=moduleId)
    return wrap(None)
