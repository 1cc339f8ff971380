"""Several featurehub processes on one PostgreSQL database (each instance here is a full app with
its own engine and connection pool, as a separate process would have)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import create_engine, select, text

from featurehub.app import create_app
from featurehub.db.base import (
    PING_AFTER_IDLE_SECONDS,
    make_engine,
    make_session_factory,
    read_only,
)
from featurehub.db.fem import Feature, among, array_literal
from featurehub.db.platform import Account, Project, ProjectUser, ResourceAccess, Role
from featurehub.settings import Settings
from tests.backends import postgres_database, postgres_unavailable_reason

pytestmark = pytest.mark.postgres


@pytest.fixture
def database_url():
    reason = postgres_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with postgres_database("featurehub_integration") as url:
        yield url


def settings_for(url: str) -> Settings:
    return Settings.from_env(environ={}, database_url=url, bootstrap_admin_password="pw",
                             embedded_worker=False, load_toponyms=False)


def test_instances_starting_together_migrate_and_bootstrap_once(database_url):
    with ThreadPoolExecutor(max_workers=3) as pool:
        apps = list(pool.map(lambda _: create_app(settings_for(database_url)), range(3)))
    runtime = apps[0].app.extensions["featurehub"]
    with runtime.sessions() as session:
        assert session.scalars(select(Project.name)).all() == ["demo"]
        accesses = session.scalars(select(ResourceAccess.resource)).all()
        assert len(accesses) == sum(len(v) for v in runtime.endpoints.values())
    for app in apps:
        app.app.extensions["featurehub"].stop()


def test_role_change_through_one_instance_applies_on_the_next_request_of_another(database_url):
    first, second = create_app(settings_for(database_url)), create_app(settings_for(database_url))
    runtime = first.app.extensions["featurehub"]
    email = "person@example.test"
    with runtime.sessions() as session:
        project = session.scalars(select(Project).where(Project.name == "demo")).one()
        exploit = session.scalars(select(Role).where(Role.project_id == project.id,
                                                     Role.name == "EXPLOIT")).one()
        session.add(Account(email=email))
        session.add(ProjectUser(project_id=project.id, email=email, role_id=exploit.id,
                                status="ACCESS_GRANTED"))
        session.commit()
    token, _ = runtime.keys.issue(subject=email, tenant="demo", role="EXPLOIT")
    headers = {"Authorization": f"Bearer {token}"}
    body = {"name": "t", "configuration": "{}"}
    client = second.test_client()
    assert client.post("/rs-access/api/v1/themes", json=body, headers=headers).status_code == 403

    with runtime.sessions() as session:
        member = session.scalars(select(ProjectUser).where(ProjectUser.email == email)).one()
        admin_role = session.scalars(select(Role).where(Role.project_id == member.project_id,
                                                        Role.name == "PROJECT_ADMIN")).one()
        member.role_id = admin_role.id
        session.commit()
    assert client.post("/rs-access/api/v1/themes", json=body, headers=headers).status_code == 200
    first.app.extensions["featurehub"].stop()
    second.app.extensions["featurehub"].stop()


def test_a_pooled_connection_idle_for_a_while_is_pinged_and_replaced_when_dead(
        database_url, monkeypatch):
    engine = make_engine(database_url)
    pings = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping", lambda conn: pings.append(1) or ping(conn))
    with engine.connect() as connection:
        first = connection.execute(text("SELECT pg_backend_pid()")).scalar()
    with engine.connect() as connection:  # used a moment ago: taken without a ping
        assert connection.execute(text("SELECT pg_backend_pid()")).scalar() == first
    assert pings == []

    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:  # the server drops it, as a restart would
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
    admin.dispose()
    time.sleep(PING_AFTER_IDLE_SECONDS + 0.2)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT pg_backend_pid()")).scalar() != first
    assert pings == [1]
    engine.dispose()


def test_reads_run_without_a_transaction_and_the_writes_after_them_in_one(database_url):
    engine = make_engine(database_url)
    with make_session_factory(engine)() as session:
        session.execute(text("CREATE TABLE scratch (n integer)"))
        session.commit()
        with read_only(session):
            session.execute(text("SELECT 1"))
            # Autocommit: each statement is a transaction of its own (no BEGIN, no ROLLBACK).
            assert session.execute(text("SELECT now() = statement_timestamp()")).scalar()
            reader = session.connection().connection.dbapi_connection
            assert reader.autocommit
        session.execute(text("INSERT INTO scratch VALUES (1)"))
        writer = session.connection().connection.dbapi_connection
        assert writer is reader and not writer.autocommit  # the pool gave it back its level
        session.rollback()
        assert session.execute(text("SELECT count(*) FROM scratch")).scalar() == 0
    engine.dispose()


def test_array_literals_reach_postgresql_as_the_values_they_write(database_url):
    texts = ["plain", "", "with \"quotes\"", "back\\slash\\", "{braces}, commas", "NULL", None,
             "URN:FEATURE:DATA:demo:0190a6c2-7a8e-7b3f-9d4e-1f2a3b4c5d6e:V1", "été ✓"]
    numbers = [0, -1, 2**62, 7]
    engine = make_engine(database_url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT CAST(:a AS TEXT[])"),
                                  {"a": array_literal(texts)}).scalar() == texts
        assert connection.execute(text("SELECT CAST(:a AS BIGINT[])"),
                                  {"a": array_literal(numbers)}).scalar() == numbers
        assert connection.execute(text("SELECT CAST(:a AS BIGINT[])"),
                                  {"a": array_literal([])}).scalar() == []
    assert array_literal([1, "a"]) is None and array_literal([1.5]) is None
    assert array_literal([True]) is None  # not an integer to PostgreSQL
    with make_session_factory(engine)() as session:
        # The text is bound untyped: typed as text first, PostgreSQL would cast it again for
        # every row it filters (a thousand uuids among 5,000 versions: 3 s instead of 3 ms).
        statement = select(Feature.id).where(among(session, Feature.urn, ["URN:a", "URN:b"]))
        compiled = statement.compile(dialect=engine.dialect)
        assert "= ANY (CAST(%(param_1)s AS VARCHAR(256)[]))" in str(compiled)
    engine.dispose()
