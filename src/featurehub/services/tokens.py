"""Issuing access tokens (OAuth 2.0 password and client_credentials grants)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.base import utcnow
from featurehub.db.platform import Account, OAuthClient, Project, ProjectUser
from featurehub.security.passwords import verify_password
from featurehub.security.tokens import KeyRing


class OAuthRefusal(Exception):
    """An RFC 6749 section 5.2 error answer."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status


@dataclass(frozen=True)
class IssuedToken:
    access_token: str
    expires_in: int
    scope: str
    role: str


def issue_password_token(session: Session, keys: KeyRing, *, username: str | None,
                         password: str | None, scope: str | None) -> IssuedToken:
    if not username or password is None or not scope:
        raise OAuthRefusal("invalid_request",
                           "Grant type password needs username, password and scope (project).")
    project = session.scalars(select(Project).where(Project.name == scope)).first()
    if project is None:
        raise OAuthRefusal("invalid_scope", f"Project '{scope}' does not exist.")
    account = session.scalars(select(Account).where(Account.email == username)).first()
    if account is None or not verify_password(account.password_hash, password):
        raise OAuthRefusal("invalid_grant", "Bad credentials.")
    member = session.scalars(select(ProjectUser).where(
        ProjectUser.project_id == project.id, ProjectUser.email == account.email)).first()
    if account.instance_admin:
        role = "INSTANCE_ADMIN"
    elif member is None or member.status != "ACCESS_GRANTED":
        status = member.status if member else "no access request"
        raise OAuthRefusal("invalid_grant",
                           f"No granted access to project '{scope}' ({status}).")
    else:
        role = member.role.name
    if member is not None:
        member.last_connection = utcnow()
        session.commit()
    token, ttl = keys.issue(subject=account.email, tenant=project.name, role=role)
    return IssuedToken(token, ttl, project.name, role)


def issue_client_token(session: Session, keys: KeyRing, *, client_id: str | None,
                       client_secret: str | None, scope: str | None) -> IssuedToken:
    if not client_id or client_secret is None:
        raise OAuthRefusal("invalid_request",
                           "Grant type client_credentials needs client_id and client_secret.")
    client = session.scalars(select(OAuthClient).where(OAuthClient.client_id == client_id)).first()
    if client is None or not verify_password(client.secret_hash, client_secret):
        raise OAuthRefusal("invalid_client", "Client authentication failed.", status=401)
    project = session.get(Project, client.project_id)
    assert project is not None
    if scope and scope != project.name:
        raise OAuthRefusal("invalid_scope",
                           f"Client '{client_id}' belongs to project '{project.name}'.")
    token, ttl = keys.issue(subject=client.client_id, tenant=project.name, role=client.role_name,
                            kind="client")
    return IssuedToken(token, ttl, project.name, client.role_name)
