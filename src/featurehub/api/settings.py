"""Generic settings handlers, included by every microservice's handler package."""

from __future__ import annotations

from typing import Any

from featurehub.models.common import Setting as SettingModel
from featurehub.runtime import db_session
from featurehub.security.authorization import current_caller
from featurehub.services import settings


def get_settings(names: list[str] | None = None) -> list[dict[str, Any]]:
    """The settings of the caller's microservice and project."""
    caller = current_caller()
    found = settings.list_settings(db_session(), project_id=caller.project_id,
                                   microservice=caller.microservice, names=names)
    return [{"content": item.as_dict(), "links": []} for item in found]


def update_setting(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """Set one setting's value."""
    caller = current_caller()
    setting = SettingModel.model_validate(body)
    updated = settings.update_setting(db_session(), project_id=caller.project_id,
                                      microservice=caller.microservice, name=name,
                                      body_name=setting.name, value=setting.value,
                                      caller_role=caller.role)
    return {"content": updated.as_dict(), "links": []}


def delete_setting(name: str) -> dict[str, Any]:
    """Reset one setting to its default."""
    caller = current_caller()
    reset = settings.reset_setting(db_session(), project_id=caller.project_id,
                                   microservice=caller.microservice, name=name)
    return {"content": reset.as_dict(), "links": []}
