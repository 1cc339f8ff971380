"""Interface-configuration tables (rs-access)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from featurehub.db.base import Base, UTCDateTime, utcnow


class Theme(Base):
    __tablename__ = "ui_themes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    name: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(Boolean, default=False)
    visible: Mapped[bool] = mapped_column(Boolean, default=True)
    configuration: Mapped[str] = mapped_column(Text)


class UIModule(Base):
    __tablename__ = "ui_modules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    application_id: Mapped[str] = mapped_column(String(16))
    type: Mapped[str] = mapped_column(String(32))
    description: Mapped[str] = mapped_column(String(64))
    container: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=False)
    conf: Mapped[str | None] = mapped_column(Text)
    page_title: Mapped[str | None] = mapped_column(String(255))
    page_home: Mapped[bool | None] = mapped_column(Boolean)
    page_icon_type: Mapped[str | None] = mapped_column(String(64))
    page_custom_icon_url: Mapped[str | None] = mapped_column(String(2048))


class UIConfiguration(Base):
    __tablename__ = "ui_configurations"
    __table_args__ = (UniqueConstraint("project_id", "application_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    application_id: Mapped[str] = mapped_column(String(16))
    configuration: Mapped[str] = mapped_column(Text)


class UILayout(Base):
    __tablename__ = "ui_layouts"
    __table_args__ = (UniqueConstraint("project_id", "application_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    application_id: Mapped[str] = mapped_column(String(16))
    layout: Mapped[str] = mapped_column(Text)


class SearchHistory(Base):
    __tablename__ = "search_history"
    __table_args__ = (Index("ix_search_history_owner", "project_id", "account_email", "module_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    account_email: Mapped[str] = mapped_column(String(255))
    module_id: Mapped[int] = mapped_column(BigInteger)
    name: Mapped[str] = mapped_column(String(128))
    configuration: Mapped[str] = mapped_column(Text)


class Toponym(Base):
    """A named area; geometry as GeoJSON text with its bounding box beside it. Registered
    toponyms are not visible and expire; loaded ones (countries) are visible and never expire."""

    __tablename__ = "toponyms"
    __table_args__ = (UniqueConstraint("project_id", "business_id"),
                      Index("ix_toponyms_digest", "project_id", "geometry_digest"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    business_id: Mapped[str] = mapped_column(String(128))
    label_en: Mapped[str] = mapped_column(String(255))
    label_fr: Mapped[str] = mapped_column(String(255))
    # Case-folded labels: SQLite's lower() folds ASCII only.
    folded_en: Mapped[str] = mapped_column(String(512))
    folded_fr: Mapped[str] = mapped_column(String(512))
    description: Mapped[str | None] = mapped_column(Text)
    copyright: Mapped[str | None] = mapped_column(String(255))
    geometry: Mapped[str] = mapped_column(Text)
    geometry_digest: Mapped[str] = mapped_column(String(64))
    minx: Mapped[float] = mapped_column(Float)
    miny: Mapped[float] = mapped_column(Float)
    maxx: Mapped[float] = mapped_column(Float)
    maxy: Mapped[float] = mapped_column(Float)
    visible: Mapped[bool] = mapped_column(Boolean, default=True)
    author: Mapped[str | None] = mapped_column(String(255))
    project: Mapped[str | None] = mapped_column(String(128))
    registered_by: Mapped[str | None] = mapped_column(String(255), index=True)
    creation_date: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expiration_date: Mapped[datetime | None] = mapped_column(UTCDateTime)
