"""Users of the project."""

from __future__ import annotations

import json
from typing import Any

from flask import Response

from featurehub.api.rs_admin.accesses import verification_link
from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.admin import accesses, users
from featurehub.services.admin.scheduler import wake_embedded_scheduler
from featurehub.web import PageRequest, paged_result, wrap

__all__ = [
    "createUser", "retrieveProjectUserList", "exportAsCSV", "countUsers",
    "retrieveAccessRequestList", "retrieveCurrentProjectUser", "updateCurrentProjectUser",
    "retrieveProjectUserByEmail", "retrieveProjectUser", "updateProjectUser", "removeProjectUser",
    "retrieveProjectUserMetaData", "updateProjectUserMetaData", "deleteProjectUserMetaData",
    "retrieveProjectUserAccessRights", "updateProjectUserResources", "removeProjectUserResources",
]


def createUser(body: dict[str, Any]) -> tuple[dict[str, Any], int]:  # noqa: N802
    """Create a user whose access is granted at once."""
    caller = current_caller()
    user = accesses.grant_access(db_session(), project_id=caller.project_id,
                                 caller_role=caller.role, request=body)
    wake_embedded_scheduler(current_runtime())
    return wrap(user), 201


def retrieveProjectUserList(body: dict[str, Any] | None = None, page: int = 0,  # noqa: N802
                            size: int = 10, sort: list[str] | None = None) -> dict[str, Any]:
    """A page of the users matching the filter."""
    request = PageRequest.of(page, size, sort, default_size=10)
    found, total = users.search_users(db_session(), project_id=current_caller().project_id,
                                      user_filter=body, page=request)
    return paged_result(found, total, request)


def exportAsCSV(body: dict[str, Any] | None = None) -> Response:  # noqa: N802
    """The users matching the filter as CSV, streamed."""
    query = users.export_query(db_session(), project_id=current_caller().project_id,
                               user_filter=body)
    return Response(users.export_csv(current_runtime().sessions, query),
                    mimetype="text/csv",
                    headers={"Content-Disposition": 'attachment; filename="users.csv"'})


def countUsers(status: str | None = None) -> Response:  # noqa: N802
    """The number of users (of one status)."""
    count = users.count_users(db_session(), project_id=current_caller().project_id,
                              status=status)
    return Response(json.dumps(count), mimetype="application/json")


def retrieveAccessRequestList(page: int = 0, size: int = 10) -> dict[str, Any]:  # noqa: N802
    """Users waiting for their access to be accepted, oldest first."""
    request = PageRequest.of(page, size, None, default_size=10)
    found, total = users.pending_accesses(db_session(), project_id=current_caller().project_id,
                                          page=request)
    return paged_result(found, total, request)


def retrieveCurrentProjectUser() -> dict[str, Any]:  # noqa: N802
    """The caller's own user."""
    caller = current_caller()
    return wrap(users.get_current_user(db_session(), project_id=caller.project_id,
                                       user_id=caller.user_id))


def updateCurrentProjectUser(body: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    """Update the caller's own user."""
    caller = current_caller()
    return wrap(users.update_current_user(db_session(), project_id=caller.project_id,
                                          user_id=caller.user_id, body=body))


def retrieveProjectUserByEmail(email: str) -> dict[str, Any]:  # noqa: N802
    """A user found by email."""
    return wrap(users.get_user_by_email(db_session(), project_id=current_caller().project_id,
                                        email=email))


def retrieveProjectUser(user_id: int) -> dict[str, Any]:  # noqa: N802
    """A user."""
    return wrap(users.get_user(db_session(), project_id=current_caller().project_id,
                               user_id=user_id))


def updateProjectUser(user_id: int, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    """Update a user."""
    caller = current_caller()
    updated = users.update_user(db_session(), project_id=caller.project_id,
                                caller_role=caller.role, user_id=user_id, body=body,
                                verification_link=verification_link())
    wake_embedded_scheduler(current_runtime())
    return wrap(updated)


def removeProjectUser(user_id: int) -> dict[str, Any]:  # noqa: N802
    """Delete a user from the project."""
    caller = current_caller()
    accesses.remove_user(db_session(), project_id=caller.project_id, caller_role=caller.role,
                         user_id=user_id)
    return wrap(None)


def retrieveProjectUserMetaData(user_id: int) -> list[dict[str, Any]]:  # noqa: N802
    """The metadata of a user."""
    found = users.get_metadata(db_session(), project_id=current_caller().project_id,
                               user_id=user_id)
    return [wrap(item) for item in found]


def updateProjectUserMetaData(user_id: int, body: list[dict[str, Any]]  # noqa: N802
                              ) -> list[dict[str, Any]]:
    """Replace the metadata of a user."""
    caller = current_caller()
    stored = users.replace_metadata(db_session(), project_id=caller.project_id,
                                    caller_role=caller.role, user_id=user_id, metadata=body)
    return [wrap(item) for item in stored]


def deleteProjectUserMetaData(user_id: int) -> dict[str, Any]:  # noqa: N802
    """Delete every metadata of a user."""
    caller = current_caller()
    users.delete_metadata(db_session(), project_id=caller.project_id, caller_role=caller.role,
                          user_id=user_id)
    return wrap(None)


def retrieveProjectUserAccessRights(user_email: str) -> list[dict[str, Any]]:  # noqa: N802
    """The resource accesses granted to a user beyond their role."""
    found = users.get_user_resources(db_session(), project_id=current_caller().project_id,
                                     email=user_email)
    return [wrap(item) for item in found]


def updateProjectUserResources(user_email: str, body: list[dict[str, Any]]  # noqa: N802
                               ) -> list[dict[str, Any]]:
    """Grant resource accesses to a user."""
    granted = users.grant_user_resources(db_session(), caller=current_caller(), email=user_email,
                                         accesses=body)
    return [wrap(item) for item in granted]


def removeProjectUserResources(user_email: str) -> dict[str, Any]:  # noqa: N802
    """Withdraw every extra resource access of a user."""
    caller = current_caller()
    users.remove_user_resources(db_session(), project_id=caller.project_id,
                                caller_role=caller.role, email=user_email)
    return wrap(None)
