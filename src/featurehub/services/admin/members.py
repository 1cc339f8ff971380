"""Project users as the administration sees them: their JSON shape, the status machine, who may
give which role and manage whom, and the creation shared by access requests and createUser."""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.platform import (
    Account,
    EmailVerification,
    ProjectUser,
    ResourceAccess,
    Role,
    UserMetadata,
    UserResource,
)
from featurehub.errors import Conflict, Forbidden, NotFound, Unprocessable
from featurehub.security.passwords import hash_password
from featurehub.services.admin import hierarchy
from featurehub.services.admin import settings as admin_settings
from featurehub.services.settings import value_of

# action -> (statuses it leaves, status it reaches); any other change of status is refused.
TRANSITIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "accept": (("WAITING_ACCESS", "ACCESS_DENIED"), "ACCESS_GRANTED"),
    "deny": (("WAITING_ACCESS",), "ACCESS_DENIED"),
    "inactive": (("ACCESS_GRANTED",), "ACCESS_INACTIVE"),
    "active": (("ACCESS_INACTIVE",), "ACCESS_GRANTED"),
}


def apply_transition(user: ProjectUser, action: str) -> None:
    sources, target = TRANSITIONS[action]
    if user.status not in sources:
        raise Conflict(f"User {user.id} is {user.status}; {action} needs {' or '.join(sources)}.")
    user.status = target


def change_status(user: ProjectUser, target: str) -> str | None:
    """A status change asked through an update: only along the machine's transitions. The
    action it amounts to (None: no change)."""
    if target == user.status:
        return None
    for action, (sources, reached) in TRANSITIONS.items():
        if reached == target and user.status in sources:
            apply_transition(user, action)
            return action
    raise Conflict(f"User {user.id} is {user.status}; it cannot become {target}.")


# The members of the contract's bodies whose strings reach the database (other members are ignored).
STORED_MEMBERS = frozenset({
    "email", "firstName", "lastName", "origin", "originUrl", "password", "requestLink",
    "roleName", "accessGroups", "metadata", "key", "value", "visibility", "role", "name",
    "status", "values", "origins", "roles",
})


def refuse_nul(value: Any, what: str = "The request") -> None:
    """PostgreSQL cannot hold NUL characters in text: a string with one is refused up front."""
    if isinstance(value, str):
        if "\x00" in value:
            raise Unprocessable(f"{what} contains a NUL character.")
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in STORED_MEMBERS:
                refuse_nul(item, what)
    elif isinstance(value, list):
        for item in value:
            refuse_nul(item, what)


# --- roles: who may give which role, and manage whom ---------------------------------------------

def is_at_or_below(session: Session, project_id: int, caller_role: str, role_name: str) -> bool:
    """The caller may give this role (the roles' management rule, `hierarchy.manages`)."""
    return hierarchy.manages(hierarchy.project_roles(session, project_id), caller_role, role_name)


def check_may_manage(session: Session, project_id: int, caller_role: str,
                     user: ProjectUser) -> None:
    if not is_at_or_below(session, project_id, caller_role, user.role.name):
        raise Forbidden(f"Role {caller_role} cannot manage user {user.id}, whose role "
                        f"{user.role.name} is above it.")


def default_role(session: Session, project_id: int) -> Role:
    name = value_of(session, project_id=project_id, microservice=admin_settings.MICROSERVICE,
                    name=admin_settings.DEFAULT_ROLE)
    role = session.scalars(select(Role).where(
        Role.project_id == project_id, Role.name == name)).first()
    if role is None:  # the role was deleted after being made the default
        role = session.scalars(select(Role).where(
            Role.project_id == project_id, Role.name == "REGISTERED_USER")).one()
    return role


# --- finding users -------------------------------------------------------------------------------

def find_user(session: Session, project_id: int, user_id: int) -> ProjectUser:
    user = session.scalars(select(ProjectUser).where(
        ProjectUser.project_id == project_id, ProjectUser.id == user_id)).first()
    if user is None:
        raise NotFound(f"User {user_id} does not exist.")
    return user


def find_user_by_email(session: Session, project_id: int, email: str) -> ProjectUser:
    user = None if "\x00" in email else session.scalars(select(ProjectUser).where(
        ProjectUser.project_id == project_id, ProjectUser.email == email)).first()
    if user is None:
        raise NotFound(f"User '{email}' does not exist.")
    return user


# --- creation ------------------------------------------------------------------------------------

