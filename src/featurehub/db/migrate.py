"""Apply the alembic migrations (every microservice's branch) to a database."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

from featurehub.db.base import STARTUP_LOCK

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(engine: Engine) -> None:
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # Processes starting together on one database migrate one after the other.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": STARTUP_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, "heads")
