"""UI themes."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_access import Theme
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.access import themes
from featurehub.web import PageRequest, paged_result, wrap


def list_themes(page: int = 0, size: int = 20, sort: list[str] | None = None,
                scope: str | None = None) -> dict[str, Any]:
    """A page of the project's themes."""
    request = PageRequest.of(page, size, sort)
    items, total = themes.list_themes(db_session(), project_id=current_caller().project_id,
                                      page=request)
    return paged_result(items, total, request)


def get_theme(themeId: int, scope: str | None = None) -> dict[str, Any]:  # noqa: N803
    """One theme."""
    return wrap(themes.get_theme(db_session(), project_id=current_caller().project_id,
                                 theme_id=themeId))


def create_theme(body: dict[str, Any]) -> dict[str, Any]:
    """Register a theme; an active one deactivates the others."""
    return wrap(themes.create_theme(db_session(), project_id=current_caller().project_id,
                                    theme=Theme.model_validate(body)))


def update_theme(themeId: int, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Update a theme; an active one deactivates the others."""
    return wrap(themes.update_theme(db_session(), project_id=current_caller().project_id,
                                    theme_id=themeId, theme=Theme.model_validate(body)))


def delete_theme(themeId: int) -> dict[str, Any]:  # noqa: N803
    """Delete a theme."""
    themes.delete_theme(db_session(), project_id=current_caller().project_id, theme_id=themeId)
    return wrap(None)
