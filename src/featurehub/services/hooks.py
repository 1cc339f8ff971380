"""What each microservice does when a project is created or the application starts.

Hooks are named by dotted path so that the platform does not import every service.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from sqlalchemy.orm import Session

# "module:function" called with (session, project) inside the creating transaction.
PROJECT_CREATED: list[str] = [
    "featurehub.services.access.toponyms:load_into_new_project",
]
# "module:function" called with (runtime) once the application is built.
APP_STARTED: list[str] = [
    "featurehub.services.fem.worker:start_embedded_worker",
    "featurehub.services.access.toponyms:start_purge_worker",
    "featurehub.services.admin.scheduler:start_embedded_scheduler",
    # Last: threads are started after the embedded worker's process is forked.
    "featurehub.db.sqlite:start_wal_checkpointer",
]


def _resolve(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


def project_created(session: Session, project: Any) -> None:
    for path in PROJECT_CREATED:
        _resolve(path)(session, project)


def app_started(runtime: Any) -> None:
    for path in APP_STARTED:
        _resolve(path)(runtime)
