"""Feature manager tables (rs-fem): requests (the durable queue), products and their versions,
data models, storage locations, and the outbox of events and notifications."""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    any_,
    bindparam,
    cast,
    literal,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, Session, mapped_column
from sqlalchemy.types import NullType, TypeDecorator

from featurehub.db.base import Base, UTCDateTime, utcnow
from featurehub.services.fem.lifecycle import UNFINISHED_STEPS

# SQLite gives autoincrement only to an INTEGER PRIMARY KEY (its rowid); both are 64-bit there.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class JSONText(TypeDecorator[Any]):
    """JSON kept as text, (de)serialised with orjson: the same on every backend, and several
    times faster than the stdlib on the ingest path."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: object) -> str | None:
        if value is None:
            return None
        if isinstance(value, RawJSON):
            return value.text
        return orjson.dumps(value).decode()

    def process_result_value(self, value: str | None, dialect: object) -> Any:
        return None if value is None else orjson.loads(value)


class RawJSON:
    """A value serialised already (the ingest path serialises each feature once)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class DataModel(Base):
    """A named JSON Schema (draft 2020-12) validating the `properties` of a project's features."""

    __tablename__ = "fem_models"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    description: Mapped[str | None] = mapped_column(String(1024))
    schema: Mapped[Any] = mapped_column(JSONText)
    # Bumped on every change: compiled validators are cached per (project, name, revision).
    revision: Mapped[int] = mapped_column(Integer, default=1)
    updated: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class StorageLocation(Base):
    """Where files of a project are stored, and by which plugin."""

    __tablename__ = "fem_storages"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    plugin: Mapped[str] = mapped_column(String(32))
    configuration: Mapped[Any] = mapped_column(JSONText)


class FeatureRequest(Base):
    """A granted (or denied) creation or patch of one product: the durable work queue."""

    __tablename__ = "fem_requests"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    request_id: Mapped[str] = mapped_column(String(36), unique=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(16))
    state: Mapped[str] = mapped_column(String(16))
    step: Mapped[str] = mapped_column(String(32))
    # 0 HIGH, 1 NORMAL, 2 LOW: ascending order is scheduling order.
    priority: Mapped[int] = mapped_column(SmallInteger, default=1)
    # The product's uuid (name-based on the provider id): requests on one product run one at a
    # time, in acceptance order.
    product_key: Mapped[str | None] = mapped_column(String(36))
    provider_id: Mapped[str | None] = mapped_column(String(1024))
    urn: Mapped[str | None] = mapped_column(String(1024))
    model: Mapped[str | None] = mapped_column(String(256))
    request_owner: Mapped[str] = mapped_column(String(128))
    session_owner: Mapped[str | None] = mapped_column(String(128))
    session: Mapped[str | None] = mapped_column(String(128))
    request_date: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_update: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    errors: Mapped[Any] = mapped_column(JSONText, nullable=True)
    feature: Mapped[Any] = mapped_column(JSONText, nullable=True)
    options: Mapped[Any] = mapped_column(JSONText, nullable=True)
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


Index("ix_fem_requests_queue", FeatureRequest.step, FeatureRequest.priority, FeatureRequest.id)
# The requests a worker may still have to wait for: only these are looked up by product (a
# request waits for the older unfinished ones of its product). The index holds them alone, not
# the finished millions, so that accepting a request (one product key, a random place in the
# tree) writes to a small tree that stays in memory: on SQLite, the insert and commit of 1,000
# requests into a table of 100,000 finished ones went from 19 to 10.5 ms.
def unfinished(step: Any) -> Any:
    """`step IN (<the unfinished steps>)`, the steps written as literals, as in the index."""
    return step.in_([literal(name, literal_execute=True) for name in UNFINISHED_STEPS])


Index("ix_fem_requests_product", FeatureRequest.product_key, FeatureRequest.id,
      sqlite_where=unfinished(FeatureRequest.step),
      postgresql_where=unfinished(FeatureRequest.step))
