"""The administration's e-mails that are no notifications (nobody reads them in the
application): queued in the unit of work that decides them, sent once by the notification
scheduler (`scheduler.py`) through FEATUREHUB_SMTP_URL; without it they stay queued."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete
from sqlalchemy.orm import Session

from featurehub.db.admin import OutgoingMail
from featurehub.db.base import utcnow

EMAIL_VERIFICATION = "EMAIL_VERIFICATION"
USER_CREATED = "USER_CREATED"


def queue(session: Session, *, project_id: int, kind: str, addresses: Iterable[str],
          subject: str, body: str) -> None:
    """One e-mail to each address; flushed, not committed."""
    now = utcnow()
    session.add_all(OutgoingMail(project_id=project_id, kind=kind, email=address,
                                 subject=subject, body=body, created=now)
                    for address in dict.fromkeys(addresses))
    session.flush()


def forget_verification(session: Session, *, project_id: int, email: str) -> None:
    """The user leaves the project: the link of their verification e-mail would lead nowhere,
    so it is not sent (nor kept). Not committed."""
    session.execute(delete(OutgoingMail).where(
        OutgoingMail.project_id == project_id, OutgoingMail.email == email,
        OutgoingMail.kind == EMAIL_VERIFICATION).execution_options(synchronize_session=False))
