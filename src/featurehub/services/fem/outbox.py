"""The outbox: request events and feature notifications, written in the transaction that
produces them and read in id order (by `GET /events` now, by the AMQP publisher later).

On PostgreSQL, writers take a transaction-scoped advisory lock before inserting, so that ids are
committed in increasing order and a reader that remembers the last id it saw misses nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from featurehub.db.fem import OutboxEntry, insert_rows

OUTBOX_LOCK = 7_246_101
EVENT, NOTIFICATION, OVERRIDE_NOTICE = "EVENT", "NOTIFICATION", "OVERRIDE_NOTICE"


def record(session: Session, entries: Sequence[dict[str, Any]]) -> None:
    """Insert entries `{project_id, kind, created, body}` (one statement)."""
    if not entries:
        return
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": OUTBOX_LOCK})
    insert_rows(session, OutboxEntry.__table__, list(entries))


def request_event(*, project_id: int, created: datetime, type_: str, request_id: str,
                  request_owner: str, provider_id: str | None, urn: str | None, state: str,
                  errors: Sequence[str] | None) -> dict[str, Any]:
    return {"project_id": project_id, "kind": EVENT, "created": created, "body": {
        "type": type_, "requestId": request_id, "requestOwner": request_owner, "id": provider_id,
        "urn": urn, "state": state, "errors": list(errors or [])}}


def notification(*, project_id: int, created: datetime, action: str, feature: dict[str, Any],
                 session_owner: str | None, session_name: str | None,
                 changed: Sequence[str]) -> dict[str, Any]:
    return {"project_id": project_id, "kind": NOTIFICATION, "created": created, "body": {
        "action": action, "payload": feature, "metadata": {
            "session": session_name, "sessionOwner": session_owner,
            "changedAttributes": list(changed)}}}


def override_notice(*, project_id: int, created: datetime, replaced: str, replaced_by: str,
                    provider_id: str) -> dict[str, Any]:
    """Hook point for rs-admin: administrators are told that a version was overridden (the
    administration service turns OVERRIDE_NOTICE entries into notifications)."""
    return {"project_id": project_id, "kind": OVERRIDE_NOTICE, "created": created, "body": {
        "urn": replaced, "replacedBy": replaced_by, "id": provider_id,
        "message": f"Version {replaced} of product '{provider_id}' was overridden by "
                   f"{replaced_by} and deleted."}}


def list_entries(session: Session, *, project_id: int, after: int, limit: int,
                 kind: str | None) -> tuple[list[dict[str, Any]], int]:
    query = select(OutboxEntry).where(OutboxEntry.project_id == project_id,
                                      OutboxEntry.id > after)
    if kind:
        query = query.where(OutboxEntry.kind == kind)
    rows = list(session.scalars(query.order_by(OutboxEntry.id).limit(limit)))
    entries = [{"id": row.id, "kind": row.kind, "date": row.created.isoformat(),
                "body": row.body} for row in rows]
    return entries, rows[-1].id if rows else after
