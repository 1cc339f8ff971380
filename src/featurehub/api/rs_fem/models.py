"""Data models of the project."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_fem import DataModel
from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.fem import datamodels
from featurehub.web import PageRequest, paged_result, wrap


def list_models(page: int = 0, size: int = 20) -> dict[str, Any]:
    """A page of the project's models (its own and the models directory's), by name."""
    paging = PageRequest.of(page, size, None)
    items, total = datamodels.list_models(
        db_session(), project_id=current_caller().project_id,
        models_dir=current_runtime().settings.models_dir, offset=paging.offset,
        limit=paging.size)
    return paged_result([item.as_dict() for item in items], total, paging)


def get_model(name: str) -> dict[str, Any]:
    """One model."""
    return wrap(datamodels.get_model(db_session(), project_id=current_caller().project_id,
                                     name=name,
                                     models_dir=current_runtime().settings.models_dir).as_dict())


def put_model(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create or replace a model."""
    model = DataModel.model_validate(body)
    return wrap(datamodels.put_model(
        db_session(), project_id=current_caller().project_id, name=name, body_name=model.name,
        description=model.description, schema=body["schema"]).as_dict())


def delete_model(name: str) -> dict[str, Any]:
    """Delete a model no product uses."""
    datamodels.delete_model(db_session(), project_id=current_caller().project_id, name=name,
                            models_dir=current_runtime().settings.models_dir)
    return wrap(None)
