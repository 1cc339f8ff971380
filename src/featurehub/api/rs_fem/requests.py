"""Processing requests: status, search, retry, deletion; session counters."""

from __future__ import annotations

from typing import Any

from featurehub.api.rs_fem.bodies import optional_json
from featurehub.models.rs_fem import RequestFilter
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.fem import requests
from featurehub.web import PageRequest, paged_result, wrap


def _criteria(body: Any) -> dict[str, Any]:
    return RequestFilter.model_validate(optional_json(body)).model_dump(
        mode="json", exclude_none=True)


def get_request(requestId: str) -> dict[str, Any]:
    """One request and its processing status."""
    return wrap(requests.get_request(db_session(), project_id=current_caller().project_id,
                                     request_id=requestId))


def search_requests(type: str, body: dict[str, Any] | None = None, page: int = 0,  # noqa: A002
                    size: int = 20, sort: list[str] | None = None) -> dict[str, Any]:
    """A page of the requests of one type matching the filter."""
    paging = PageRequest.of(page, size, sort)
    items, total, errors = requests.search_requests(
        db_session(), project_id=current_caller().project_id, type_=type,
        criteria=_criteria(body), page=paging)
    return {**paged_result(items, total, paging), "info": {"nbErrors": errors}}


def retry_requests(type: str, body: dict[str, Any] | None = None) -> dict[str, Any]:  # noqa: A002
    """Requests in error matching the filter go back to the queue."""
    return requests.retry_requests(db_session(), project_id=current_caller().project_id,
                                   type_=type, criteria=_criteria(body))


def delete_requests(type: str, body: dict[str, Any] | None = None) -> dict[str, Any]:  # noqa: A002
    """Requests matching the filter and not being processed are deleted."""
    return requests.delete_requests(db_session(), project_id=current_caller().project_id,
                                    type_=type, criteria=_criteria(body))


def list_sessions(sessionOwner: str | None = None, session: str | None = None
                  ) -> list[dict[str, Any]]:
    """Counters of each (sessionOwner, session)."""
    counters = requests.session_counters(db_session(), project_id=current_caller().project_id,
                                         session_owner=sessionOwner, session_name=session)
    return [wrap(item) for item in counters]
