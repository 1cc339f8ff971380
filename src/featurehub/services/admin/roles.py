"""Roles of a project and the accesses they hold.

A role holds the accesses granted to it and to every role below it (its parent chain), so a
custom role starts with, and keeps following, its parent's accesses. Every answer is read from
the database: a change applies to the next request of every process.
"""

from __future__ import annotations

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from featurehub.db.platform import ProjectUser, ResourceAccess, Role, RoleResource
from featurehub.errors import Conflict, Forbidden, InvalidInput, NotFound, Unprocessable
from featurehub.models.rs_admin_roles import ParentRole, ResourceAccessReference
from featurehub.models.rs_admin_roles import ResourceAccess as ResourceAccessModel
from featurehub.models.rs_admin_roles import Role as RoleModel
from featurehub.security.authorization import is_granted
from featurehub.services.admin.hierarchy import chain, managed_role, project_roles


def to_parent(roles: dict[str, Role], role: Role | None) -> ParentRole | None:
    """The parent as nested role objects, down to PUBLIC."""
    if role is None:
        return None
    by_id = {item.id: item for item in roles.values()}
    parent = to_parent(roles, by_id.get(role.parent_id) if role.parent_id is not None else None)
    return ParentRole(id=role.id, name=role.name,
                      parentRole=parent.model_dump(exclude_none=True) if parent else None,
                      isNative=role.native, isDefault=role.is_default,
                      authorizedAddresses=list(role.authorized_addresses or []))


def to_model(roles: dict[str, Role], role: Role) -> RoleModel:
    found = chain(roles, role.name)
    parent = to_parent(roles, found[1] if len(found) > 1 else None)
    return RoleModel(id=role.id, name=role.name, parentRole=parent, isNative=role.native,
                     isDefault=role.is_default,
                     authorizedAddresses=list(role.authorized_addresses or []))


def access_model(access: ResourceAccess) -> ResourceAccessModel:
    return ResourceAccessModel(id=access.id, controllerSimpleName=access.controller,
                               defaultRole=access.default_role, description=access.description,
                               microservice=access.microservice, resource=access.resource,
                               verb=access.verb)


def _ordered(roles: dict[str, Role], selected: list[Role]) -> list[RoleModel]:
    """Lowest first: by depth in the tree, then by name."""
    depth = {role.name: len(chain(roles, role.name)) for role in selected}
    return [to_model(roles, role)
            for role in sorted(selected, key=lambda role: (depth[role.name], role.name))]


def list_roles(session: Session, *, project_id: int) -> list[RoleModel]:
    roles = project_roles(session, project_id)
    return _ordered(roles, list(roles.values()))


def get_role(session: Session, *, project_id: int, name: str) -> RoleModel:
    roles = project_roles(session, project_id)
    return to_model(roles, _role(roles, name))


def borrowable_roles(session: Session, *, project_id: int, caller_role: str) -> list[RoleModel]:
    roles = project_roles(session, project_id)
    return _ordered(roles, chain(roles, caller_role))


def ascendants(session: Session, *, project_id: int, name: str) -> list[RoleModel]:
    """The role and its parents, down to PUBLIC (the roles whose accesses it holds)."""
    roles = project_roles(session, project_id)
    _role(roles, name)
    return _ordered(roles, chain(roles, name))


def descendants(session: Session, *, project_id: int, name: str) -> list[RoleModel]:
    """The role and every role above it (the roles that hold its accesses)."""
    roles = project_roles(session, project_id)
    _role(roles, name)
    return _ordered(roles, [role for role in roles.values()
                            if any(item.name == name for item in chain(roles, role.name))])


def create_role(session: Session, *, project_id: int, caller_role: str,
                role: RoleModel) -> RoleModel:
    if role.parentRole is None:
        raise Unprocessable(f"Role '{role.name}' needs a parentRole.")
    roles = project_roles(session, project_id)
    if role.name in roles:
        raise Conflict(f"Role '{role.name}' already exists.")
    parent = managed_role(session, project_id=project_id, caller_role=caller_role,
                          role_name=role.parentRole.name)
    if parent.name == "INSTANCE_ADMIN":
        raise Forbidden("No role can be created above PROJECT_ADMIN.")
    created = Role(project_id=project_id, name=role.name, parent_id=parent.id, native=False,
                   is_default=False, authorized_addresses=_addresses(role))
    session.add(created)
    session.commit()
    return get_role(session, project_id=project_id, name=role.name)


def update_role(session: Session, *, project_id: int, caller_role: str, name: str,
                role: RoleModel) -> RoleModel:
    if role.name != name:
        raise InvalidInput(
            f"The role name in the body ('{role.name}') is not the path's ('{name}').")
    stored = managed_role(session, project_id=project_id, caller_role=caller_role, role_name=name)
    roles = project_roles(session, project_id)
    if role.parentRole is not None and (stored.parent_id is None
                                        or role.parentRole.name != _parent_name(roles, stored)):
        if stored.native:
            raise Forbidden(f"Role {name} is native: its parent cannot change.")
        parent = managed_role(session, project_id=project_id, caller_role=caller_role,
                              role_name=role.parentRole.name)
        if any(item.name == name for item in chain(roles, parent.name)):
            raise Conflict(f"Role {parent.name} is {name} or above it: it cannot be its parent.")
        if parent.name == "INSTANCE_ADMIN":
            raise Forbidden("No role can be placed above PROJECT_ADMIN.")
        stored.parent_id = parent.id
    if role.authorizedAddresses is not None:
        stored.authorized_addresses = _addresses(role)
    session.commit()
    return get_role(session, project_id=project_id, name=name)


