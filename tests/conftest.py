"""One application per database backend and run; every test works in a project of its own,
with users of each role created on demand."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from connexion import FlaskApp
from sqlalchemy import select

from featurehub.app import create_app
from featurehub.db.platform import Account, ProjectUser, Role
from featurehub.runtime import Runtime
from featurehub.services import projects
from featurehub.settings import Settings
from tests.backends import database_for

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
_project_numbers = itertools.count(1)


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    with database_for(request.param, tmp_path_factory.mktemp("sqlite")) as url:
        yield url


@pytest.fixture(scope="session")
def settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings.from_env(
        environ={},
        database_url=database_url,
        bootstrap_admin_password="bootstrap-password",
        validate_responses=True,
        embedded_worker=False,
        load_toponyms=False,
        storage_roots=(Path(tempfile.gettempdir()),),
    )


@pytest.fixture(scope="session")
def app(settings: Settings) -> Iterator[FlaskApp]:
    application = create_app(settings)
    yield application
    runtime(application).stop()


def runtime(application: FlaskApp) -> Runtime:
    return application.app.extensions["featurehub"]


@pytest.fixture(scope="session")
def rt(app: FlaskApp) -> Runtime:
    return runtime(app)


@pytest.fixture
def client(app: FlaskApp) -> Any:
    return app.test_client()


@dataclass
class ProjectContext:
    """A project of one test, and a way to act in it as any role."""

    id: int
    name: str
    runtime: Runtime

    def user(self, role: str, email: str | None = None, status: str = "ACCESS_GRANTED") -> str:
        """An account and a project user with this role; returns the email."""
        email = email or f"{role.lower()}.{next(_project_numbers)}@{self.name}.test"
        with self.runtime.sessions() as session:
            if session.scalars(select(Account).where(Account.email == email)).first() is None:
                session.add(Account(email=email, instance_admin=role == "INSTANCE_ADMIN"))
            role_id = session.scalars(select(Role.id).where(
                Role.project_id == self.id, Role.name == role)).one()
            session.add(ProjectUser(project_id=self.id, email=email, role_id=role_id,
                                    status=status, origin="tests"))
            session.commit()
        return email

    def token(self, email: str, role: str = "REGISTERED_USER") -> str:
        token, _ = self.runtime.keys.issue(subject=email, tenant=self.name, role=role)
        return token

    def headers(self, role: str = "PROJECT_ADMIN") -> dict[str, str]:
        """Authorization headers of a new user holding `role`."""
        email = self.user(role)
        return {"Authorization": f"Bearer {self.token(email, role)}"}


@pytest.fixture
def project(rt: Runtime) -> ProjectContext:
    name = f"test{next(_project_numbers)}"
    with rt.sessions() as session:
        created = projects.create_project(session, name=name, endpoints=rt.endpoints)
        return ProjectContext(created.id, created.name, rt)


@pytest.fixture
def other_project(rt: Runtime) -> ProjectContext:
    name = f"other{next(_project_numbers)}"
    with rt.sessions() as session:
        created = projects.create_project(session, name=name, endpoints=rt.endpoints)
        return ProjectContext(created.id, created.name, rt)


@pytest.fixture
def as_role(project: ProjectContext) -> Callable[[str], dict[str, str]]:
    """Headers for a caller of the given role in the test's project."""
    return project.headers


def problem(status: int, detail: str, title: str | None = None) -> dict[str, Any]:
    """The whole problem+json body the API answers with."""
    titles = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
              409: "Conflict", 415: "Unsupported Media Type", 422: "Unprocessable Entity",
              429: "Too Many Requests"}
    return {"type": "about:blank", "title": title or titles[status], "detail": detail,
            "status": status}
