"""Notifications of the logged user, their creation, and the user's delivery settings."""

from __future__ import annotations

from typing import Any

from featurehub.api.rs_fem.bodies import optional_json
from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.admin import notifications
from featurehub.services.admin.notifications import READ, UNREAD, Reader
from featurehub.services.admin.scheduler import wake_embedded_scheduler
from featurehub.web import PageRequest, paged_result, wrap

__all__ = [
    "retrieveNotifications", "createNotification", "deleteNotifications",
    "retrieveNotificationSettings", "updateNotificationSettings", "retrieveNotificationSummary",
    "retrieveNotification", "deleteNotification", "setNotificationRead",
    "setNotificationUnRead",
]


def _reader() -> Reader:
    caller = current_caller()
    return Reader(caller.project_id, caller.email)


def retrieveNotifications(body: Any = None, page: int = 0,  # noqa: N802
                          size: int = 20, sort: list[str] | None = None) -> dict[str, Any]:
    """A page of the caller's notifications matching the filter."""
    request = PageRequest.of(page, size, sort)
    items, total = notifications.list_notifications(db_session(), reader=_reader(),
                                                    search=optional_json(body), page=request)
    return paged_result(items, total, request)


def createNotification(body: dict[str, Any]) -> tuple[dict[str, Any], int]:  # noqa: N802
    """Create a notification for users and roles."""
    caller = current_caller()
    created = notifications.create_notification(
        db_session(), project_id=caller.project_id, body=body,
        caller=caller.email or caller.client_id or "")
    wake_embedded_scheduler(current_runtime())
    return wrap(created), 201


def deleteNotifications(body: Any = None) -> dict[str, Any]:  # noqa: N802
    """Delete the caller's notifications matching the filter."""
    notifications.delete_selection(db_session(), reader=_reader(), search=optional_json(body))
    return wrap(None)


def retrieveNotificationSettings() -> dict[str, Any]:  # noqa: N802
    """The caller's notification settings."""
    return wrap(notifications.get_settings(db_session(), reader=_reader()))


def updateNotificationSettings(body: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    """Change the caller's notification settings."""
    return wrap(notifications.update_settings(db_session(), reader=_reader(), body=body))


def retrieveNotificationSummary() -> dict[str, int]:  # noqa: N802
    """How many of the caller's notifications are unread and read."""
    return notifications.summary(db_session(), reader=_reader())


def retrieveNotification(notification_id: int) -> dict[str, Any]:  # noqa: N802
    """One of the caller's notifications."""
    return wrap(notifications.get_notification(db_session(), reader=_reader(),
                                               notification_id=notification_id))


def deleteNotification(notification_id: int) -> dict[str, Any]:  # noqa: N802
    """Remove a notification from the caller's list."""
    notifications.delete_notification(db_session(), reader=_reader(),
                                      notification_id=notification_id)
    return wrap(None)


def setNotificationRead(notification_id: int) -> dict[str, Any]:  # noqa: N802
    """Mark one of the caller's notifications read."""
    return wrap(notifications.mark(db_session(), reader=_reader(),
                                   notification_id=notification_id, status=READ))


def setNotificationUnRead(notification_id: int) -> dict[str, Any]:  # noqa: N802
    """Mark one of the caller's notifications unread."""
    return wrap(notifications.mark(db_session(), reader=_reader(),
                                   notification_id=notification_id, status=UNREAD))
