"""Notifications: raised by administrators and by the other services (`notify`), read by the
people they reach, and e-mailed to them by the scheduler (`services/admin/scheduler.py`).

Recipients are resolved when a notification is created: the users named, and every user
whose role is one of the roles named, a role above it (custom roles included: any role whose
parent chain holds it), PROJECT_ADMIN or INSTANCE_ADMIN. Each one gets their own row, so that
reading or deleting a notification changes it for that person only. A user who joins a role
later does not see the notifications sent to it before; a user who leaves the project takes
their copies and delivery settings along (`forget_user`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    and_,
    cast,
    delete,
    func,
    not_,
    or_,
    select,
    true,
)
from sqlalchemy.orm import Session

from featurehub.db.admin import Notification, NotificationRecipient, NotificationSettings
from featurehub.db.base import utcnow
from featurehub.db.platform import ALWAYS_GRANTED, ProjectUser
from featurehub.errors import NotFound, Unprocessable
from featurehub.services.admin import hierarchy
from featurehub.services.fem.requests import date_filter
from featurehub.web import PageRequest, order_by

LEVELS = ("INFO", "WARNING", "ERROR", "FATAL")
READ, UNREAD = "READ", "UNREAD"
DEFAULT_SETTINGS = {"frequency": "IMMEDIATE_ONLY", "days": 1, "hours": 0}


# -- creation ------------------------------------------------------------------------------

def roles_reached(session: Session, *, project_id: int, role_names: Iterable[str]) -> set[int]:
    """Ids of the roles a notification to `role_names` reaches: each role, every role whose
    parent chain holds it, and the roles that are always granted."""
    roles = hierarchy.project_roles(session, project_id)
    for name in role_names:
        if name not in roles:
            raise Unprocessable(f"Role '{name}' does not exist in this project.")
    targets = set(role_names)
    if not targets:
        return set()
    return {role.id for role in roles.values()
            if role.name in ALWAYS_GRANTED
            or any(link.name in targets for link in hierarchy.chain(roles, role.name))}


def notify(session: Session, *, project_id: int, level: str, title: str, message: str,
           sender: str, role_recipients: Sequence[str] = (),
           user_recipients: Sequence[str] = (), mime_type: str = "text/plain") -> int:
    """Store a notification for its recipients (to be e-mailed by the scheduler); its id.
    Flushes but does not commit: the notification is part of the caller's unit of work."""
    if level not in LEVELS:
        raise Unprocessable(f"Unknown level '{level}'; one of {', '.join(LEVELS)}.")
    roles = list(dict.fromkeys(role_recipients))
    users = list(dict.fromkeys(user_recipients))
    emails: set[str] = set()
    if users:
        known = set(session.scalars(select(ProjectUser.email).where(
            ProjectUser.project_id == project_id, ProjectUser.email.in_(users))))
        unknown = [email for email in users if email not in known]
        if unknown:
            raise Unprocessable(f"Not users of this project: {', '.join(unknown)}.")
        emails.update(users)
    role_ids = roles_reached(session, project_id=project_id, role_names=roles)
    if role_ids:
        emails.update(session.scalars(select(ProjectUser.email).where(
            ProjectUser.project_id == project_id, ProjectUser.role_id.in_(role_ids),
            ProjectUser.status == "ACCESS_GRANTED")))
    notification = Notification(project_id=project_id, level=level, title=title,
                                message=message, mime_type=mime_type or "text/plain",
                                sender=sender, created=utcnow(), role_recipients=roles,
                                user_recipients=users)
    session.add(notification)
    session.flush()
    session.add_all(NotificationRecipient(notification_id=notification.id,
                                          project_id=project_id, email=email, status=UNREAD)
                    for email in sorted(emails))
    session.flush()
    return notification.id


def create_notification(session: Session, *, project_id: int, body: Mapping[str, Any],
                        caller: str) -> dict[str, Any]:
    """`POST /notifications/create`: the notification as its creator sees it."""
    roles, users = body.get("roleRecipients") or [], body.get("projectUserRecipients") or []
    if not roles and not users:
        raise Unprocessable("A notification needs at least one role or user recipient.")
    notification_id = notify(
        session, project_id=project_id, level=body["level"], title=body["title"],
        message=body["message"], sender=body.get("sender") or caller,
        role_recipients=roles, user_recipients=users,
        mime_type=body.get("mimeType") or "text/plain")
    session.commit()
    notification = session.get(Notification, notification_id)
    assert notification is not None
    status = session.scalar(select(NotificationRecipient.status).where(
        NotificationRecipient.notification_id == notification_id,
        NotificationRecipient.email == caller))
    return as_dict(notification, status or UNREAD)


