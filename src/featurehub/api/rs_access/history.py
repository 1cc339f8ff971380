"""Search history of an account in a module."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_access import SearchHistory
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.access import history
from featurehub.web import PageRequest, paged_result, wrap


def _who() -> dict[str, Any]:
    caller = current_caller()
    return {"project_id": caller.project_id, "role": caller.role, "caller_email": caller.email}


def list_search_history(accountEmail: str, moduleId: int, page: int = 0, size: int = 20,  # noqa: N803
                        sort: list[str] | None = None) -> dict[str, Any]:
    """A page of an account's saved searches in a module, by name."""
    request = PageRequest.of(page, size, sort)
    items, total = history.list_history(db_session(), **_who(), account_email=accountEmail,
                                        module_id=moduleId, page=request)
    return paged_result(items, total, request)


def create_search_history(accountEmail: str, moduleId: int, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Save a search of an account in a module."""
    return wrap(history.create_history(db_session(), **_who(), account_email=accountEmail,
                                       module_id=moduleId,
                                       item=SearchHistory.model_validate(body)))


def update_search_history(searchHistoryId: int, body: str) -> dict[str, Any]:  # noqa: N803
    """Replace the configuration of a saved search."""
    return wrap(history.update_history(db_session(), **_who(), history_id=searchHistoryId,
                                       configuration=body))


def delete_search_history(searchHistoryId: int) -> dict[str, Any]:  # noqa: N803
    """Delete a saved search."""
    history.delete_history(db_session(), **_who(), history_id=searchHistoryId)
    return wrap(None)