Index("ix_fem_requests_search", FeatureRequest.project_id, FeatureRequest.type,
      FeatureRequest.state)
Index("ix_fem_requests_session", FeatureRequest.project_id, FeatureRequest.session_owner,
      FeatureRequest.session)


class Feature(Base):
    """One version of a product."""

    __tablename__ = "fem_features"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    urn: Mapped[str] = mapped_column(String(256), unique=True)
    uuid: Mapped[str] = mapped_column(String(36))
    provider_id: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    last: Mapped[bool] = mapped_column(Boolean, default=True)
    entity_type: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(128))
    session_owner: Mapped[str | None] = mapped_column(String(128))
    session: Mapped[str | None] = mapped_column(String(128))
    geometry: Mapped[Any] = mapped_column(JSONText, nullable=True)
    properties: Mapped[Any] = mapped_column(JSONText)
    files: Mapped[Any] = mapped_column(JSONText)
    min_x: Mapped[float | None] = mapped_column(Float)
    min_y: Mapped[float | None] = mapped_column(Float)
    max_x: Mapped[float | None] = mapped_column(Float)
    max_y: Mapped[float | None] = mapped_column(Float)
    # [{recipient, status PENDING|DONE, date}] and its summary NONE|PENDING|DONE.
    dissemination: Mapped[Any] = mapped_column(JSONText)
    dissemination_status: Mapped[str] = mapped_column(String(8), default="NONE")
    created_by: Mapped[str] = mapped_column(String(128))
    updated_by: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_update: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


Index("ix_fem_features_product", Feature.project_id, Feature.uuid, Feature.version)
Index("ix_fem_features_provider", Feature.project_id, Feature.provider_id)
Index("ix_fem_features_updated", Feature.project_id, Feature.last_update)
Index("ix_fem_features_model", Feature.project_id, Feature.model)


class OutboxEntry(Base):
    """An event or notification waiting to be published (the AMQP publisher reads it in id
    order; `GET /events` exposes it meanwhile)."""

    __tablename__ = "fem_outbox"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    body: Mapped[Any] = mapped_column(JSONText)


Index("ix_fem_outbox_project", OutboxEntry.project_id, OutboxEntry.id)


# ---- bulk reads and writes of the ingest path ----

def among(session: Session, column: Any, values: Iterable[Any]) -> Any:
    """`column IN values` for a batch of up to thousands of values: on PostgreSQL one array
    parameter (`= ANY(...)`), which psycopg sends as is, instead of a statement with a
    placeholder per value that it has to rewrite, uncached, at every batch."""
    if session.get_bind().dialect.name == "postgresql":
        values = list(values)
        written = array_literal(values)
        if written is not None:
            # The text goes untyped (NullType: no `::VARCHAR` of its own), so that PostgreSQL
            # reads it as the array at once, a constant of the plan. Typed as text first, the
            # cast to the array would be run again for every row it filters: 3 s, not 3 ms,
            # for a thousand uuids among 5,000 versions.
            return column == any_(cast(bindparam(None, written, type_=NullType()),
                                       ARRAY(column.type)))
        return column == any_(bindparam(None, values, type_=ARRAY(column.type)))
    return column.in_(values)


def _quoted(value: str | None) -> str:
    if value is None:
        return "NULL"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def array_literal(values: Sequence[Any]) -> str | None:
    """A PostgreSQL array literal (`{1,2}`, `{"a","b"}`) of integers or texts (None for any
    other values). psycopg adapts a list item by item in Python: for the thousand ids or
    urns of a batch, its text written here costs a fifth (0.7 against 1.3 ms for integers,
    1.1 against 2.5 ms for uuids, measured with the query)."""
    if all(type(value) is int for value in values):
        return "{" + ",".join(map(str, values)) + "}"
    if all(value is None or type(value) is str for value in values):
        return "{" + ",".join(map(_quoted, values)) + "}"
    return None


