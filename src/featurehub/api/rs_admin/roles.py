"""Roles and the accesses they hold."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_admin_roles import ResourceAccessReference, Role
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.admin import roles
from featurehub.web import wrap

__all__ = [
    "addRoleResource", "createRole", "deleteRoleResource", "getAllRoles", "getRoleResources",
    "getRoleResourcesForMicroservice", "removeRole", "retrieveBorrowableRoles", "retrieveRole",
    "retrieveRoleAscendants", "retrieveRoleDescendants", "updateRole",
]


def _project() -> int:
    return current_caller().project_id


def getAllRoles() -> list[dict[str, Any]]:  # noqa: N802
    return [wrap(role) for role in roles.list_roles(db_session(), project_id=_project())]


def retrieveBorrowableRoles(scope: str | None = None) -> list[dict[str, Any]]:  # noqa: N802
    caller = current_caller()
    return [wrap(role) for role in roles.borrowable_roles(
        db_session(), project_id=caller.project_id, caller_role=caller.role)]


def retrieveRole(role_name: str) -> dict[str, Any]:  # noqa: N802
    return wrap(roles.get_role(db_session(), project_id=_project(), name=role_name))


def createRole(body: dict[str, Any]) -> tuple[dict[str, Any], int]:  # noqa: N802
    caller = current_caller()
    return wrap(roles.create_role(db_session(), project_id=caller.project_id,
                                  caller_role=caller.role, role=Role.model_validate(body))), 201


def updateRole(role_name: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    caller = current_caller()
    return wrap(roles.update_role(db_session(), project_id=caller.project_id,
                                  caller_role=caller.role, name=role_name,
                                  role=Role.model_validate(body)))


def removeRole(role_name: str) -> tuple[None, int]:  # noqa: N802
    caller = current_caller()
    roles.delete_role(db_session(), project_id=caller.project_id, caller_role=caller.role,
                      name=role_name)
    return None, 204


def retrieveRoleDescendants(role_name: str) -> list[dict[str, Any]]:  # noqa: N802
    return [wrap(role) for role in roles.descendants(db_session(), project_id=_project(),
                                                     name=role_name)]


def retrieveRoleAscendants(role_name: str) -> list[dict[str, Any]]:  # noqa: N802
    return [wrap(role) for role in roles.ascendants(db_session(), project_id=_project(),
                                                    name=role_name)]


def getRoleResources(role_name: str) -> list[dict[str, Any]]:  # noqa: N802
    return [wrap(access) for access in roles.role_accesses(
        db_session(), project_id=_project(), name=role_name)]


def getRoleResourcesForMicroservice(role_name: str, microservice: str) -> list[dict[str, Any]]:  # noqa: N802
    return [wrap(access) for access in roles.role_accesses(
        db_session(), project_id=_project(), name=role_name, microservice=microservice)]


def addRoleResource(role_name: str, body: dict[str, Any]) -> tuple[dict[str, Any], int]:  # noqa: N802
    caller = current_caller()
    return wrap(roles.grant(db_session(), project_id=caller.project_id, caller_role=caller.role,
                            name=role_name,
                            reference=ResourceAccessReference.model_validate(body))), 201


def deleteRoleResource(role_name: str, microservice: str) -> tuple[None, int]:  # noqa: N802
    """DELETE /roles/{role_name}/resources/{resources_access_id}: the last segment is the id."""
    caller = current_caller()
    roles.withdraw(db_session(), project_id=caller.project_id, caller_role=caller.role,
                   name=role_name, access_id=int(microservice))
    return None, 204
