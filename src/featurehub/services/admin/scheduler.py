"""The notification scheduler: e-mails notifications to their recipients through SMTP, sends the
administration's other e-mails (`mails.py`: address verifications, new users announced), and
turns the feature manager's override notices into notifications.

- Embedded: `start_embedded_scheduler` (an APP_STARTED hook) runs it in a thread of
  `featurehub serve`. Separate: `featurehub scheduler` runs `run_forever` in its own process.
- Each recipient is e-mailed as their notification settings say: each notification at once
  (IMMEDIATE_ONLY, the default), one digest per period (DAILY: 1 day, WEEKLY: 7 days,
  MONTHLY: 30 days, CUSTOM: `days` days and `hours` hours, counted from the last digest or
  else from the oldest notification waiting), or never (NEVER). The other e-mails go at once.
- Sent once, even by several schedulers: a scheduler claims recipient (or outgoing mail) rows
  with a conditional UPDATE (`claimed_by IS NULL`; concurrent updates of a row are serialised
  by the database and the loser's condition no longer holds) and takes a digest by moving the
  user's `last_digest` (compare-and-set). A failure to send releases the claims: a later tick
  retries. A scheduler that dies between sending and recording sends again once its lease
  expires (at least once).
- Without FEATUREHUB_SMTP_URL notifications stay stored and readable, and the other e-mails
  queued; the scheduler says so once in the log.
- The other e-mails are kept `SENT_MAIL_RETENTION` after they went (to answer "was it sent?"),
  then deleted: nobody reads them in the application, and a verification mail holds a link
  that verifies an address.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from featurehub.db.admin import (
    AccessRequestRecord,
    FeedCursor,
    Notification,
    NotificationRecipient,
    NotificationSettings,
    OutgoingMail,
)
from featurehub.db.base import read_only, utcnow
from featurehub.db.fem import OutboxEntry
from featurehub.db.platform import Project
from featurehub.services.admin.accesses import ACCESS_REQUEST_WINDOW
from featurehub.services.admin.notifications import notify
from featurehub.services.fem.outbox import OVERRIDE_NOTICE
from featurehub.wakeup import Wakeup

log = logging.getLogger(__name__)
EMBEDDED = "notification-scheduler"
OVERRIDES_FEED = "rs-fem-overrides"
DIGESTS = ("DAILY", "WEEKLY", "MONTHLY", "CUSTOM")
SENT_MAIL_RETENTION = timedelta(days=30)
# The tables whose rows are e-mails to send: `id`, `sent`, `claimed_by`, `claimed_at`.
Deliverable = type[NotificationRecipient] | type[OutgoingMail]


def period(frequency: str, days: int, hours: int) -> timedelta:
    if frequency == "DAILY":
        return timedelta(days=1)
    if frequency == "WEEKLY":
        return timedelta(days=7)
    if frequency == "MONTHLY":
        return timedelta(days=30)
    return timedelta(days=days, hours=hours)


# -- SMTP ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SmtpServer:
    """Where mail goes: `smtp://[user:password@]host[:port][?starttls=true]` or `smtps://...`."""

    host: str
    port: int
    tls: bool = False
    starttls: bool = False
    user: str | None = None
    password: str | None = None
    timeout: float = 30.0

    @classmethod
    def from_url(cls, url: str) -> SmtpServer:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"FEATUREHUB_SMTP_URL must be smtp://host[:port] or "
                             f"smtps://host[:port], not '{url}'")
        tls = parts.scheme == "smtps"
        starttls = parse_qs(parts.query).get("starttls", ["false"])[0].lower() in ("1", "true")
        return cls(host=parts.hostname, port=parts.port or (465 if tls else 25), tls=tls,
                   starttls=starttls,
                   user=unquote(parts.username) if parts.username else None,
                   password=unquote(parts.password) if parts.password else None)

    def connect(self) -> smtplib.SMTP:
        if self.tls:
            connection: smtplib.SMTP = smtplib.SMTP_SSL(
                self.host, self.port, timeout=self.timeout,
                context=ssl.create_default_context())
        else:
            connection = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            if self.starttls:
                connection.starttls(context=ssl.create_default_context())
        if self.user:
            connection.login(self.user, self.password or "")
        return connection


# -- messages --------------------------------------------------------------------------------

def _message(sender: str, to: str, subject: str, header: tuple[str, str], content: str,
             subtype: str = "plain") -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message[header[0]] = header[1]
    message.set_content(content, subtype=subtype)
    return message


def single_message(row: Any, sender: str) -> EmailMessage:
    return _message(sender, row.email, f"[{row.project}] {row.level}: {row.title}",
                    ("X-Featurehub-Notification", str(row.notification_id)), row.message,
                    "html" if row.mime_type.lower() == "text/html" else "plain")


def outgoing_message(row: Any, sender: str) -> EmailMessage:
    return _message(sender, row.email, f"[{row.project}] {row.subject}",
                    ("X-Featurehub-Mail", str(row.id)), row.body)


def digest_message(rows: Sequence[Any], sender: str) -> EmailMessage:
    first = rows[0]
    parts = [f"{row.created.isoformat()} {row.level}: {row.title} (from {row.sender})\n\n"
             f"{row.message}\n" for row in rows]
    return _message(sender, first.email, f"[{first.project}] {len(rows)} notification(s)",
                    ("X-Featurehub-Notification",
                     ",".join(str(row.notification_id) for row in rows)),
                    ("\n" + "-" * 72 + "\n").join(parts))


# -- the scheduler ---------------------------------------------------------------------------

def _purge(session: Session, entity: Any, expired: Any) -> int:
    """Delete the rows of `entity` matching `expired` (looked for first: most rounds find none,
    and on SQLite a delete would take the writer lock for nothing)."""
    with read_only(session):
        if session.scalar(select(entity.id).where(expired).limit(1)) is None:
            return 0
    deleted = session.execute(delete(entity).where(expired)
                              .execution_options(synchronize_session=False)).rowcount or 0
    session.commit()
    return deleted


def purge_sent_mails(session: Session, *, before: datetime) -> int:
    """Delete the other e-mails sent before `before`."""
    return _purge(session, OutgoingMail, OutgoingMail.sent < before)


def purge_access_request_records(session: Session, *, now: datetime) -> int:
    """Forget the public access requests older than the window of their rate limit."""
    return _purge(session, AccessRequestRecord,
                  AccessRequestRecord.created <= now - ACCESS_REQUEST_WINDOW)


@dataclass(frozen=True)
class TickReport:
    notified: int = 0  # feed entries turned into notifications
    sent: int = 0  # e-mails sent (a digest counts once)


class NotificationScheduler:
    """One scheduler: `tick` does one round; `start`/`run_forever` repeat it."""

    def __init__(self, sessions: Any, *, smtp_url: str | None, sender: str,
                 poll_seconds: float = 10.0, lease_seconds: float = 300.0,
                 batch_size: int = 500) -> None:
        self.sessions = sessions
        self.sender = sender
        self.poll_seconds = poll_seconds
        self.lease = timedelta(seconds=lease_seconds)
        self.batch_size = batch_size
        self.smtp_url = smtp_url
        self._told_unconfigured = False
        self._stopping = False  # a plain flag: set by signal handlers
        self._wake = Wakeup()
        self._thread: threading.Thread | None = None

    def server(self) -> SmtpServer | None:
        if not self.smtp_url:
            if not self._told_unconfigured:
                log.warning("FEATUREHUB_SMTP_URL is not set: notifications are stored and "
                            "readable but not e-mailed; other e-mails (address verifications, "
                            "new users) stay queued")
                self._told_unconfigured = True
            return None
        try:
            return SmtpServer.from_url(self.smtp_url)
        except ValueError as error:
            if not self._told_unconfigured:
                log.error("%s: notifications and other e-mails are not sent", error)
                self._told_unconfigured = True
            return None

    def tick(self, now: datetime | None = None) -> TickReport:
        """One round: new override notices, then the e-mails that are due at `now`."""
        now = now or utcnow()
        with self.sessions() as session:
            notified = consume_override_notices(session, batch_size=self.batch_size)
            purge_sent_mails(session, before=now - SENT_MAIL_RETENTION)
            purge_access_request_records(session, now=now)
        server = self.server()
        if server is None:
            return TickReport(notified=notified)
        with self.sessions() as session:
            release_expired(session, before=now - self.lease)
        sent = (self._send_outgoing(server, now) + self._send_immediate(server, now)
                + self._send_digests(server, now))
        return TickReport(notified=notified, sent=sent)

    # the administration's other e-mails

    def _send_outgoing(self, server: SmtpServer, now: datetime) -> int:
        token = uuid.uuid4().hex
        with self.sessions() as session:
            candidates = list(session.scalars(
                select(OutgoingMail.id)
                .where(OutgoingMail.sent.is_(None), OutgoingMail.claimed_by.is_(None))
                .order_by(OutgoingMail.id).limit(self.batch_size)))
            if not candidates:
                return 0
            claimed = claim(session, token=token, now=now,
                            condition=OutgoingMail.id.in_(candidates), table=OutgoingMail)
        if not claimed:
            return 0
        with self.sessions() as session:
            rows = list(session.execute(
                select(OutgoingMail.id, OutgoingMail.email, OutgoingMail.subject,
                       OutgoingMail.body, Project.name.label("project"))
                .join(Project, Project.id == OutgoingMail.project_id)
                .where(OutgoingMail.claimed_by == token).order_by(OutgoingMail.id)).all())
        return self._deliver(server, [([row], outgoing_message(row, self.sender))
                                      for row in rows], token=token, now=now, table=OutgoingMail)

    # immediate

    def _send_immediate(self, server: SmtpServer, now: datetime) -> int:
        token = uuid.uuid4().hex
        with self.sessions() as session:
            candidates = list(session.scalars(
                select(NotificationRecipient.id)
                .outerjoin(NotificationSettings, and_(
                    NotificationSettings.project_id == NotificationRecipient.project_id,
                    NotificationSettings.email == NotificationRecipient.email))
                .where(NotificationRecipient.sent.is_(None),
                       NotificationRecipient.claimed_by.is_(None),
                       or_(NotificationSettings.id.is_(None),
                           NotificationSettings.frequency == "IMMEDIATE_ONLY"))
                .order_by(NotificationRecipient.id).limit(self.batch_size)))
            if not candidates:
                return 0
            claimed = claim(session, token=token, now=now,
                            condition=NotificationRecipient.id.in_(candidates))
        if not claimed:
            return 0
        rows = self._claimed_rows(token)
        return self._deliver(server, [([row], single_message(row, self.sender)) for row in rows],
                             token=token, now=now)

    # digests

    def _send_digests(self, server: SmtpServer, now: datetime) -> int:
        with self.sessions() as session:
            waiting = session.execute(
                select(NotificationSettings.id, NotificationSettings.frequency,
                       NotificationSettings.days, NotificationSettings.hours,
                       NotificationSettings.last_digest, func.min(Notification.created))
                .join(NotificationRecipient, and_(
                    NotificationRecipient.project_id == NotificationSettings.project_id,
                    NotificationRecipient.email == NotificationSettings.email))
                .join(Notification, Notification.id == NotificationRecipient.notification_id)
                .where(NotificationSettings.frequency.in_(DIGESTS),
                       NotificationRecipient.sent.is_(None),
                       NotificationRecipient.claimed_by.is_(None))
                .group_by(NotificationSettings.id, NotificationSettings.frequency,
                          NotificationSettings.days, NotificationSettings.hours,
                          NotificationSettings.last_digest)).all()
        sent = 0
        for settings_id, frequency, days, hours, last_digest, oldest in waiting:
            if now >= (last_digest or oldest) + period(frequency, days, hours):
                sent += self._send_digest(server, settings_id, last_digest, now)
        return sent

    def _send_digest(self, server: SmtpServer, settings_id: int, last_digest: datetime | None,
                     now: datetime) -> int:
        token = uuid.uuid4().hex
        with self.sessions() as session:
            user = session.get(NotificationSettings, settings_id)
            if user is None:
                return 0
            same = (NotificationSettings.last_digest == last_digest if last_digest is not None
                    else NotificationSettings.last_digest.is_(None))
            taken = session.execute(update(NotificationSettings).where(
                NotificationSettings.id == settings_id, same).values(last_digest=now)
                .execution_options(synchronize_session=False)).rowcount
            if taken != 1:  # another scheduler took this digest
                session.rollback()
                return 0
            claimed = claim(session, token=token, now=now, condition=and_(
                NotificationRecipient.project_id == user.project_id,
                NotificationRecipient.email == user.email))
        if not claimed:
            return 0
        rows = self._claimed_rows(token)
        sent = self._deliver(server, [(rows, digest_message(rows, self.sender))], token=token,
                             now=now)
        if not sent:
            with self.sessions() as session:  # the digest is due again at the next tick
                session.execute(update(NotificationSettings).where(
                    NotificationSettings.id == settings_id,
                    NotificationSettings.last_digest == now).values(last_digest=last_digest)
                    .execution_options(synchronize_session=False))
                session.commit()
        return sent

    # shared

    def _claimed_rows(self, token: str) -> list[Any]:
        with self.sessions() as session:
            return list(session.execute(
                select(NotificationRecipient.id, NotificationRecipient.email,
                       NotificationRecipient.notification_id, Notification.level,
                       Notification.title, Notification.message, Notification.mime_type,
                       Notification.sender, Notification.created,
                       Project.name.label("project"))
                .join(Notification, Notification.id == NotificationRecipient.notification_id)
                .join(Project, Project.id == NotificationRecipient.project_id)
                .where(NotificationRecipient.claimed_by == token)
                .order_by(Notification.created, Notification.id)).all())

    def _deliver(self, server: SmtpServer, messages: Sequence[tuple[Sequence[Any], EmailMessage]],
                 *, token: str, now: datetime, table: Deliverable = NotificationRecipient) -> int:
        """Send the messages on one connection; record those sent, release the others."""
        delivered: list[int] = []
        sent = 0
        try:
            with server.connect() as connection:
                for rows, message in messages:
                    try:
                        connection.send_message(message)
                    except (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused,
                            smtplib.SMTPDataError, smtplib.SMTPNotSupportedError) as error:
                        # (not supported: a non-ASCII address to a server without SMTPUTF8;
                        # the other messages still go)
                        log.warning("notification e-mail to %s refused (%s); retried later",
                                    message["To"], error)
                        continue
                    delivered.extend(row.id for row in rows)
                    sent += 1
        except (OSError, smtplib.SMTPException) as error:
            log.warning("notification e-mail failed (%s); %d of %d sent, the rest is retried "
                        "later", error, sent, len(messages))
        with self.sessions() as session:
            if delivered:
                session.execute(update(table).where(table.id.in_(delivered)).values(sent=now)
                                .execution_options(synchronize_session=False))
            session.execute(update(table).where(
                table.claimed_by == token, table.sent.is_(None),
            ).values(claimed_by=None, claimed_at=None)
                .execution_options(synchronize_session=False))
            session.commit()
        return sent

    # the loop

    def run_forever(self) -> None:
        while not self._stopping:
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - the scheduler outlives a failing round
                log.exception("notification scheduler round failed")
            self._wake.wait(self.poll_seconds)
            self._wake.clear()

    def wake(self) -> None:
        """Start the next round now (a notification was created in this process)."""
        self._wake.set()

    def start(self) -> NotificationScheduler:
        self._thread = threading.Thread(target=self.run_forever, name=EMBEDDED, daemon=True)
        self._thread.start()
        return self

    def stop_soon(self) -> None:
        self._stopping = True
        self._wake.set()

    def stop(self) -> None:
        self.stop_soon()
        if self._thread is not None:
            self._thread.join(timeout=30)


def claim(session: Session, *, token: str, now: datetime, condition: Any,
          table: Deliverable = NotificationRecipient) -> int:
    """Claim the unsent, unclaimed rows of `table` matching `condition`, and commit."""
    claimed = session.execute(update(table).where(
        condition, table.sent.is_(None), table.claimed_by.is_(None),
    ).values(claimed_by=token, claimed_at=now)
        .execution_options(synchronize_session=False)).rowcount or 0
    session.commit()
    return claimed


def release_expired(session: Session, *, before: datetime) -> None:
    """Claims of a scheduler that stopped before recording its sending go back."""
    for table in (NotificationRecipient, OutgoingMail):
        session.execute(update(table).where(
            table.sent.is_(None), table.claimed_at < before,
        ).values(claimed_by=None, claimed_at=None)
            .execution_options(synchronize_session=False))
    session.commit()


def consume_override_notices(session: Session, *, batch_size: int = 500) -> int:
    """Turn the rs-fem outbox's OVERRIDE_NOTICE entries into notifications to ADMIN (and so
    the roles above it and PROJECT_ADMIN), each exactly once: the notifications and the
    feed's cursor are committed together, the cursor row locked meanwhile (PostgreSQL; SQLite
    writers are serialised). The outbox commits its ids in increasing order, so every entry
    up to the highest id seen is there; the others (events, feature notifications, most of
    the outbox) are passed over without being read."""
    cursor = session.scalars(select(FeedCursor).where(FeedCursor.name == OVERRIDES_FEED)
                             .with_for_update()).one()
    top = session.scalar(select(func.max(OutboxEntry.id)).where(
        OutboxEntry.id > cursor.last_id))
    if top is None:
        session.commit()
        return 0
    entries = session.execute(
        select(OutboxEntry.id, OutboxEntry.project_id, OutboxEntry.body)
        .where(OutboxEntry.id > cursor.last_id, OutboxEntry.id <= top,
               OutboxEntry.kind == OVERRIDE_NOTICE)
        .order_by(OutboxEntry.id).limit(batch_size)).all()
    for entry in entries:
        body = entry.body or {}
        notify(session, project_id=entry.project_id, level="INFO",
               title="Product version overridden",
               message=body.get("message") or f"Version {body.get('urn')} was overridden.",
               sender="rs-fem", role_recipients=["ADMIN"])
    cursor.last_id = entries[-1].id if len(entries) == batch_size else top
    session.commit()
    return len(entries)


def start_embedded_scheduler(runtime: Any) -> None:
    """APP_STARTED hook: the notification scheduler of `featurehub serve`, in a thread."""
    settings = runtime.settings
    runtime.workers[EMBEDDED] = NotificationScheduler(
        runtime.sessions, smtp_url=settings.smtp_url, sender=settings.smtp_from).start()


def wake_embedded_scheduler(runtime: Any) -> None:
    scheduler = runtime.workers.get(EMBEDDED)
    if scheduler is not None:
        scheduler.wake()
