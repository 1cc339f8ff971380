"""Resource accesses and the registration of microservice endpoints."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_admin_resources import EndpointRegistration
from featurehub.models.rs_admin_roles import ResourceAccess
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.admin import resources
from featurehub.web import PageRequest, dump, paged_result, wrap

__all__ = [
    "getAllResourceAccesses", "getResourceAccess", "registerMicroserviceEndpoints",
    "retrieveControllerResources", "retrieveMicroserviceControllers",
    "retrieveMicroserviceEndpoints", "updateResourceAccess",
]


def _project() -> int:
    return current_caller().project_id


def getAllResourceAccesses(page: int = 0, size: int = 20, sort: list[str] | None = None,  # noqa: N802
                           scope: str | None = None) -> dict[str, Any]:
    request = PageRequest.of(page, size, sort)
    items, total = resources.list_accesses(db_session(), project_id=_project(), page=request)
    return paged_result(items, total, request)


def getResourceAccess(resource_id: int, scope: str | None = None) -> dict[str, Any]:  # noqa: N802
    return wrap(resources.get_access(db_session(), project_id=_project(), access_id=resource_id))


def updateResourceAccess(resource_id: int, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    return wrap(resources.update_access(db_session(), project_id=_project(),
                                        access_id=resource_id,
                                        access=ResourceAccess.model_validate(body)))


def retrieveMicroserviceEndpoints(microservicename: str) -> list[dict[str, Any]]:  # noqa: N802
    return [dump(item) for item in resources.registered_endpoints(
        db_session(), project_id=_project(), microservice=microservicename)]


def registerMicroserviceEndpoints(microservicename: str,  # noqa: N802
                                  body: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = [EndpointRegistration.model_validate(item) for item in body]
    return [dump(item) for item in resources.register(
        db_session(), project_id=_project(), microservice=microservicename, items=items)]


def retrieveMicroserviceControllers(microservicename: str) -> list[str]:  # noqa: N802
    return resources.controllers(db_session(), project_id=_project(), microservice=microservicename)


def retrieveControllerResources(microservicename: str,  # noqa: N802
                                controllername: str) -> list[dict[str, Any]]:
    return [wrap(access) for access in resources.controller_accesses(
        db_session(), project_id=_project(), microservice=microservicename,
        controller=controllername)]