def create_member(session: Session, *, project_id: int, request: dict[str, Any], status: str,
                  role: Role) -> ProjectUser:
    """A project user (and its account when the email is new; an existing account keeps its
    password and names)."""
    refuse_nul(request)
    email = request["email"]
    existing = session.scalars(select(ProjectUser).where(
        ProjectUser.project_id == project_id, ProjectUser.email == email)).first()
    if existing is not None:
        raise Conflict(f"'{email}' is already a user of this project ({existing.status}).")
    metadata = request.get("metadata") or []
    check_unique_keys(metadata)
    account = session.scalars(select(Account).where(Account.email == email)).first()
    if account is None:
        password = request.get("password")
        session.add(Account(email=email, first_name=request.get("firstName"),
                            last_name=request.get("lastName"),
                            password_hash=hash_password(password) if password else None))
    default_groups = value_of(session, project_id=project_id,
                              microservice=admin_settings.MICROSERVICE,
                              name=admin_settings.DEFAULT_GROUPS)
    groups = list(dict.fromkeys([*(request.get("accessGroups") or []), *default_groups]))
    user = ProjectUser(
        project_id=project_id, email=email, role_id=role.id, status=status,
        first_name=request.get("firstName"), last_name=request.get("lastName"),
        origin=request.get("origin") or "featurehub", origin_url=request.get("originUrl"),
        request_link=request.get("requestLink"), access_groups=groups,
        max_quota=request.get("maxQuota"),
    )
    session.add(user)
    session.flush()
    session.add_all(metadata_rows(user.id, metadata))
    session.add(EmailVerification(project_user_id=user.id, token=secrets.token_urlsafe(32)))
    session.flush()
    return user


def metadata_rows(user_id: int, metadata: Sequence[dict[str, Any]]) -> list[UserMetadata]:
    return [UserMetadata(project_user_id=user_id, key=item["key"], value=item.get("value"),
                         visibility=item.get("visibility") or "READABLE") for item in metadata]


def check_unique_keys(metadata: Sequence[dict[str, Any]]) -> None:
    keys = [item["key"] for item in metadata]
    doubled = sorted({key for key in keys if keys.count(key) > 1})
    if doubled:
        raise Unprocessable(f"Metadata keys must be unique; given twice: {', '.join(doubled)}.")



# --- JSON shapes ---------------------------------------------------------------------------------

def role_dict(role: Role) -> dict[str, Any]:
    shape: dict[str, Any] = {"id": role.id, "name": role.name, "isNative": role.native,
                             "isDefault": role.is_default,
                             "authorizedAddresses": list(role.authorized_addresses or [])}
    if role.parent is not None:
        shape["parentRole"] = role_dict(role.parent)
    return shape


def resource_dict(access: ResourceAccess) -> dict[str, Any]:
    return {"id": access.id, "controllerSimpleName": access.controller,
            "defaultRole": access.default_role, "description": access.description,
            "microservice": access.microservice, "resource": access.resource,
            "verb": access.verb}


def metadata_dict(item: UserMetadata) -> dict[str, Any]:
    return {"id": item.id, "key": item.key, "value": item.value, "visibility": item.visibility}


def present(session: Session, users: Sequence[ProjectUser]) -> list[dict[str, Any]]:
    """The ProjectUser shape of each user; metadata, permissions and verification are read in
    one query each for the whole list."""
    ids = [user.id for user in users]
    metadata: dict[int, list[dict[str, Any]]] = defaultdict(list)
    permissions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    verified: set[int] = set()
    if ids:
        for item in session.scalars(select(UserMetadata).where(
                UserMetadata.project_user_id.in_(ids)).order_by(UserMetadata.key)):
            metadata[item.project_user_id].append(metadata_dict(item))
        for user_id, access in session.execute(
                select(UserResource.project_user_id, ResourceAccess)
                .join(ResourceAccess, ResourceAccess.id == UserResource.resource_access_id)
                .where(UserResource.project_user_id.in_(ids)).order_by(ResourceAccess.id)):
            permissions[user_id].append(resource_dict(access))
        verified = set(session.scalars(select(EmailVerification.project_user_id).where(
            EmailVerification.project_user_id.in_(ids),
            EmailVerification.verified.is_not(None))))
    return [{
        "id": user.id, "email": user.email, "firstName": user.first_name,
        "lastName": user.last_name, "status": user.status, "origin": user.origin,
        "role": role_dict(user.role), "accessGroups": list(user.access_groups or []),
        "created": user.created.isoformat(), "lastUpdate": user.last_update.isoformat(),
        "lastConnection": user.last_connection.isoformat() if user.last_connection else None,
        "maxQuota": user.max_quota, "currentQuota": user.current_quota,
        "licenseAccepted": user.license_accepted, "emailVerified": user.id in verified,
        "metadata": metadata[user.id], "permissions": permissions[user.id],
    } for user in users]


def present_one(session: Session, user: ProjectUser) -> dict[str, Any]:
    return present(session, [user])[0]
