"""Databases the suite runs against: a SQLite file, and PostgreSQL when it is reachable
(a database of its own per run, dropped at the end)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_ADMIN_URL = os.environ.get(
    "FEATUREHUB_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def postgres_unavailable_reason() -> str | None:
    try:
        engine = create_engine(POSTGRES_ADMIN_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as connection:
            connection.execute(text("select 1"))
        engine.dispose()
    except Exception as error:  # noqa: BLE001 - any failure means "not reachable"
        return f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {type(error).__name__}"
    return None


@contextmanager
def postgres_database(prefix: str = "featurehub_test") -> Iterator[str]:
    """A fresh, empty PostgreSQL database; yields its URL and drops it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as connection:
            connection.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"
            ), {"name": name})
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'featurehub.db'}"


@contextmanager
def database_for(backend: str, directory: Path, prefix: str = "featurehub_test"
                 ) -> Iterator[str]:
    """A fresh database of `backend` (sqlite or postgresql); PostgreSQL runs are skipped, with
    the reason, when it is unreachable or FEATUREHUB_TEST_SKIP_POSTGRES is set."""
    import pytest

    if backend == "sqlite":
        yield sqlite_url(directory)
        return
    if os.environ.get("FEATUREHUB_TEST_SKIP_POSTGRES"):
        pytest.skip("PostgreSQL runs disabled by FEATUREHUB_TEST_SKIP_POSTGRES")
    reason = postgres_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with postgres_database(prefix) as url:
        yield url