def delete_role(session: Session, *, project_id: int, caller_role: str, name: str) -> None:
    """Deleting a custom role moves its users and its sub-roles to its parent."""
    stored = managed_role(session, project_id=project_id, caller_role=caller_role, role_name=name)
    if stored.native:
        raise Forbidden(f"Role {name} is native and cannot be deleted.")
    session.execute(update(ProjectUser).where(ProjectUser.role_id == stored.id)
                    .values(role_id=stored.parent_id))
    session.execute(update(Role).where(Role.parent_id == stored.id)
                    .values(parent_id=stored.parent_id))
    session.delete(stored)
    session.commit()


def role_accesses(session: Session, *, project_id: int, name: str,
                  microservice: str | None = None) -> list[ResourceAccessModel]:
    """Every access the role holds: granted to it or to a role below it."""
    roles = project_roles(session, project_id)
    role = _role(roles, name)
    query = select(ResourceAccess).where(ResourceAccess.project_id == project_id)
    if microservice is not None:
        query = query.where(ResourceAccess.microservice == microservice)
    if role.name == "PROJECT_ADMIN":
        query = query.where(ResourceAccess.default_role != "INSTANCE_ADMIN")
    elif role.name != "INSTANCE_ADMIN":
        held = select(RoleResource.resource_access_id).where(
            RoleResource.role_id.in_([item.id for item in chain(roles, name)]))
        query = query.where(ResourceAccess.id.in_(held))
    query = query.order_by(ResourceAccess.microservice, ResourceAccess.resource,
                           ResourceAccess.verb)
    return [access_model(access) for access in session.scalars(query)]


def holds(session: Session, *, project_id: int, role: str, access: ResourceAccess) -> bool:
    return is_granted(session, project_id=project_id, role=role, microservice=access.microservice,
                      resource=access.resource, verb=access.verb)


def find_access(session: Session, *, project_id: int,
                reference: ResourceAccessReference) -> ResourceAccess:
    """A resource access of the project by id, or else by microservice, resource and verb."""
    query = select(ResourceAccess).where(ResourceAccess.project_id == project_id)
    if reference.id is not None:
        query = query.where(ResourceAccess.id == reference.id)
        label = f"Resource access {reference.id}"
    elif reference.microservice and reference.resource and reference.verb:
        query = query.where(ResourceAccess.microservice == reference.microservice,
                            ResourceAccess.resource == reference.resource,
                            ResourceAccess.verb == reference.verb.root)
        label = (f"Resource access {reference.resource}@{reference.verb.root} of "
                 f"{reference.microservice}")
    else:
        raise Unprocessable(
            "Name the resource access by id, or by microservice, resource and verb.")
    access = session.scalars(query).first()
    if access is None:
        raise NotFound(f"{label} does not exist.")
    return access


def grant(session: Session, *, project_id: int, caller_role: str, name: str,
          reference: ResourceAccessReference) -> ResourceAccessModel:
    role = managed_role(session, project_id=project_id, caller_role=caller_role, role_name=name)
    access = find_access(session, project_id=project_id, reference=reference)
    if not holds(session, project_id=project_id, role=caller_role, access=access):
        raise Forbidden(f"Role {caller_role} does not hold {access.resource}@{access.verb} of "
                        f"{access.microservice}, so it cannot grant it.")
    if session.get(RoleResource, (role.id, access.id)) is None:
        session.add(RoleResource(role_id=role.id, resource_access_id=access.id))
    session.commit()
    return access_model(access)


def withdraw(session: Session, *, project_id: int, caller_role: str, name: str,
             access_id: int) -> None:
    role = managed_role(session, project_id=project_id, caller_role=caller_role, role_name=name)
    access = find_access(session, project_id=project_id,
                         reference=ResourceAccessReference(id=access_id))
    if not holds(session, project_id=project_id, role=caller_role, access=access):
        raise Forbidden(f"Role {caller_role} does not hold resource access {access_id}, so it "
                        "cannot withdraw it.")
    removed = session.execute(delete(RoleResource).where(
        RoleResource.role_id == role.id, RoleResource.resource_access_id == access.id)).rowcount
    if not removed:
        session.rollback()
        roles = project_roles(session, project_id)
        holder = next((item.name for item in chain(roles, name)[1:]
                       if session.get(RoleResource, (item.id, access.id)) is not None), None)
        if holder is not None:
            raise Conflict(f"Role {name} holds resource access {access_id} through role {holder}; "
                           f"withdraw it from {holder}.")
        raise NotFound(f"Role {name} does not hold resource access {access_id}.")
    session.commit()


def _role(roles: dict[str, Role], name: str) -> Role:
    if name not in roles:
        raise NotFound(f"Role '{name}' does not exist.")
    return roles[name]


def _parent_name(roles: dict[str, Role], role: Role) -> str | None:
    found = chain(roles, role.name)
    return found[1].name if len(found) > 1 else None


def _addresses(role: RoleModel) -> list[str]:
    return [item.root if hasattr(item, "root") else str(item)
            for item in role.authorizedAddresses or []]

