"""UI configuration and UI layout: one of each per application."""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.access import UIConfiguration, UILayout
from featurehub.errors import NotFound, Unprocessable
from featurehub.models.rs_access import Configuration, Layout

# Answered while an application has no stored layout: a main container holding the dynamic
# content (where modules are shown), framed by a header and a footer in the user interface.
_CONTENT = {"id": "page_content", "type": "RowContainer", "classes": [], "styles": {},
            "dynamicContent": True}
DEFAULT_LAYOUTS = {
    "user": {"id": "main", "type": "MainContainer", "classes": [], "styles": {}, "containers": [
        {"id": "page_top", "type": "RowContainer", "classes": [], "styles": {}},
        _CONTENT,
        {"id": "page_bottom", "type": "RowContainer", "classes": [], "styles": {}},
    ]},
    "portal": {"id": "main", "type": "MainContainer", "classes": [], "styles": {},
               "containers": [_CONTENT]},
}


def default_layout(application_id: str) -> str:
    return json.dumps(DEFAULT_LAYOUTS.get(application_id, DEFAULT_LAYOUTS["portal"]))


def get_configuration(session: Session, *, project_id: int,
                      application_id: str) -> Configuration | None:
    stored = _configuration(session, project_id, application_id)
    return None if stored is None else Configuration(configuration=stored.configuration)


def save_configuration(session: Session, *, project_id: int, application_id: str,
                       configuration: Configuration, must_exist: bool = False) -> Configuration:
    stored = _configuration(session, project_id, application_id)
    if stored is None:
        if must_exist:
            raise NotFound(f"Application '{application_id}' has no UI configuration.")
        stored = UIConfiguration(project_id=project_id, application_id=application_id)
        session.add(stored)
    stored.configuration = configuration.configuration
    session.commit()
    return Configuration(configuration=stored.configuration)


def get_layout(session: Session, *, project_id: int, application_id: str) -> Layout:
    stored = _layout(session, project_id, application_id)
    if stored is None:
        return Layout(applicationId=application_id, layout=default_layout(application_id))
    return Layout(id=stored.id, applicationId=application_id, layout=stored.layout)


def save_layout(session: Session, *, project_id: int, application_id: str,
                layout: Layout) -> Layout:
    if layout.applicationId.root != application_id:
        raise Unprocessable(f"The layout of the body is for application "
                            f"'{layout.applicationId.root}', not '{application_id}'.")
    try:
        if not isinstance(json.loads(layout.layout), dict):
            raise ValueError("not an object")
    except ValueError as error:
        raise Unprocessable(f"The layout is not a JSON object: {error}.") from None
    stored = _layout(session, project_id, application_id)
    if stored is None:
        stored = UILayout(project_id=project_id, application_id=application_id)
        session.add(stored)
    elif layout.id is not None and layout.id != stored.id:
        raise Unprocessable(f"The layout id in the body ({layout.id}) is not the stored one "
                            f"({stored.id}).")
    stored.layout = layout.layout
    session.commit()
    return Layout(id=stored.id, applicationId=application_id, layout=stored.layout)


def _configuration(session: Session, project_id: int,
                   application_id: str) -> UIConfiguration | None:
    return session.scalars(select(UIConfiguration).where(
        UIConfiguration.project_id == project_id,
        UIConfiguration.application_id == application_id)).first()


def _layout(session: Session, project_id: int, application_id: str) -> UILayout | None:
    return session.scalars(select(UILayout).where(
        UILayout.project_id == project_id, UILayout.application_id == application_id)).first()
