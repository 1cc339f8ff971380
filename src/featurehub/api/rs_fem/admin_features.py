"""Stored products: search, one by urn, file content."""

from __future__ import annotations

from typing import Any

from flask import Response, send_file

from featurehub.api.rs_fem.bodies import optional_json
from featurehub.models.rs_fem import FeatureFilter
from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.fem import features
from featurehub.web import PageRequest, paged_result, wrap


def search_features(body: dict[str, Any] | None = None, page: int = 0, size: int = 20,
                    sort: list[str] | None = None) -> dict[str, Any]:
    """A page of stored products matching the filter."""
    caller, paging = current_caller(), PageRequest.of(page, size, sort)
    criteria = FeatureFilter.model_validate(optional_json(body)).model_dump(
        mode="json", exclude_none=True)
    items, total = features.search_features(
        db_session(), project_id=caller.project_id, project=caller.project, criteria=criteria,
        page=paging, settings_file=current_runtime().settings.storage_settings_file)
    return paged_result(items, total, paging)


def get_feature(urn: str) -> dict[str, Any]:
    """One stored product by urn."""
    caller = current_caller()
    return wrap(features.get_feature(
        db_session(), project_id=caller.project_id, project=caller.project, urn=urn,
        settings_file=current_runtime().settings.storage_settings_file))


def download_file(urn: str, checksum: str) -> Response:
    """The content of an online file."""
    caller = current_caller()
    content = features.file_content(
        db_session(), project_id=caller.project_id, project=caller.project, urn=urn,
        checksum=checksum, settings_file=current_runtime().settings.storage_settings_file)
    return send_file(content.path, mimetype="application/octet-stream", as_attachment=True,
                     download_name=content.filename)
