"""Access requests and the user status machine."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from flask import request

from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.admin import accesses
from featurehub.services.admin.scheduler import wake_embedded_scheduler
from featurehub.web import wrap

__all__ = [
    "requestAccess", "requestExternalAccess", "acceptAccessRequest", "denyAccessRequest",
    "activeAccess", "inactiveAccess", "removeAccessRequest", "verifyEmail",
    "retrieveAccessSettings", "updateAccessSetting",
]


def verification_link() -> accesses.VerificationLink:
    """verifyEmail of the caller's project, at the service's public address (else at the
    address this request reached)."""
    caller = current_caller()
    settings = current_runtime().settings
    prefix = "" if settings.direct else f"/{caller.microservice}/api/v1"
    root = (settings.public_url or request.url_root.rstrip("/")) + prefix
    scope = quote(caller.project, safe="")
    return lambda token: f"{root}/accesses/verifyEmail/{quote(token, safe='')}?scope={scope}"


def requestAccess(body: dict[str, Any], scope: str | None = None) -> tuple[None, int]:  # noqa: N802
    """Ask for access to the project named by scope."""
    accesses.request_access(db_session(), project_id=current_caller().project_id, request=body,
                            verification_link=verification_link(),
                            address=request.remote_addr or "unknown")
    wake_embedded_scheduler(current_runtime())
    return None, 201


def requestExternalAccess(body: dict[str, Any]) -> tuple[dict[str, Any], int]:  # noqa: N802
    """Give access at once to a person known elsewhere."""
    caller = current_caller()
    user = accesses.grant_access(db_session(), project_id=caller.project_id,
                                 caller_role=caller.role, request=body)
    wake_embedded_scheduler(current_runtime())
    return wrap(user), 201


def _change(access_id: int, action: str) -> dict[str, Any]:
    caller = current_caller()
    changed = accesses.change_access(db_session(), project_id=caller.project_id,
                                     caller_role=caller.role, user_id=access_id, action=action,
                                     verification_link=verification_link())
    wake_embedded_scheduler(current_runtime())
    return wrap(changed)


def acceptAccessRequest(access_id: int) -> dict[str, Any]:  # noqa: N802
    """WAITING_ACCESS or ACCESS_DENIED -> ACCESS_GRANTED."""
    return _change(access_id, "accept")


def denyAccessRequest(access_id: int) -> dict[str, Any]:  # noqa: N802
    """WAITING_ACCESS -> ACCESS_DENIED."""
    return _change(access_id, "deny")


def activeAccess(access_id: int) -> dict[str, Any]:  # noqa: N802
    """ACCESS_INACTIVE -> ACCESS_GRANTED."""
    return _change(access_id, "active")


def inactiveAccess(access_id: int) -> dict[str, Any]:  # noqa: N802
    """ACCESS_GRANTED -> ACCESS_INACTIVE."""
    return _change(access_id, "inactive")


def removeAccessRequest(access_id: int) -> dict[str, Any]:  # noqa: N802
    """Delete a user, whatever its status."""
    caller = current_caller()
    accesses.remove_user(db_session(), project_id=caller.project_id, caller_role=caller.role,
                         user_id=access_id)
    return wrap(None)


def verifyEmail(token: str, scope: str | None = None) -> dict[str, Any]:  # noqa: N802
    """Mark the email of the user holding this token as verified."""
    accesses.verify_email(db_session(), project_id=current_caller().project_id, token=token)
    return wrap(None)


def retrieveAccessSettings() -> list[dict[str, Any]]:  # noqa: N802
    """The access settings of the project."""
    found = accesses.access_settings(db_session(), project_id=current_caller().project_id)
    return [wrap(item.as_dict()) for item in found]


def updateAccessSetting(name: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    """Set one access setting."""
    caller = current_caller()
    updated = accesses.update_access_setting(
        db_session(), project_id=caller.project_id, caller_role=caller.role, name=name,
        body_name=body["name"], value=body.get("value"))
    return wrap(updated.as_dict())
