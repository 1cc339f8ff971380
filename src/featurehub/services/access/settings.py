"""Settings of rs-access."""

from featurehub.services.settings import SettingDefinition, define

MICROSERVICE = "rs-access"
TOPONYM_EXPIRATION_DAYS = "toponym_expiration_days"
TOPONYM_DAILY_LIMIT = "toponym_daily_registration_limit"

define(
    MICROSERVICE,
    SettingDefinition(TOPONYM_EXPIRATION_DAYS,
                      "Days after which a registered (not visible) toponym expires unless read.",
                      30, {"type": "integer", "minimum": 1, "maximum": 3650}),
    SettingDefinition(TOPONYM_DAILY_LIMIT,
                      "Toponym registrations allowed per user and day.",
                      30, {"type": "integer", "minimum": 0, "maximum": 100000}),
)