def as_dict(notification: Notification, status: str) -> dict[str, Any]:
    return {
        "id": notification.id, "date": notification.created.isoformat(),
        "level": notification.level, "title": notification.title,
        "message": notification.message, "mimeType": notification.mime_type,
        "sender": notification.sender, "status": status,
        "roleRecipients": list(notification.role_recipients or []),
        "projectUserRecipients": list(notification.user_recipients or []),
    }


# -- the caller's own notifications ----------------------------------------------------------

@dataclass(frozen=True)
class Reader:
    project_id: int
    email: str | None  # machine clients have no e-mail: nothing is addressed to them


SORTABLE: dict[str, ColumnElement[Any]] = {
    "id": Notification.id, "date": Notification.created, "level": Notification.level,
    "title": Notification.title, "sender": Notification.sender,
    "status": NotificationRecipient.status,
}


def _mine(reader: Reader) -> Select[Any]:
    return (select(Notification, NotificationRecipient.status)
            .join(NotificationRecipient,
                  NotificationRecipient.notification_id == Notification.id)
            .where(NotificationRecipient.project_id == reader.project_id,
                   NotificationRecipient.email == (reader.email or "")))


def _matches(column: ColumnElement[Any], value: str, match_mode: str,
             ignore_case: bool) -> ColumnElement[bool]:
    """One value of a restriction, compared the same way (case included) on every backend:
    SQLite's LIKE ignores case, so substrings are compared instead."""
    target: ColumnElement[Any] = func.lower(column) if ignore_case else column
    wanted = value.lower() if ignore_case else value
    if match_mode == "STRICT":
        return target == wanted
    if wanted == "":
        return true()  # every text starts with, ends with and contains ""
    if match_mode == "STARTS_WITH":
        return func.substr(target, 1, len(wanted)) == wanted
    if match_mode == "ENDS_WITH":
        return func.substr(target, func.length(target) - len(wanted) + 1) == wanted
    return func.replace(target, wanted, "") != target  # CONTAINS


def restriction(column: ColumnElement[Any], spec: Mapping[str, Any] | None,
                *, textual: ColumnElement[Any] | None = None) -> ColumnElement[bool] | None:
    """The condition of a ValuesRestriction `{values, mode, matchMode, ignoreCase}` (none when
    it has no values). Non-text columns match STRICT by value, other modes on their text."""
    if not spec or not spec.get("values"):
        return None
    match_mode = spec.get("matchMode") or "STRICT"
    ignore_case = bool(spec.get("ignoreCase"))
    values = spec["values"]
    if textual is not None and match_mode == "STRICT":
        matched: ColumnElement[bool] = column.in_(values)
    else:
        target = textual if textual is not None else column
        matched = or_(*(_matches(target, str(value), match_mode, ignore_case)
                        for value in values))
    return not_(matched) if spec.get("mode") == "EXCLUDE" else matched


def _filtered(reader: Reader, search: Mapping[str, Any]) -> Select[Any]:
    query = _mine(reader)
    conditions = [
        restriction(Notification.id, search.get("ids"),
                    textual=cast(Notification.id, String)),
        restriction(Notification.level, search.get("levels")),
        restriction(Notification.sender, search.get("senders")),
        restriction(NotificationRecipient.status, search.get("status")),
    ]
    dates = search.get("dates") or {}
    after = date_filter(dates.get("after"), "dates.after")
    if after is not None:
        conditions.append(Notification.created >= after)
    before = date_filter(dates.get("before"), "dates.before")
    if before is not None:
        conditions.append(Notification.created <= before)
    found = [condition for condition in conditions if condition is not None]
    return query.where(and_(*found)) if found else query


def list_notifications(session: Session, *, reader: Reader, search: Mapping[str, Any],
                       page: PageRequest) -> tuple[list[dict[str, Any]], int]:
    """A page of the reader's notifications matching the filter, newest first by default."""
    query = _filtered(reader, search).order_by(
        *order_by(page, SORTABLE, default=(("date", False),)), Notification.id.desc())
    total = session.scalar(select(func.count()).select_from(
        query.order_by(None).subquery())) or 0
    rows = session.execute(query.offset(page.offset).limit(page.size)).all()
    return [as_dict(notification, status) for notification, status in rows], total


def _recipient(session: Session, reader: Reader, notification_id: int) -> NotificationRecipient:
    row = session.scalars(select(NotificationRecipient).where(
        NotificationRecipient.notification_id == notification_id,
        NotificationRecipient.project_id == reader.project_id,
        NotificationRecipient.email == (reader.email or ""))).first()
    if row is None:
        raise NotFound(f"Notification {notification_id} does not exist.")
    return row


