"""Platform tables: projects (tenants), accounts, project users, roles, resource accesses,
OAuth clients, signing keys and per-microservice settings."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from featurehub.db.base import Base, UTCDateTime, utcnow

# Native roles, lowest first: each is the parent of the next one.
NATIVE_ROLES = ("PUBLIC", "REGISTERED_USER", "EXPLOIT", "ADMIN", "PROJECT_ADMIN", "INSTANCE_ADMIN")
ALWAYS_GRANTED = frozenset({"PROJECT_ADMIN", "INSTANCE_ADMIN"})


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    description: Mapped[str | None] = mapped_column(String(1024))
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Account(Base):
    """A person known to the instance; their membership of each project is a ProjectUser."""

    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(255), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    first_name: Mapped[str | None] = mapped_column(String(128))
    last_name: Mapped[str | None] = mapped_column(String(128))
    instance_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Role(Base):
    __tablename__ = "roles"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("roles.id", ondelete="RESTRICT"))
    native: Mapped[bool] = mapped_column(Boolean, default=False)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    authorized_addresses: Mapped[list[str]] = mapped_column(JSON, default=list)

    parent: Mapped[Role | None] = relationship(remote_side=[id], lazy="joined", join_depth=8)


class ProjectUser(Base):
    __tablename__ = "project_users"
    __table_args__ = (UniqueConstraint("project_id", "email"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(255))
    role_id: Mapped[int] = mapped_column(ForeignKey("roles.id", ondelete="RESTRICT"))
    status: Mapped[str] = mapped_column(String(32), default="WAITING_ACCESS")
    first_name: Mapped[str | None] = mapped_column(String(128))
    last_name: Mapped[str | None] = mapped_column(String(128))
    origin: Mapped[str] = mapped_column(String(128), default="Regards")
    origin_url: Mapped[str | None] = mapped_column(String(1024))
    request_link: Mapped[str | None] = mapped_column(String(1024))
    access_groups: Mapped[list[str]] = mapped_column(JSON, default=list)
    max_quota: Mapped[int | None] = mapped_column(BigInteger)
    current_quota: Mapped[int] = mapped_column(BigInteger, default=0)
    quota_warning_count: Mapped[int] = mapped_column(BigInteger, default=0)
    license_accepted: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_update: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    last_connection: Mapped[datetime | None] = mapped_column(UTCDateTime)

    role: Mapped[Role] = relationship(lazy="joined")


class ResourceAccess(Base):
    """One endpoint of one microservice in one project: `resource@verb` with its default role."""

    __tablename__ = "resource_accesses"
    __table_args__ = (UniqueConstraint("project_id", "microservice", "resource", "verb"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    microservice: Mapped[str] = mapped_column(String(64))
    controller: Mapped[str] = mapped_column(String(128))
    resource: Mapped[str] = mapped_column(String(512))
    verb: Mapped[str] = mapped_column(String(8))
    default_role: Mapped[str] = mapped_column(String(32))
    description: Mapped[str | None] = mapped_column(Text)


class RoleResource(Base):
    """A resource access granted to a role (and so, through the hierarchy, to the roles above)."""

    __tablename__ = "role_resources"

    role_id: Mapped[int] = mapped_column(
        ForeignKey("roles.id", ondelete="CASCADE"), primary_key=True
    )
    resource_access_id: Mapped[int] = mapped_column(
        ForeignKey("resource_accesses.id", ondelete="CASCADE"), primary_key=True, index=True
    )


class OAuthClient(Base):
    """A machine client of one project (grant type client_credentials)."""

    __tablename__ = "oauth_clients"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    client_id: Mapped[str] = mapped_column(String(255), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(255))
    role_name: Mapped[str] = mapped_column(String(128))
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SigningKey(Base):
    __tablename__ = "signing_keys"

    kid: Mapped[str] = mapped_column(String(64), primary_key=True)
    private_pem: Mapped[str] = mapped_column(Text)
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SettingValue(Base):
    """A project's value for one setting of one microservice (absent row: default value)."""

    __tablename__ = "settings"
    __table_args__ = (UniqueConstraint("project_id", "microservice", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    microservice: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(128))
    value: Mapped[Any] = mapped_column(JSON)


Index("ix_project_users_role", ProjectUser.role_id)


class EmailVerification(Base):
    """The token a user's access request mailed them; following it marks their email verified."""

    __tablename__ = "email_verifications"

    project_user_id: Mapped[int] = mapped_column(
        ForeignKey("project_users.id", ondelete="CASCADE"), primary_key=True
    )
    token: Mapped[str] = mapped_column(String(64), unique=True)
    verified: Mapped[datetime | None] = mapped_column(UTCDateTime)


class UserMetadata(Base):
    """A key/value of one project user (`MetaData` of the interface)."""

    __tablename__ = "user_metadata"
    __table_args__ = (UniqueConstraint("project_user_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_user_id: Mapped[int] = mapped_column(
        ForeignKey("project_users.id", ondelete="CASCADE"), index=True
    )
    key: Mapped[str] = mapped_column(String(64))
    value: Mapped[str | None] = mapped_column(String(255))
    visibility: Mapped[str] = mapped_column(String(16), default="READABLE")


class UserResource(Base):
    """A resource access granted to one project user beyond what their role holds."""

    __tablename__ = "user_resources"

    project_user_id: Mapped[int] = mapped_column(
        ForeignKey("project_users.id", ondelete="CASCADE"), primary_key=True
    )
    resource_access_id: Mapped[int] = mapped_column(
        ForeignKey("resource_accesses.id", ondelete="CASCADE"), primary_key=True, index=True
    )
