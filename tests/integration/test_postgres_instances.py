"""Several featurehub processes on one PostgreSQL database (each instance here is a full app with
its own engine and connection pool, as a separate process would have)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import create_engine, select, text

from featurehub.app import create_app
from featurehub.db.base import PING_AFTER_IDLE_SECONDS, make_engine
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
