"""rs-fem handlers (feature manager)."""

import logging

from featurehub.api.rs_fem.admin_features import download_file, get_feature, search_features
from featurehub.api.rs_fem.events import list_events
from featurehub.api.rs_fem.features import create_features, patch_features
from featurehub.api.rs_fem.models import delete_model, get_model, list_models, put_model
from featurehub.api.rs_fem.requests import (
    delete_requests,
    get_request,
    list_sessions,
    retry_requests,
    search_requests,
)
from featurehub.api.rs_fem.storages import delete_storage, get_storage, list_storages, put_storage
from featurehub.api.settings import delete_setting, get_settings, update_setting
from featurehub.services.fem import settings as _settings  # noqa: F401  (definitions)

# POST and PATCH /features take application/json and application/geo+json: connexion warns about
# it at every call (it picks the JSON schema, the same for both).
logging.getLogger("connexion.operations.openapi3").setLevel(logging.ERROR)

__all__ = [
    "create_features", "delete_model", "delete_requests", "delete_setting", "delete_storage",
    "download_file", "get_feature", "get_model", "get_request", "get_settings", "get_storage",
    "list_events", "list_models", "list_sessions", "list_storages", "patch_features",
    "put_model", "put_storage", "retry_requests", "search_features", "search_requests",
    "update_setting",
]
