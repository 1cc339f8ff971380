"""rs-admin tables: notifications, their recipients (read state and e-mail delivery), the
recipients' delivery settings, the other e-mails the administration sends, the cursors of the
feeds turned into notifications, and the recent public access requests (rate limit)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from featurehub.db.base import Base, UTCDateTime, utcnow

BigId = BigInteger().with_variant(Integer(), "sqlite")


class Notification(Base):
    """A message to users and roles of a project, as it was created."""

    __tablename__ = "admin_notifications"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    level: Mapped[str] = mapped_column(String(8))
    title: Mapped[str] = mapped_column(String(255))
    message: Mapped[str] = mapped_column(Text)
    mime_type: Mapped[str] = mapped_column(String(255), default="text/plain")
    sender: Mapped[str] = mapped_column(String(255))
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    role_recipients: Mapped[list[str]] = mapped_column(JSON, default=list)
    user_recipients: Mapped[list[str]] = mapped_column(JSON, default=list)


class NotificationRecipient(Base):
    """One person a notification reaches (resolved when it is created): their read state,
    and its e-mail delivery to them. Deleting a notification for one person deletes this row
    only; the others keep theirs.

    Delivery claims a row (`claimed_by`, `claimed_at`) with a conditional UPDATE, sends, then
    sets `sent`; a claim older than the lease is taken back (its scheduler died)."""

    __tablename__ = "admin_notification_recipients"
    __table_args__ = (UniqueConstraint("notification_id", "email"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    notification_id: Mapped[int] = mapped_column(
        ForeignKey("admin_notifications.id", ondelete="CASCADE"))
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(8), default="UNREAD")
    sent: Mapped[datetime | None] = mapped_column(UTCDateTime)
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class NotificationSettings(Base):
    """How often one user of a project is e-mailed (no row: IMMEDIATE_ONLY). `last_digest` is
    when their last digest went out; schedulers take a digest by moving it (compare-and-set)."""

    __tablename__ = "admin_notification_settings"
    __table_args__ = (UniqueConstraint("project_id", "email"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(255))
    frequency: Mapped[str] = mapped_column(String(16), default="IMMEDIATE_ONLY")
    days: Mapped[int] = mapped_column(Integer, default=1)
    hours: Mapped[int] = mapped_column(Integer, default=0)
    last_digest: Mapped[datetime | None] = mapped_column(UTCDateTime)


class OutgoingMail(Base):
    """An e-mail that is no notification (nobody reads it in the application): an address to
    verify, a new user announced to the `user_creation_mail_recipients`. One row per address,
    sent by the notification scheduler and claimed the same way as notification e-mails."""

    __tablename__ = "admin_outgoing_mails"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    email: Mapped[str] = mapped_column(String(255))
    subject: Mapped[str] = mapped_column(String(255))
    body: Mapped[str] = mapped_column(Text)
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent: Mapped[datetime | None] = mapped_column(UTCDateTime)
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class FeedCursor(Base):
    """The last entry of a feed (the rs-fem outbox) already turned into notifications."""

    __tablename__ = "admin_feed_cursors"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_id: Mapped[int] = mapped_column(BigInteger, default=0)


class AccessRequestRecord(Base):
    """A public access request that was recorded, with the address it came from: a project
    takes at most `access_requests_per_hour` of them per address (each may create an account
    and send e-mails). Rows older than an hour are deleted by the notification scheduler."""

    __tablename__ = "admin_access_requests"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    address: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


Index("ix_admin_notifications_project", Notification.project_id, Notification.created)
Index("ix_admin_notification_recipients_user", NotificationRecipient.project_id,
      NotificationRecipient.email)
Index("ix_admin_notification_recipients_unsent", NotificationRecipient.sent)
Index("ix_admin_outgoing_mails_unsent", OutgoingMail.sent)
Index("ix_admin_outgoing_mails_address", OutgoingMail.project_id, OutgoingMail.email)
Index("ix_admin_access_requests_address", AccessRequestRecord.project_id,
      AccessRequestRecord.address, AccessRequestRecord.created)
Index("ix_admin_access_requests_created", AccessRequestRecord.created)  # the hourly purge
