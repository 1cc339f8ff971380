"""Feature manager tables (rs-fem): requests (the durable queue), products and their versions,
data models, storage locations, and the outbox of events and notifications."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from featurehub.db.base import Base, UTCDateTime, utcnow

# SQLite gives autoincrement only to an INTEGER PRIMARY KEY (its rowid); both are 64-bit there.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class JSONText(TypeDecorator[Any]):
    """JSON kept as text, (de)serialised with orjson: the same on every backend, and several
    times faster than the stdlib on the ingest path."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: object) -> str | None:
        if value is None:
            return None
        if isinstance(value, RawJSON):
            return value.text
        return orjson.dumps(value).decode()

    def process_result_value(self, value: str | None, dialect: object) -> Any:
        return None if value is None else orjson.loads(value)


class RawJSON:
    """A value serialised already (the ingest path serialises each feature once)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class DataModel(Base):
    """A named JSON Schema (draft 2020-12) validating the `properties` of a project's features."""

    __tablename__ = "fem_models"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    description: Mapped[str | None] = mapped_column(String(1024))
    schema: Mapped[Any] = mapped_column(JSONText)
    # Bumped on every change: compiled validators are cached per (project, name, revision).
    revision: Mapped[int] = mapped_column(Integer, default=1)
    updated: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class StorageLocation(Base):
    """Where files of a project are stored, and by which plugin."""

    __tablename__ = "fem_storages"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    plugin: Mapped[str] = mapped_column(String(32))
    configuration: Mapped[Any] = mapped_column(JSONText)


class FeatureRequest(Base):
    """A granted (or denied) creation or patch of one product: the durable work queue."""

    __tablename__ = "fem_requests"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    request_id: Mapped[str] = mapped_column(String(36), unique=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(16))
    state: Mapped[str] = mapped_column(String(16))
    step: Mapped[str] = mapped_column(String(32))
    # 0 HIGH, 1 NORMAL, 2 LOW: ascending order is scheduling order.
    priority: Mapped[int] = mapped_column(SmallInteger, default=1)
    # The product's uuid (name-based on the provider id): requests on one product run one at a
    # time, in acceptance order.
    product_key: Mapped[str | None] = mapped_column(String(36))
    provider_id: Mapped[str | None] = mapped_column(String(1024))
    urn: Mapped[str | None] = mapped_column(String(1024))
    model: Mapped[str | None] = mapped_column(String(256))
    request_owner: Mapped[str] = mapped_column(String(128))
    session_owner: Mapped[str | None] = mapped_column(String(128))
    session: Mapped[str | None] = mapped_column(String(128))
    request_date: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_update: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    errors: Mapped[Any] = mapped_column(JSONText, nullable=True)
    feature: Mapped[Any] = mapped_column(JSONText, nullable=True)
    options: Mapped[Any] = mapped_column(JSONText, nullable=True)
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


Index("ix_fem_requests_queue", FeatureRequest.step, FeatureRequest.priority, FeatureRequest.id)
Index("ix_fem_requests_product", FeatureRequest.product_key, FeatureRequest.id)
Index("ix_fem_requests_search", FeatureRequest.project_id, FeatureRequest.type,
      FeatureRequest.state)
Index("ix_fem_requests_session", FeatureRequest.project_id, FeatureRequest.session_owner,
      FeatureRequest.session)


class Feature(Base):
    """One version of a product."""

    __tablename__ = "fem_features"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    urn: Mapped[str] = mapped_column(String(256), unique=True)
    uuid: Mapped[str] = mapped_column(String(36))
    provider_id: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    last: Mapped[bool] = mapped_column(Boolean, default=True)
    entity_type: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(128))
    session_owner: Mapped[str | None] = mapped_column(String(128))
    session: Mapped[str | None] = mapped_column(String(128))
    geometry: Mapped[Any] = mapped_column(JSONText, nullable=True)
    properties: Mapped[Any] = mapped_column(JSONText)
    files: Mapped[Any] = mapped_column(JSONText)
    min_x: Mapped[float | None] = mapped_column(Float)
    min_y: Mapped[float | None] = mapped_column(Float)
    max_x: Mapped[float | None] = mapped_column(Float)
    max_y: Mapped[float | None] = mapped_column(Float)
    # [{recipient, status PENDING|DONE, date}] and its summary NONE|PENDING|DONE.
    dissemination: Mapped[Any] = mapped_column(JSONText)
    dissemination_status: Mapped[str] = mapped_column(String(8), default="NONE")
    created_by: Mapped[str] = mapped_column(String(128))
    updated_by: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_update: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


Index("ix_fem_features_product", Feature.project_id, Feature.uuid, Feature.version)
Index("ix_fem_features_provider", Feature.project_id, Feature.provider_id)
Index("ix_fem_features_updated", Feature.project_id, Feature.last_update)
Index("ix_fem_features_model", Feature.project_id, Feature.model)


class OutboxEntry(Base):
    """An event or notification waiting to be published (the AMQP publisher reads it in id
    order; `GET /events` exposes it meanwhile)."""

    __tablename__ = "fem_outbox"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    body: Mapped[Any] = mapped_column(JSONText)


Index("ix_fem_outbox_project", OutboxEntry.project_id, OutboxEntry.id)
