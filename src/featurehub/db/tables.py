"""Imports every table module so that Base.metadata is complete (alembic, tests)."""

from featurehub.db import access, admin, fem, platform  # noqa: F401
