"""Declarative base, engine and session factory."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import DateTime, Engine, MetaData, create_engine, event, exc, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from featurehub.db.sqlite import AUTOCHECKPOINT_PAGES, QueuedWriterConnection, is_reading, reading

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


STARTUP_LOCK = 7_246_001  # PostgreSQL advisory lock held while an instance migrates/bootstraps


def hold_startup_lock(session: Session) -> None:
    """Serialise start-up work (bootstrap, endpoint registration) of processes sharing a
    PostgreSQL database; SQLite transactions are already exclusive (BEGIN IMMEDIATE)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": STARTUP_LOCK})


@contextmanager
def read_only(session: Session) -> Iterator[Session]:
    """Reads in a transaction of their own, ended (rolled back) with the block; on SQLite it
    neither waits for nor holds the writer lock. Inside a transaction already under way, the
    reads simply join it.

    On PostgreSQL the block runs in autocommit: under READ COMMITTED each statement takes its
    own snapshot whether or not a transaction holds them, so the reads see the same, and the
    BEGIN and ROLLBACK round trips are saved (four of a one-feature POST's eleven: those of the
    authorisation and of the acceptance lookups). The pool gives the connection back its
    isolation level when the block ends."""
    if session.in_transaction():
        yield session
        return
    try:
        with reading():
            if session.get_bind().dialect.name == "postgresql":
                session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
            yield session
    finally:
        session.rollback()


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        on_disk = bool(parsed.database) and parsed.database != ":memory:"
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False,
                                                  "factory": QueuedWriterConnection})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            # Transactions are begun by us (below), so that a writer never has to upgrade a
            # read lock mid-transaction, which SQLite refuses at once instead of waiting.
            dbapi_connection.isolation_level = None
            if on_disk:
                dbapi_connection.queue_for_writes(str(Path(parsed.database).resolve()))
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            # Checkpoints run in the background (featurehub.db.sqlite), not in commits.
            cursor.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection):  # type: ignore[no-untyped-def]
            if is_reading():
                connection.exec_driver_sql("BEGIN")
                return
            connection.connection.dbapi_connection.begin_write()
            connection.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    # psycopg prepares a statement on the server after its fifth run, and PostgreSQL may then
    # plan it once for every parameter: the batch lookups `= ANY(<array>)` of the feature
    # worker became several times slower with such generic plans (end-to-end ingest 5,300 ->
    # 3,400 features/s). Statements are planned for their parameters at each run instead.
    connect_args = {"prepare_threshold": None} if parsed.get_driver_name() == "psycopg" else {}
    engine = create_engine(url, pool_size=10, max_overflow=20, connect_args=connect_args)
    ping_when_idle(engine)
    return engine


# A pooled connection used this recently is taken as alive without a ping (HikariCP's default
# window): a ping per checkout cost a round trip on each of the three transactions of an
# acceptance, 0.5-1 ms of a one-feature POST on PostgreSQL.
PING_AFTER_IDLE_SECONDS = 0.5


def ping_when_idle(engine: Engine, idle_seconds: float = PING_AFTER_IDLE_SECONDS) -> None:
    """Ping a pooled connection at checkout when it has been idle longer than `idle_seconds`;
    a dead one (the server restarted, a proxy dropped it) is replaced before anyone uses it."""

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection, record):  # type: ignore[no-untyped-def]
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, _proxy):  # type: ignore[no-untyped-def]
        idle_since = record.info.get("idle_since")
        if idle_since is None or time.monotonic() - idle_since <= idle_seconds:
            return
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as error:
            alive = not engine.dialect.is_disconnect(error, dbapi_connection, None)
            if alive:
                raise
        if not alive:
            # The pool discards this connection and checks out (or opens) another.
            raise exc.DisconnectionError("pooled connection found dead at checkout")


def make_session_factory(engine: Engine) -> sessionmaker:
    return sessionmaker(bind=engine, expire_on_commit=False)
