"""UI configuration and UI layout of an application."""

from __future__ import annotations

from typing import Any

from flask import Response

from featurehub.models.rs_access import Configuration, Layout
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services.access import configuration
from featurehub.web import wrap


def get_configuration(applicationId: str, scope: str | None = None) -> Any:  # noqa: N803
    """The application's UI configuration; 204 when it has none."""
    stored = configuration.get_configuration(
        db_session(), project_id=current_caller().project_id, application_id=applicationId)
    return Response(status=204, mimetype="application/json") if stored is None else wrap(stored)


def create_configuration(applicationId: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Register (or replace) the application's UI configuration."""
    return wrap(configuration.save_configuration(
        db_session(), project_id=current_caller().project_id, application_id=applicationId,
        configuration=Configuration.model_validate(body)))


def update_configuration(applicationId: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Update the application's stored UI configuration."""
    return wrap(configuration.save_configuration(
        db_session(), project_id=current_caller().project_id, application_id=applicationId,
        configuration=Configuration.model_validate(body), must_exist=True))


def get_layout(applicationId: str, scope: str | None = None) -> dict[str, Any]:  # noqa: N803
    """The application's layout, or its default one."""
    return wrap(configuration.get_layout(db_session(), project_id=current_caller().project_id,
                                         application_id=applicationId))


def update_layout(applicationId: str, body: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
    """Store the application's layout."""
    return wrap(configuration.save_layout(db_session(), project_id=current_caller().project_id,
                                          application_id=applicationId,
                                          layout=Layout.model_validate(body)))
