"""Who manages which role: the role hierarchy as the administration operations see it.

A role R is managed by a caller of role X when R is X or below it (in X's parent chain), or when
R is a custom role whose native base (its nearest native ancestor) is strictly below X's native
base: ADMIN manages a custom role made under EXPLOIT, EXPLOIT does not (that role may hold more
than EXPLOIT). PROJECT_ADMIN thus manages every role but INSTANCE_ADMIN, which manages all.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.platform import NATIVE_ROLES, Role
from featurehub.errors import Forbidden, NotFound, Unprocessable


def project_roles(session: Session, project_id: int) -> dict[str, Role]:
    return {role.name: role for role in session.scalars(
        select(Role).where(Role.project_id == project_id))}


def chain(roles: dict[str, Role], name: str) -> list[Role]:
    """The role and its parents, down to PUBLIC."""
    by_id = {role.id: role for role in roles.values()}
    role, found = roles.get(name), []
    while role is not None and role not in found:
        found.append(role)
        role = by_id.get(role.parent_id) if role.parent_id is not None else None
    return found


def native_rank(roles: dict[str, Role], name: str) -> int:
    """Index in NATIVE_ROLES of the role's nearest native ancestor (or of itself)."""
    for role in chain(roles, name):
        if role.native and role.name in NATIVE_ROLES:
            return NATIVE_ROLES.index(role.name)
    return 0


def manages(roles: dict[str, Role], caller_role: str, role_name: str) -> bool:
    if role_name not in roles:
        return False
    if any(role.name == role_name for role in chain(roles, caller_role)):
        return True
    return (not roles[role_name].native
            and native_rank(roles, role_name) < native_rank(roles, caller_role))


def managed_role(session: Session, *, project_id: int, caller_role: str, role_name: str) -> Role:
    """The named role, if the caller may manage it (or give it to a user); 404 / 403 otherwise."""
    roles = project_roles(session, project_id)
    if role_name not in roles:
        raise NotFound(f"Role '{role_name}' does not exist.")
    if not manages(roles, caller_role, role_name):
        raise Forbidden(
            f"Role {caller_role} cannot manage role {role_name}, which is not below it.")
    return roles[role_name]


def role_to_give(session: Session, project_id: int, caller_role: str, role_name: str) -> Role:
    """The named role, if the caller may give it to a user (or make it the default role)."""
    roles = project_roles(session, project_id)
    if role_name not in roles:
        raise Unprocessable(f"Role '{role_name}' does not exist.")
    if not manages(roles, caller_role, role_name):
        raise Forbidden(f"Role {caller_role} cannot give the role {role_name}, which is above it.")
    return roles[role_name]
