"""Machine clients (OAuth 2.0 client_credentials) registered per project."""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.platform import OAuthClient, Role
from featurehub.errors import Conflict, NotFound
from featurehub.security.passwords import generate_password, hash_password
from featurehub.services.projects import find_project


def create_client(session: Session, *, project_name: str, role: str,
                  client_id: str | None = None, secret: str | None = None) -> tuple[str, str]:
    project = find_project(session, project_name)
    if session.scalars(select(Role.id).where(Role.project_id == project.id,
                                             Role.name == role)).first() is None:
        raise NotFound(f"Role '{role}' does not exist in project '{project_name}'.")
    client_id = client_id or f"{project_name}-{secrets.token_hex(6)}"
    if session.scalars(select(OAuthClient.id).where(OAuthClient.client_id == client_id)).first():
        raise Conflict(f"Client '{client_id}' already exists.")
    secret = secret or generate_password()
    session.add(OAuthClient(project_id=project.id, client_id=client_id,
                            secret_hash=hash_password(secret), role_name=role))
    session.commit()
    return client_id, secret
