"""Settings of rs-admin (also read and written through `/accesses/settings`)."""

from featurehub.services.settings import define

MICROSERVICE = "rs-admin"

define(MICROSERVICE)
