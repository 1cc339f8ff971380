"""Settings of rs-admin (also read and written through `/accesses/settings`)."""

from typing import Any

from sqlalchemy.orm import Session

from featurehub.errors import Unprocessable
from featurehub.services.admin import hierarchy
from featurehub.services.settings import SettingDefinition, define

MICROSERVICE = "rs-admin"

ACCEPTANCE_MODE = "acceptance_mode"
DEFAULT_ROLE = "default_role"
DEFAULT_GROUPS = "default_groups"
USER_CREATION_MAIL_RECIPIENTS = "user_creation_mail_recipients"
ACCESS_REQUESTS_PER_HOUR = "access_requests_per_hour"
ACCESS_SETTINGS = (ACCEPTANCE_MODE, DEFAULT_ROLE, DEFAULT_GROUPS, USER_CREATION_MAIL_RECIPIENTS,
                   ACCESS_REQUESTS_PER_HOUR)


def check_default_role(session: Session, project_id: int, caller_role: str, value: Any) -> None:
    """The default role is a role of the project that the caller may give, and neither PUBLIC
    (no access) nor INSTANCE_ADMIN (every project)."""
    if value in ("PUBLIC", "INSTANCE_ADMIN"):
        raise Unprocessable(f"The default role cannot be {value}.")
    hierarchy.role_to_give(session, project_id, caller_role, value)


define(
    MICROSERVICE,
    SettingDefinition(ACCEPTANCE_MODE,
                      "Access requests wait for an administrator (manual) or are granted at once "
                      "(auto-accept).",
                      "auto-accept", {"type": "string", "enum": ["manual", "auto-accept"]}),
    SettingDefinition(DEFAULT_ROLE, "Role given to the users whose access request is recorded.",
                      "REGISTERED_USER", {"type": "string", "minLength": 1, "maxLength": 128},
                      check_default_role),
    SettingDefinition(DEFAULT_GROUPS, "Access groups every new user joins.",
                      [], {"type": "array", "maxItems": 100, "uniqueItems": True,
                           "items": {"type": "string", "minLength": 1, "maxLength": 128}}),
    SettingDefinition(USER_CREATION_MAIL_RECIPIENTS,
                      "Emails told when a user is created or asks for access.",
                      [], {"type": "array", "maxItems": 100, "uniqueItems": True,
                           "items": {"type": "string", "minLength": 3, "maxLength": 255,
                                     "pattern": "^[^@\\s]+@[^@\\s]+$"}}),
    SettingDefinition(ACCESS_REQUESTS_PER_HOUR,
                      "Public access requests taken per client address and hour (each may "
                      "create an account and send e-mails); 0: no limit.",
                      20, {"type": "integer", "minimum": 0, "maximum": 1_000_000}),
)
