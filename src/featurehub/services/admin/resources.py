"""Resource accesses: the registered endpoints of each microservice in a project."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from featurehub.db.platform import ResourceAccess, Role, RoleResource
from featurehub.errors import NotFound, Unprocessable
from featurehub.models.rs_admin_resources import EndpointRegistration
from featurehub.models.rs_admin_roles import ResourceAccess as ResourceAccessModel
from featurehub.services.admin.roles import access_model
from featurehub.services.endpoints import Endpoint
from featurehub.services.projects import register_endpoints
from featurehub.web import PageRequest, fetch_page, order_by

SORTABLE = {"id": ResourceAccess.id, "microservice": ResourceAccess.microservice,
            "resource": ResourceAccess.resource, "verb": ResourceAccess.verb,
            "defaultRole": ResourceAccess.default_role,
            "controllerSimpleName": ResourceAccess.controller}


def list_accesses(session: Session, *, project_id: int,
                  page: PageRequest) -> tuple[list[ResourceAccessModel], int]:
    query = select(ResourceAccess).where(ResourceAccess.project_id == project_id).order_by(
        *order_by(page, SORTABLE, default=[("id", True)]))
    rows, total = fetch_page(session, query, page)
    return [access_model(row) for row in rows], total


def get_access(session: Session, *, project_id: int, access_id: int) -> ResourceAccessModel:
    return access_model(_access(session, project_id, access_id))


def update_access(session: Session, *, project_id: int, access_id: int,
                  access: ResourceAccessModel) -> ResourceAccessModel:
    """Only the default role and the description change; a new default role takes the grant
    of the old one (the roles above the new one gain it, those only above the old one lose it)."""
    if access.id is not None and access.id != access_id:
        raise Unprocessable(f"The resource access id in the body ({access.id}) is not the "
                            f"path's ({access_id}).")
    stored = _access(session, project_id, access_id)
    fixed = {"microservice": (access.microservice, stored.microservice),
             "resource": (access.resource, stored.resource),
             "verb": (access.verb.root, stored.verb)}
    for name, (given, current) in fixed.items():
        if given != current:
            raise Unprocessable(f"The {name} of resource access {access_id} is '{current}' and "
                                "cannot change.")
    new_role = access.defaultRole.root
    if new_role != stored.default_role:
        roles = {role.name: role.id for role in session.scalars(
            select(Role).where(Role.project_id == project_id, Role.name.in_(
                [stored.default_role, new_role])))}
        if stored.default_role in roles:
            session.execute(delete(RoleResource).where(
                RoleResource.role_id == roles[stored.default_role],
                RoleResource.resource_access_id == stored.id))
        if session.get(RoleResource, (roles[new_role], stored.id)) is None:
            session.add(RoleResource(role_id=roles[new_role], resource_access_id=stored.id))
        stored.default_role = new_role
    stored.description = access.description
    session.commit()
    return access_model(stored)


def registered_endpoints(session: Session, *, project_id: int,
                         microservice: str) -> list[EndpointRegistration]:
    accesses = session.scalars(select(ResourceAccess).where(
        ResourceAccess.project_id == project_id, ResourceAccess.microservice == microservice,
    ).order_by(ResourceAccess.resource, ResourceAccess.verb)).all()
    granted: dict[int, list[str]] = {}
    for access_id, role_name in session.execute(
            select(RoleResource.resource_access_id, Role.name)
            .join(Role, Role.id == RoleResource.role_id)
            .where(RoleResource.resource_access_id.in_([access.id for access in accesses]))
            .order_by(Role.name)):
        granted.setdefault(access_id, []).append(role_name)
    return [EndpointRegistration(
        autorizedRoles=[{"authority": f"ROLE_{name}", "roleName": name, "authorizedIpAdresses": []}
                        for name in granted.get(access.id, [])],
        controllerSimpleName=access.controller, fullPath=access.resource, method=access.verb,
        resourceAccess=access_model(access).model_dump(),
        resourceMappingId=f"{access.controller}_{access.resource}_{access.verb}",
    ) for access in accesses]


def register(session: Session, *, project_id: int, microservice: str,
             items: list[EndpointRegistration]) -> list[EndpointRegistration]:
    """New endpoints are granted to their default role and to the roles they name; endpoints
    already registered keep their (possibly administrator-changed) grants."""
    roles = {role.name: role.id for role in session.scalars(
        select(Role).where(Role.project_id == project_id))}
    endpoints, named_roles = [], {}
    for item in items:
        reference = item.resourceAccess
        default_role = (reference.defaultRole.root if reference and reference.defaultRole
                        else "PROJECT_ADMIN")
        endpoint = Endpoint(
            microservice=microservice, controller=item.controllerSimpleName or microservice,
            resource=item.fullPath, verb=item.method.root, default_role=default_role,
            description=reference.description if reference else None, operation_id="")
        endpoints.append(endpoint)
        names = [authority.roleName for authority in item.autorizedRoles or []
                 if authority.roleName]
        unknown = [name for name in names if name not in roles]
        if unknown:
            raise Unprocessable(f"Endpoint {endpoint.key} names unknown roles: "
                                f"{', '.join(sorted(set(unknown)))}.")
        named_roles[(endpoint.resource, endpoint.verb)] = names
    existing = set(session.execute(select(ResourceAccess.resource, ResourceAccess.verb).where(
        ResourceAccess.project_id == project_id, ResourceAccess.microservice == microservice)))
    register_endpoints(session, project_id=project_id, microservice=microservice,
                       endpoints=endpoints)
    session.flush()
    new_ids = {(access.resource, access.verb): access.id for access in session.scalars(
        select(ResourceAccess).where(ResourceAccess.project_id == project_id,
                                     ResourceAccess.microservice == microservice))}
    for key, names in named_roles.items():
        if key in existing:
            continue
        for name in set(names):
            if session.get(RoleResource, (roles[name], new_ids[key])) is None:
                session.add(RoleResource(role_id=roles[name], resource_access_id=new_ids[key]))
    session.commit()
    return registered_endpoints(session, project_id=project_id, microservice=microservice)


def controllers(session: Session, *, project_id: int, microservice: str) -> list[str]:
    return list(session.scalars(select(ResourceAccess.controller).where(
        ResourceAccess.project_id == project_id, ResourceAccess.microservice == microservice,
    ).distinct().order_by(ResourceAccess.controller)))


def controller_accesses(session: Session, *, project_id: int, microservice: str,
                        controller: str) -> list[ResourceAccessModel]:
    accesses = session.scalars(select(ResourceAccess).where(
        ResourceAccess.project_id == project_id, ResourceAccess.microservice == microservice,
        ResourceAccess.controller == controller,
    ).order_by(ResourceAccess.resource, ResourceAccess.verb)).all()
    if not accesses:
        raise NotFound(f"Microservice '{microservice}' has no controller '{controller}'.")
    return [access_model(access) for access in accesses]


def _access(session: Session, project_id: int, access_id: int) -> ResourceAccess:
    access = session.scalars(select(ResourceAccess).where(
        ResourceAccess.project_id == project_id, ResourceAccess.id == access_id)).first()
    if access is None:
        raise NotFound(f"Resource access {access_id} does not exist.")
    return access

