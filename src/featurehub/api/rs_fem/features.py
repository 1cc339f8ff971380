"""Creation and patch requests.

The body was parsed and validated against the contract (jsonschema-rs) on its way in; the parsed
body is taken over from the validator and handed to the service as it is, without a pydantic
model: a model of 1,000 GeoJSON features would cost more than the whole acceptance."""

from __future__ import annotations

from typing import Any

import orjson
from flask import request

from featurehub.runtime import current_runtime, db_session
from featurehub.security.authorization import current_caller
from featurehub.services.fem import acceptance
from featurehub.services.fem.worker import wake_embedded_worker
from featurehub.validation import parsed_body


def _body() -> dict[str, Any]:
    body = parsed_body(request.environ)
    return body if body is not None else orjson.loads(request.get_data())


def create_features() -> tuple[dict[str, Any], int]:
    """Grant or deny the creation of each feature; granted requests are processed later."""
    caller, runtime = current_caller(), current_runtime()
    answer = acceptance.grant_creations(
        db_session(), project_id=caller.project_id, project=caller.project, body=_body(),
        models_dir=runtime.settings.models_dir)
    wake_embedded_worker(runtime)
    return answer.as_dict(), 201


def patch_features() -> tuple[dict[str, Any], int]:
    """Grant or deny the patch of each feature (identified by urn)."""
    caller, runtime = current_caller(), current_runtime()
    answer = acceptance.grant_patches(
        db_session(), project_id=caller.project_id, project=caller.project, body=_body(),
        file_update_mode=request.headers.get("request.file_update_mode", "APPEND"),
        models_dir=runtime.settings.models_dir)
    wake_embedded_worker(runtime)
    return answer.as_dict(), 201
