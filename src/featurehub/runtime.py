"""What one running application holds: settings, database, signing keys, background workers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask import current_app, g
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from featurehub.security.tokens import KeyRing
from featurehub.services.endpoints import Endpoint
from featurehub.settings import Settings


@dataclass
class Runtime:
    settings: Settings
    engine: Engine
    sessions: sessionmaker
    keys: KeyRing
    endpoints: dict[str, tuple[Endpoint, ...]]
    # Background workers started for this app (feature worker, schedulers), by name.
    workers: dict[str, Any] = field(default_factory=dict)

    def stop(self) -> None:
        for worker in self.workers.values():
            stop = getattr(worker, "stop", None)
            if stop is not None:
                stop()
        self.engine.dispose()


def current_runtime() -> Runtime:
    return current_app.extensions["featurehub"]


def db_session() -> Session:
    """The request's unit of work; closed when the request ends."""
    session = g.get("_db_session")
    if session is None:
        session = g._db_session = current_runtime().sessions()
    return session


def close_db_session(_exc: BaseException | None = None) -> None:
    session = g.pop("_db_session", None)
    if session is not None:
        session.close()
