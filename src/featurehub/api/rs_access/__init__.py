"""rs-access handlers (interface configuration)."""

from featurehub.api.rs_access.themes import (
    create_theme,
    delete_theme,
    get_theme,
    list_themes,
    update_theme,
)

__all__ = ["create_theme", "delete_theme", "get_theme", "list_themes", "update_theme"]
