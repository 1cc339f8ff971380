"""rs-admin handlers (administration). Each module names its operations in `__all__`; the
functions carry the interface's operation names, as the contract's operationIds do."""

from featurehub.api.rs_admin.accesses import *  # noqa: F403
from featurehub.api.rs_admin.notifications import *  # noqa: F403
from featurehub.api.rs_admin.resources import *  # noqa: F403
from featurehub.api.rs_admin.roles import *  # noqa: F403
from featurehub.api.rs_admin.users import *  # noqa: F403
from featurehub.api.settings import delete_setting, get_settings, update_setting  # noqa: F401
from featurehub.services.admin import settings as _settings  # noqa: F401  (definitions)
