"""The outbox of request events and feature notifications."""

from __future__ import annotations

from typing import Any

from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.fem import outbox


def list_events(after: int = 0, limit: int = 100, kind: str | None = None) -> dict[str, Any]:
    """Entries after the cursor, oldest first."""
    entries, cursor = outbox.list_entries(db_session(), project_id=current_caller().project_id,
                                          after=after, limit=limit, kind=kind)
    return {"content": entries, "next": cursor}
