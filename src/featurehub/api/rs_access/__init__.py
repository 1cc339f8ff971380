"""rs-access handlers (interface configuration)."""

from featurehub.api.rs_access.themes import (
    create_theme,
    delete_theme,
    get_theme,
    list_themes,
    update_theme,
)
from featurehub.api.settings import delete_setting, get_settings, update_setting
from featurehub.services.access import settings as _settings  # noqa: F401  (definitions)

__all__ = [
    "create_theme", "delete_setting", "delete_theme", "get_settings", "get_theme", "list_themes",
    "update_setting", "update_theme",
]
