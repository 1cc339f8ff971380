"""Request authorisation the reference's way: the caller's role, or a role below it, must hold
the resource access `path@VERB` of the microservice in the caller's project."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from connexion.resolver import Resolution, Resolver
from flask import g, request
from sqlalchemy import bindparam, or_, select
from sqlalchemy.orm import Session, aliased

from featurehub.db.base import read_only
from featurehub.db.platform import (
    ALWAYS_GRANTED,
    Account,
    OAuthClient,
    Project,
    ProjectUser,
    ResourceAccess,
    Role,
    RoleResource,
    UserResource,
)
from featurehub.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from featurehub.runtime import current_runtime, db_session
from featurehub.services.endpoints import Endpoint


@dataclass(frozen=True)
class Caller:
    project_id: int
    project: str
    role: str
    email: str | None  # None for anonymous callers and machine clients
    user_id: int | None
    client_id: str | None
    microservice: str

    @property
    def authenticated(self) -> bool:
        return self.email is not None or self.client_id is not None


def current_caller() -> Caller:
    return g.caller


def role_chain(session: Session, project_id: int, role_name: str) -> list[Role]:
    """The role and every role below it, down to PUBLIC."""
    roles = {role.id: role for role in session.scalars(
        select(Role).where(Role.project_id == project_id))}
    by_name = {role.name: role for role in roles.values()}
    role = by_name.get(role_name)
    chain: list[Role] = []
    while role is not None and role not in chain:
        chain.append(role)
        role = roles.get(role.parent_id) if role.parent_id is not None else None
    return chain


# The resource access `path@VERB` of a microservice in a project, as bound parameters.
_THE_ACCESS = (ResourceAccess.project_id == bindparam("project_id"),
               ResourceAccess.microservice == bindparam("microservice"),
               ResourceAccess.resource == bindparam("resource"),
               ResourceAccess.verb == bindparam("verb"))


def _held_statement(*, with_user: bool) -> Any:
    """The first resource access `path@VERB` of the microservice in the project that the role
    or a role below it holds (walked in the database: one query per request), or else (given
    the user) that the user holds as an extra access."""
    chain = (select(Role.id, Role.parent_id)
             .where(Role.project_id == bindparam("project_id"), Role.name == bindparam("role"))
             .cte("role_chain", recursive=True))
    below = aliased(Role)
    chain = chain.union_all(
        select(below.id, below.parent_id).join(chain, below.id == chain.c.parent_id))
    held = ResourceAccess.id.in_(select(RoleResource.resource_access_id).where(
        RoleResource.role_id.in_(select(chain.c.id))))
    if with_user:
        held = or_(held, ResourceAccess.id.in_(select(UserResource.resource_access_id).where(
            UserResource.project_user_id == bindparam("user_id"))))
    return select(ResourceAccess.id).where(*_THE_ACCESS, held).limit(1)


# Built once, as the other statements of every request: building them (and their cache keys)
# cost more than running them.
_HELD_BY_ROLE = _held_statement(with_user=False)
_HELD_BY_ROLE_OR_USER = _held_statement(with_user=True)
_RESERVED_TO_INSTANCE = select(ResourceAccess.id).where(
    *_THE_ACCESS, ResourceAccess.default_role == "INSTANCE_ADMIN").limit(1)


def is_granted(session: Session, *, project_id: int, role: str, microservice: str,
               resource: str, verb: str, user_id: int | None = None) -> bool:
    """The role, a role below it, or (given the user) the user's own extra accesses hold the
    resource access."""
    if role == "INSTANCE_ADMIN":
        return True
    access = {"project_id": project_id, "microservice": microservice, "resource": resource,
              "verb": verb}
    if role in ALWAYS_GRANTED:
        # PROJECT_ADMIN holds everything of its project but what is reserved to the instance.
        return session.scalars(_RESERVED_TO_INSTANCE, access).first() is None
    if user_id is None:
        return session.scalars(_HELD_BY_ROLE, {**access, "role": role}).first() is not None
    return session.scalars(_HELD_BY_ROLE_OR_USER,
                           {**access, "role": role, "user_id": user_id}).first() is not None


def bearer_present(token: str) -> dict[str, str]:
    """Connexion's security check: a bearer token is there. It is verified, against the
    database, when the operation is authorised (a signature alone says nothing of the role
    the caller holds now)."""
    return {"token": token}


def _bearer_token() -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be 'Bearer <token>'.")
    return token.strip()


def _requested_scope() -> str | None:
    scope = request.args.get("scope") or request.headers.get("scope")
    if scope and "\x00" in scope:  # no project is named so (and PostgreSQL refuses the text)
        raise NotFound("Project names hold no NUL character: no such project.")
    return scope or None


def _project(session: Session, name: str) -> tuple[int, str]:
    found = session.execute(select(Project.id, Project.name).where(Project.name == name)).first()
    if found is None:
        raise NotFound(f"Project '{name}' does not exist.")
    return found.id, found.name


# Built once: building this statement and its cache key at every request cost more than
# running it.
_MEMBERSHIP = (
    select(Project.id.label("project_id"), Project.name.label("project"),
           Account.email, Account.instance_admin, ProjectUser.id.label("member_id"),
           ProjectUser.status, Role.name.label("role"))
    .select_from(Project)
    .outerjoin(Account, Account.email == bindparam("email"))
    .outerjoin(ProjectUser, (ProjectUser.email == Account.email)
               & (ProjectUser.project_id == Project.id))
    .outerjoin(Role, Role.id == ProjectUser.role_id)
    .where(Project.name == bindparam("project"))
)


def _membership(session: Session, project_name: str, email: str) -> Any:
    """The project, the account and the account's membership of the project (with its role's
    name), in one query: one row, or None when the project does not exist."""
    return session.execute(_MEMBERSHIP, {"email": email, "project": project_name}).first()


def identify_caller(session: Session, microservice: str) -> Caller:
    """Who is calling, in which project, with which role (as stored now, not as when the
    token was issued: role changes and deactivations apply to the next request)."""
    token = _bearer_token()
    scope = _requested_scope()
    if token is None:
        if scope is None:
            return Caller(0, "", "PUBLIC", None, None, None, microservice)
        project_id, project_name = _project(session, scope)
        return Caller(project_id, project_name, "PUBLIC", None, None, None, microservice)

    claims = current_runtime().keys.verify(token)
    if claims.kind == "client":
        client = session.execute(
            select(OAuthClient.client_id, OAuthClient.role_name, Project.id, Project.name)
            .join(Project, Project.id == OAuthClient.project_id)
            .where(OAuthClient.client_id == claims.subject)).first()
        if client is None:
            raise Unauthenticated("The token's client no longer exists.")
        if scope is not None and scope != client.name:
            raise Forbidden(f"This token belongs to project '{client.name}', not '{scope}'.")
        return Caller(client.id, client.name, client.role_name, None, None, client.client_id,
                      microservice)

    foreign = scope is not None and scope != claims.tenant
    found = _membership(session, scope if foreign else claims.tenant, claims.subject)
    if foreign and not (found.instance_admin if found is not None else session.scalar(
            select(Account.instance_admin).where(Account.email == claims.subject))):
        raise Forbidden(f"This token belongs to project '{claims.tenant}', not '{scope}'.")
    if found is None:
        raise NotFound(f"Project '{scope if foreign else claims.tenant}' does not exist.")
    if found.email is None:
        raise Unauthenticated("The token's account no longer exists.")
    if found.instance_admin:
        return Caller(found.project_id, found.project, "INSTANCE_ADMIN", found.email,
                      found.member_id, None, microservice)
    if found.member_id is None or found.status != "ACCESS_GRANTED":
        raise Unauthenticated("The token's user has no granted access to this project anymore.")
    return Caller(found.project_id, found.project, found.role, found.email, found.member_id,
                  None, microservice)


def authorize(endpoint: Endpoint) -> Caller:
    # The authorisation queries run in their own short read-only transaction.
    with read_only(db_session()) as session:
        caller = identify_caller(session, endpoint.microservice)
        if caller.project_id == 0:
            raise InvalidInput(
                "Name the project with the 'scope' query parameter or header, or send a token.")
        granted = is_granted(session, project_id=caller.project_id, role=caller.role,
                             microservice=endpoint.microservice, resource=endpoint.resource,
                             verb=endpoint.verb, user_id=caller.user_id)
    if not granted:
        if not caller.authenticated:
            raise Unauthenticated(f"{endpoint.key} needs an access token.")
        raise Forbidden(f"Role {caller.role} does not hold the access {endpoint.key}.")
    g.caller = caller
    return caller


class PackageResolver(Resolver):
    """Resolves an operationId to the function of that name in a handler package."""

    def __init__(self, package: str) -> None:
        super().__init__()
        self.package = package

    def function(self, operation: Any) -> Callable[..., Any]:
        return getattr(import_module(self.package), operation.operation_id)

    def resolve(self, operation: Any) -> Resolution:
        return Resolution(_json_by_default(self.function(operation)), operation.operation_id)


class AuthorizingResolver(PackageResolver):
    """A PackageResolver whose functions authorise every call first."""

    def __init__(self, package: str, microservice: str) -> None:
        super().__init__(package)
        self.microservice = microservice

    def resolve(self, operation: Any) -> Resolution:
        operation_id = operation.operation_id
        function = self.function(operation)
        raw = operation._operation
        tags = raw.get("tags") or [self.microservice]
        endpoint = Endpoint(
            microservice=self.microservice, controller=tags[0], resource=operation.path,
            verb=operation.method.upper(), default_role=raw["x-default-role"],
            description=raw.get("summary"), operation_id=operation_id,
        )
        return Resolution(_json_by_default(_authorized(function, endpoint)), operation_id)


def _authorized(function: Callable[..., Any], endpoint: Endpoint) -> Callable[..., Any]:
    @functools.wraps(function)
    def handler(*args: Any, **kwargs: Any) -> Any:
        authorize(endpoint)
        return function(*args, **kwargs)

    handler.endpoint = endpoint  # type: ignore[attr-defined]
    return handler


def _json_by_default(function: Callable[..., Any]) -> Callable[..., Any]:
    """Operations declare problem+json beside JSON, so connexion cannot guess which content type
    a handler's plain dict or list is: it is JSON unless the handler says otherwise."""

    @functools.wraps(function)
    def handler(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        if isinstance(result, tuple):
            body, status, *rest = result
            headers = dict(rest[0]) if rest else {}
        elif isinstance(result, (dict, list)) or result is None:
            body, status, headers = result, 200, {}
        else:
            return result
        if isinstance(body, (dict, list)) and not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"
        return body, status, headers

    return handler
