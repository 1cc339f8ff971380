"""Imports every table module so that Base.metadata is complete (alembic, tests)."""

from featurehub.db import access, fem, platform  # noqa: F401
