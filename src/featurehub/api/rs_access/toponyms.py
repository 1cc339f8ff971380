"""Toponyms."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_access import ToponymRegistration
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.access import toponyms
from featurehub.web import PageRequest, paged_result, wrap


def list_toponyms(page: int = 0, size: int = 20, sort: list[str] | None = None,
                  scope: str | None = None) -> dict[str, Any]:
    """A page of the visible toponyms, by label."""
    request = PageRequest.of(page, size, sort)
    items, total = toponyms.list_toponyms(db_session(), project_id=current_caller().project_id,
                                          page=request)
    return paged_result(items, total, request)


def search_toponyms(partialLabel: str | None = None, locale: str = "en",  # noqa: N803
                    scope: str | None = None) -> list[dict[str, Any]]:
    """Up to 100 visible toponyms whose label holds the text, without geometry."""
    return [wrap(item) for item in toponyms.search_toponyms(
        db_session(), project_id=current_caller().project_id, partial_label=partialLabel,
        locale=locale)]


def get_toponym(businessId: str, simplified: bool = False,  # noqa: N803
                scope: str | None = None) -> dict[str, Any]:
    """One toponym, its geometry simplified on request."""
    return wrap(toponyms.get_toponym(db_session(), project_id=current_caller().project_id,
                                     business_id=businessId, simplified=simplified))


def create_toponym(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Register an area as a not visible toponym (201), or refresh the same one (200)."""
    caller = current_caller()
    toponym, created = toponyms.register_toponym(
        db_session(), project_id=caller.project_id, project_name=caller.project,
        caller=caller.email or caller.client_id,
        registration=ToponymRegistration.model_validate(body))
    return wrap(toponym), 201 if created else 200