def _bound(column: Any, value: Any, dialect: Any) -> Any:
    kind = column.type
    return kind.process_bind_param(value, dialect) if isinstance(kind, TypeDecorator) else value


def _remembering(process: Any) -> Any:
    """A bind processor that reuses its last result for the same object (a batch's rows share
    their dates, and formatting a datetime for SQLite is the dearest processor)."""
    if process is None:
        return None
    last: list[Any] = [object(), None]

    def remembered(value: Any) -> Any:
        if value is not last[0]:
            last[0], last[1] = value, process(value)
        return last[1]

    return remembered


def _converter(column: Any, dialect: Any) -> Any:
    process = column.type._cached_bind_processor(dialect)
    if dialect.name == "postgresql" and isinstance(column.type, UTCDateTime):
        # COPY sends text: a date shared by a batch's rows is formatted once, not per row.
        bound = process

        def process(value: Any) -> str:
            return (bound(value) if bound else value).isoformat()

    return _remembering(process)


def _parameters(dialect: Any, columns: Sequence[Any], names: Sequence[str],
                rows: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """The DBAPI parameters (or COPY rows) of `rows`, values bound once per column and only
    for the columns whose type converts them: SQLAlchemy's own executemany spends more in
    building parameters than SQLite spends writing."""
    converted = [(index, process) for index, column in enumerate(columns)
                 if (process := _converter(column, dialect))]
    values = operator.itemgetter(*names)
    parameters = []
    for row in rows:
        bound = list(values(row)) if len(names) > 1 else [values(row)]
        for index, process in converted:
            value = bound[index]
            if value is not None:
                # JSON encoded ahead (serialize_json): its text, without the processors' calls.
                bound[index] = value.text if type(value) is RawJSON else process(value)
        parameters.append(bound)
    return parameters


def _sqlite_update(connection: Any, table: Table, names: Sequence[str],
                   rows: Sequence[dict[str, Any]]) -> None:
    assigned = [name for name in names if name != "id"]
    parameters = _parameters(connection.dialect,
                                    [table.c[name] for name in [*assigned, "id"]],
                                    [*assigned, "id"], rows)
    cursor = connection.connection.driver_connection.cursor()
    try:
        cursor.executemany(
            f"UPDATE {table.name} SET {', '.join(f'{name} = ?' for name in assigned)} "
            f"WHERE id = ?", parameters)
    finally:
        cursor.close()


def serialize_json(table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Encode the JSON values of `rows` now, in place (as RawJSON), so that writing them
    later, inside a transaction, spends no time in encoding."""
    names = [column.name for column in table.columns if isinstance(column.type, JSONText)]
    encoded: dict[int, RawJSON] = {}  # a value shared by many rows (options) is encoded once
    for row in rows:
        for name in names:
            value = row.get(name)
            if value is not None and not isinstance(value, RawJSON):
                raw = encoded.get(id(value))
                if raw is None:
                    raw = encoded[id(value)] = RawJSON(orjson.dumps(value).decode())
                row[name] = raw


@contextmanager
def streamed_rows(session: Session, table: Table, chunk: int = 250
                  ) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Rows given to the callable are inserted by the end of the block (all with the same
    columns). On PostgreSQL they are copied as they come, a chunk at a time, so that the
    server stores them while the caller decides the next ones; elsewhere they are inserted
    together at the end (on SQLite the writer lock is then held for the insert only)."""
    pending: list[dict[str, Any]] = []
    dialect = session.get_bind().dialect
    if dialect.name != "postgresql":
        yield pending.append
        serialize_json(table, pending)
        insert_rows(session, table, pending)
        return
    with ExitStack() as stack:
        copying: list[Any] = []  # [copy, names, columns] once the first chunk is written

        def flush() -> None:
            if not copying:
                names = list(pending[0])
                cursor = stack.enter_context(
                    session.connection().connection.driver_connection.cursor())
                copying.extend((stack.enter_context(cursor.copy(
                    f"COPY {table.name} ({', '.join(names)}) FROM STDIN")), names,
                    [table.c[name] for name in names]))
            copy, names, columns = copying
            serialize_json(table, pending)
            for values in _parameters(dialect, columns, names, pending):
                copy.write_row(values)
            pending.clear()

        def add(row: dict[str, Any]) -> None:
            pending.append(row)
            if len(pending) >= chunk:
                flush()

        yield add
        if pending:
            flush()


def insert_rows(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """INSERT many rows of the same columns: COPY on PostgreSQL (several times faster than
    a pipeline of INSERTs), one executemany elsewhere. The parameters are built before the
    session's transaction begins, when it has not begun yet (SQLite's writer lock is not held
    while they are)."""
    if not rows:
        return
    dialect = session.get_bind().dialect
    names = list(rows[0])
    columns = [table.c[name] for name in names]
    if dialect.name == "sqlite":
        parameters = _parameters(dialect, columns, names, rows)
        cursor = session.connection().connection.driver_connection.cursor()
        try:
            cursor.executemany(
                f"INSERT INTO {table.name} ({', '.join(names)}) "
                f"VALUES ({', '.join('?' for _ in names)})", parameters)
        finally:
            cursor.close()
        return
    if dialect.name != "postgresql":
        session.connection().execute(table.insert(), list(rows))
        return
    parameters = _parameters(dialect, columns, names, rows)
    raw = session.connection().connection.driver_connection
    with raw.cursor() as cursor, cursor.copy(
            f"COPY {table.name} ({', '.join(names)}) FROM STDIN") as copy:
        for values in parameters:
            copy.write_row(values)


_TEXT_TYPES = (String, Text, JSONText)


def _array(values: list[Any]) -> Any:
    written = array_literal(values)
    return values if written is None else written


def update_rows_by_id(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """UPDATE many rows by id, each dict holding `id` and the new values: on PostgreSQL one
    statement per set of columns (values shared by every row as parameters, the others as
    arrays joined with unnest), elsewhere one executemany per set of columns."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(sorted(row))].append(row)
    connection = session.connection()
    dialect = connection.dialect
    for names, group in groups.items():
        first = group[0]
        shared = [n for n in names if n != "id" and all(r[n] == first[n] for r in group)]
        varying = [n for n in names if n != "id" and n not in shared]
        if dialect.name == "postgresql" and all(
                isinstance(table.c[n].type, _TEXT_TYPES) for n in varying):
            assignments = [f"{n} = :s_{n}" for n in shared] + [f"{n} = v.{n}" for n in varying]
            arrays = ", ".join(["CAST(:ids AS BIGINT[])"] +
                               [f"CAST(:a_{n} AS TEXT[])" for n in varying])
            statement = text(
                f"UPDATE {table.name} SET {', '.join(assignments)} "
                f"FROM unnest({arrays}) AS v(id{''.join(', ' + n for n in varying)}) "
                f"WHERE {table.name}.id = v.id"
            ).bindparams(*[bindparam(f"s_{n}", type_=table.c[n].type) for n in shared])
            params: dict[str, Any] = {"ids": _array([r["id"] for r in group])}
            params.update({f"s_{n}": first[n] for n in shared})
            params.update({f"a_{n}": _array([_bound(table.c[n], r[n], dialect) for r in group])
                           for n in varying})
            connection.execute(statement, params)
            continue
        if dialect.name == "sqlite":
            _sqlite_update(connection, table, names, group)
            continue
        values = {n: bindparam(f"v_{n}") for n in names if n != "id"}
        connection.execute(
            table.update().where(table.c.id == bindparam("v_id")).values(values),
            [{f"v_{n}": value for n, value in row.items()} for row in group])
