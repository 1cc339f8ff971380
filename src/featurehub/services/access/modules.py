"""UI modules of an application: `conf` is a JSON document."""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.access import UIModule
from featurehub.errors import NotFound, Unprocessable
from featurehub.models.rs_access import Module, Page
from featurehub.web import PageRequest, fetch_page, order_by

SORTABLE = {"id": UIModule.id, "type": UIModule.type, "description": UIModule.description,
            "container": UIModule.container, "active": UIModule.active}


def to_model(module: UIModule) -> Module:
    page_fields = {"title": module.page_title, "home": module.page_home,
                   "iconType": module.page_icon_type, "customIconURL": module.page_custom_icon_url}
    page = Page(**page_fields) if any(v is not None for v in page_fields.values()) else None
    return Module(id=module.id, applicationId=module.application_id, type=module.type,
                  description=module.description, container=module.container,
                  active=module.active, conf=module.conf, page=page)


def list_modules(session: Session, *, project_id: int, application_id: str, active: bool | None,
                 module_type: str | None, page: PageRequest) -> tuple[list[Module], int]:
    query = select(UIModule).where(UIModule.project_id == project_id,
                                   UIModule.application_id == application_id)
    if active is not None:
        query = query.where(UIModule.active.is_(active))
    if module_type is not None:
        query = query.where(UIModule.type == module_type)
    rows, total = fetch_page(session, query.order_by(
        *order_by(page, SORTABLE, default=[("id", True)])), page)
    return [to_model(row) for row in rows], total


def get_module(session: Session, *, project_id: int, application_id: str, module_id: int) -> Module:
    return to_model(_module(session, project_id, application_id, module_id))


def create_module(session: Session, *, project_id: int, application_id: str,
                  module: Module) -> Module:
    """The module joins the application of the path, whatever its body says."""
    stored = UIModule(project_id=project_id, application_id=application_id)
    _apply(stored, module)
    session.add(stored)
    session.commit()
    return to_model(stored)


def update_module(session: Session, *, project_id: int, application_id: str, module_id: int,
                  module: Module) -> Module:
    if module.applicationId.root != application_id or (
            module.id is not None and module.id != module_id):
        raise Unprocessable(
            f"The module of the body ({module.applicationId.root}, {module.id}) is not the one "
            f"of the path ({application_id}, {module_id}).")
    stored = _module(session, project_id, application_id, module_id)
    _apply(stored, module)
    session.commit()
    return to_model(stored)


def delete_module(session: Session, *, project_id: int, application_id: str,
                  module_id: int) -> None:
    session.delete(_module(session, project_id, application_id, module_id))
    session.commit()


def _apply(stored: UIModule, module: Module) -> None:
    if module.conf is not None:
        try:
            json.loads(module.conf)
        except ValueError as error:
            raise Unprocessable(f"The module conf is not valid JSON: {error}.") from None
    page = module.page or Page()
    stored.type, stored.description = module.type, module.description
    stored.container, stored.active, stored.conf = module.container, module.active, module.conf
    stored.page_title, stored.page_home = page.title, page.home
    stored.page_icon_type, stored.page_custom_icon_url = page.iconType, page.customIconURL


def _module(session: Session, project_id: int, application_id: str, module_id: int) -> UIModule:
    module = session.scalars(select(UIModule).where(
        UIModule.project_id == project_id, UIModule.application_id == application_id,
        UIModule.id == module_id)).first()
    if module is None:
        raise NotFound(f"Module {module_id} of application '{application_id}' does not exist.")
    return module
