"""Projects (tenants): creation with native roles and registered endpoints, bootstrap."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from featurehub.db.base import hold_startup_lock
from featurehub.db.platform import (
    NATIVE_ROLES,
    Account,
    Project,
    ProjectUser,
    ResourceAccess,
    Role,
    RoleResource,
)
from featurehub.errors import Conflict, InvalidInput, NotFound
from featurehub.security.passwords import generate_password, hash_password
from featurehub.services import hooks
from featurehub.services.endpoints import Endpoint

log = logging.getLogger(__name__)

PROJECT_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def find_project(session: Session, name: str) -> Project:
    project = session.scalars(select(Project).where(Project.name == name)).first()
    if project is None:
        raise NotFound(f"Project '{name}' does not exist.")
    return project


def create_project(
    session: Session,
    *,
    name: str,
    description: str | None = None,
    endpoints: Mapping[str, Iterable[Endpoint]],
) -> Project:
    """A project with the native role hierarchy and every microservice's endpoints granted."""
    if not name or len(name) > 128 or not set(name) <= PROJECT_NAME_CHARS:
        raise InvalidInput("A project name is 1 to 128 letters, digits, '-' or '_'.")
    if session.scalars(select(Project.id).where(Project.name == name)).first() is not None:
        raise Conflict(f"Project '{name}' already exists.")
    project = Project(name=name, description=description)
    session.add(project)
    session.flush()
    parent: Role | None = None
    for role_name in NATIVE_ROLES:
        role = Role(project_id=project.id, name=role_name, parent=parent, native=True,
                    is_default=role_name == "REGISTERED_USER", authorized_addresses=[])
        session.add(role)
        parent = role
    session.flush()
    for microservice, items in endpoints.items():
        register_endpoints(session, project_id=project.id, microservice=microservice,
                           endpoints=items)
    hooks.project_created(session, project)
    session.commit()
    return project


def register_endpoints(
    session: Session, *, project_id: int, microservice: str, endpoints: Iterable[Endpoint]
) -> int:
    """Add the accesses a project does not have yet, each granted to its default role.

    Accesses already registered keep their (possibly administrator-changed) default role.
    """
    existing = {
        (resource, verb)
        for resource, verb in session.execute(
            select(ResourceAccess.resource, ResourceAccess.verb).where(
                ResourceAccess.project_id == project_id,
                ResourceAccess.microservice == microservice,
            )
        )
    }
    roles = {role.name: role.id for role in session.scalars(
        select(Role).where(Role.project_id == project_id))}
    added = []
    for endpoint in endpoints:
        if (endpoint.resource, endpoint.verb) in existing:
            continue
        added.append({
            "project_id": project_id, "microservice": microservice,
            "controller": endpoint.controller, "resource": endpoint.resource,
            "verb": endpoint.verb, "default_role": endpoint.default_role,
            "description": endpoint.description,
        })
        existing.add((endpoint.resource, endpoint.verb))
    if not added:
        return 0
    # One bulk INSERT with their ids back (an ORM flush per access was a round trip each).
    ids = session.scalars(insert(ResourceAccess).returning(
        ResourceAccess.id, sort_by_parameter_order=True), added).all()
    grants = [{"role_id": roles[access["default_role"]], "resource_access_id": access_id}
              for access, access_id in zip(added, ids, strict=True)
              if access["default_role"] in roles]
    if grants:
        session.execute(insert(RoleResource), grants)
    return len(added)


def register_all(session: Session, endpoints: Mapping[str, Iterable[Endpoint]]) -> None:
    """At start-up: every project learns the endpoints the contracts declare."""
    items = {name: tuple(values) for name, values in endpoints.items()}
    hold_startup_lock(session)
    for project_id in session.scalars(select(Project.id)).all():
        for microservice, values in items.items():
            register_endpoints(session, project_id=project_id, microservice=microservice,
                               endpoints=values)
    session.commit()


@dataclass(frozen=True)
class Bootstrap:
    project: str
    admin_email: str
    generated_password: str | None


def bootstrap(
    session: Session,
    *,
    project_name: str,
    admin_email: str,
    admin_password: str | None,
    endpoints: Mapping[str, Iterable[Endpoint]],
) -> Bootstrap | None:
    """On an empty database: the first project and an instance administrator."""
    hold_startup_lock(session)
    if session.scalars(select(Project.id)).first() is not None:
        return None
    generated = None
    if not admin_password:
        admin_password = generated = generate_password()
    project = create_project(session, name=project_name, endpoints=endpoints,
                             description="Created on first start")
    ensure_instance_admin(session, project=project, email=admin_email, password=admin_password)
    session.commit()
    return Bootstrap(project_name, admin_email, generated)


def ensure_instance_admin(session: Session, *, project: Project, email: str, password: str) -> None:
    account = session.scalars(select(Account).where(Account.email == email)).first()
    if account is None:
        account = Account(email=email, instance_admin=True)
        session.add(account)
    account.instance_admin = True
    account.password_hash = hash_password(password)
    role = session.scalars(select(Role).where(
        Role.project_id == project.id, Role.name == "INSTANCE_ADMIN")).one()
    member = session.scalars(select(ProjectUser).where(
        ProjectUser.project_id == project.id, ProjectUser.email == email)).first()
    if member is None:
        session.add(ProjectUser(project_id=project.id, email=email, role_id=role.id,
                                status="ACCESS_GRANTED", origin="featurehub"))
    session.flush()