def get_notification(session: Session, *, reader: Reader, notification_id: int
                     ) -> dict[str, Any]:
    row = _recipient(session, reader, notification_id)
    notification = session.get(Notification, notification_id)
    assert notification is not None
    return as_dict(notification, row.status)


def mark(session: Session, *, reader: Reader, notification_id: int, status: str
         ) -> dict[str, Any]:
    """Mark the reader's copy READ or UNREAD; other recipients keep their own state."""
    row = _recipient(session, reader, notification_id)
    row.status = status
    session.commit()
    return get_notification(session, reader=reader, notification_id=notification_id)


def delete_notification(session: Session, *, reader: Reader, notification_id: int) -> None:
    """Remove the notification from the reader's list (the other recipients keep it)."""
    row = _recipient(session, reader, notification_id)
    session.delete(row)
    session.flush()
    _drop_orphans(session, [notification_id])
    session.commit()


def delete_selection(session: Session, *, reader: Reader, search: Mapping[str, Any]) -> int:
    """Remove every notification of the reader matching the filter; how many."""
    ids = list(session.scalars(_filtered(reader, search).with_only_columns(Notification.id)))
    if ids:
        session.execute(delete(NotificationRecipient).where(
            NotificationRecipient.notification_id.in_(ids),
            NotificationRecipient.project_id == reader.project_id,
            NotificationRecipient.email == (reader.email or "")))
        _drop_orphans(session, ids)
    session.commit()
    return len(ids)


def forget_user(session: Session, *, project_id: int, email: str) -> None:
    """A user leaving the project: their copies of its notifications (read or not, e-mailed or
    not) and their delivery settings go; the other recipients keep theirs, and a notification
    nobody else holds goes. Does not commit: part of the removal's unit of work."""
    mine = and_(NotificationRecipient.project_id == project_id,
                NotificationRecipient.email == email)
    held_by_others = select(NotificationRecipient.id).where(
        NotificationRecipient.notification_id == Notification.id, not_(mine)).exists()
    session.execute(delete(Notification).where(
        Notification.id.in_(select(NotificationRecipient.notification_id).where(mine)),
        ~held_by_others).execution_options(synchronize_session=False))
    session.execute(delete(NotificationRecipient).where(mine)
                    .execution_options(synchronize_session=False))
    session.execute(delete(NotificationSettings).where(
        NotificationSettings.project_id == project_id, NotificationSettings.email == email)
        .execution_options(synchronize_session=False))


def _drop_orphans(session: Session, ids: Sequence[int]) -> None:
    """A notification nobody holds anymore goes."""
    still_held = select(NotificationRecipient.id).where(
        NotificationRecipient.notification_id == Notification.id).exists()
    session.execute(delete(Notification).where(Notification.id.in_(ids), ~still_held)
                    .execution_options(synchronize_session=False))


def summary(session: Session, *, reader: Reader) -> dict[str, int]:
    counts = dict(session.execute(
        select(NotificationRecipient.status, func.count())
        .where(NotificationRecipient.project_id == reader.project_id,
               NotificationRecipient.email == (reader.email or ""))
        .group_by(NotificationRecipient.status)).tuples().all())
    return {"unreads": counts.get(UNREAD, 0), "reads": counts.get(READ, 0)}


# -- delivery settings -----------------------------------------------------------------------

def get_settings(session: Session, *, reader: Reader) -> dict[str, Any]:
    row = _settings_row(session, reader)
    if row is None:
        return dict(DEFAULT_SETTINGS)
    return {"frequency": row.frequency, "days": row.days, "hours": row.hours}


def update_settings(session: Session, *, reader: Reader, body: Mapping[str, Any]
                    ) -> dict[str, Any]:
    """Change how often the reader is e-mailed. CUSTOM sends a digest every `days` days and
    `hours` hours, so that period may not be zero."""
    if reader.email is None:
        raise Unprocessable("Only users have notification settings.")
    current = get_settings(session, reader=reader)
    wanted = {key: body[key] if body.get(key) is not None else current[key]
              for key in DEFAULT_SETTINGS}
    if wanted["frequency"] == "CUSTOM" and wanted["days"] * 24 + wanted["hours"] <= 0:
        raise Unprocessable("A CUSTOM frequency needs a period: days or hours above 0.")
    row = _settings_row(session, reader)
    if row is None:
        row = NotificationSettings(project_id=reader.project_id, email=reader.email)
        session.add(row)
    row.frequency, row.days, row.hours = wanted["frequency"], wanted["days"], wanted["hours"]
    session.commit()
    return wanted


def _settings_row(session: Session, reader: Reader) -> NotificationSettings | None:
    return session.scalars(select(NotificationSettings).where(
        NotificationSettings.project_id == reader.project_id,
        NotificationSettings.email == (reader.email or ""))).first()

