"""Settings of rs-fem (per project, through the generic /settings operations)."""

from featurehub.services.settings import SettingDefinition, define

MICROSERVICE = "rs-fem"
DISSEMINATION_RECIPIENTS = "dissemination_recipients"
FILE_FETCH_TIMEOUT = "file_fetch_timeout_seconds"

define(
    MICROSERVICE,
    SettingDefinition(DISSEMINATION_RECIPIENTS,
                      "Recipients whose acknowledgement of each new product is awaited: a created "
                      "product is PENDING for each until a patch names it in "
                      "metadata.acknowledgedRecipient.",
                      [], {"type": "array", "maxItems": 100, "uniqueItems": True,
                           "items": {"type": "string", "minLength": 1, "maxLength": 128}}),
    SettingDefinition(FILE_FETCH_TIMEOUT,
                      "Seconds allowed to connect to and read from the URL of a file to store.",
                      30, {"type": "integer", "minimum": 1, "maximum": 3600}),
)
