"""rs-access handlers (interface configuration)."""

from featurehub.api.rs_access.configuration import (
    create_configuration,
    get_configuration,
    get_layout,
    update_configuration,
    update_layout,
)
from featurehub.api.rs_access.history import (
    create_search_history,
    delete_search_history,
    list_search_history,
    update_search_history,
)
from featurehub.api.rs_access.modules import (
    create_module,
    delete_module,
    get_module,
    list_modules,
    update_module,
)
from featurehub.api.rs_access.themes import (
    create_theme,
    delete_theme,
    get_theme,
    list_themes,
    update_theme,
)
from featurehub.api.rs_access.toponyms import (
    create_toponym,
    get_toponym,
    list_toponyms,
    search_toponyms,
)
from featurehub.api.settings import delete_setting, get_settings, update_setting
from featurehub.services.access import settings as _settings  # noqa: F401  (definitions)

__all__ = [
    "create_configuration", "create_module", "create_search_history", "create_theme",
    "create_toponym", "delete_module", "delete_search_history", "delete_setting", "delete_theme",
    "get_configuration", "get_layout", "get_module", "get_settings", "get_theme", "get_toponym",
    "list_modules", "list_search_history", "list_themes", "list_toponyms", "search_toponyms",
    "update_configuration", "update_layout", "update_module", "update_search_history",
    "update_setting", "update_theme",
]
