"""Alembic environment: the URL comes from the caller's config or FEATUREHUB_DATABASE_URL."""

from __future__ import annotations

from alembic import context

from featurehub.db import tables  # noqa: F401  (fills Base.metadata)
from featurehub.db.base import Base, make_engine
from featurehub.settings import Settings

config = context.config
url = config.get_main_option("sqlalchemy.url") or Settings.from_env().database_url


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
