"""User export benchmark of rs-admin: N users (default 100,000) in one project, exported as CSV
through the service the endpoint streams, on a temporary SQLite database and, when reachable, on a
fresh PostgreSQL database. Prints per backend the time, the CSV size, the number of chunks and the
peak Python memory allocated while exporting (tracemalloc): it stays far below the CSV size.

    python benchmarks/export_users.py [--users 100000] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert, select  # noqa: E402

from featurehub.db.base import make_engine, make_session_factory  # noqa: E402
from featurehub.db.migrate import upgrade  # noqa: E402
from featurehub.db.platform import ProjectUser, Role  # noqa: E402
from featurehub.services import projects  # noqa: E402
from featurehub.services.admin import users  # noqa: E402
from tests.backends import postgres_database, postgres_unavailable_reason, sqlite_url  # noqa: E402


def run(url: str, count: int) -> dict[str, object]:
    engine = make_engine(url)
    upgrade(engine)
    sessions = make_session_factory(engine)
    with sessions() as session:
        project = projects.create_project(session, name="bench", endpoints={})
        role_id = session.scalars(select(Role.id).where(
            Role.project_id == project.id, Role.name == "REGISTERED_USER")).one()
        start = datetime(2026, 1, 1, tzinfo=UTC)
        for first in range(0, count, 10_000):
            session.execute(insert(ProjectUser), [
                {"project_id": project.id, "email": f"user{n:07d}@bench.test", "role_id": role_id,
                 "status": "ACCESS_GRANTED", "first_name": f"First, {n}",
                 "last_name": f'Last "{n}"', "origin": "bench", "access_groups": ["a", "b"],
                 "current_quota": 0, "quota_warning_count": 0, "license_accepted": False,
                 "created": start + timedelta(seconds=n), "last_update": start}
                for n in range(first, min(first + 10_000, count))])
        session.commit()
        query = users.export_query(session, project_id=project.id, user_filter={})
    tracemalloc.start()
    began = time.perf_counter()
    size = chunks = 0
    for chunk in users.export_csv(sessions, query):
        size += len(chunk)
        chunks += 1
    elapsed = time.perf_counter() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    engine.dispose()
    return {"users": count, "seconds": round(elapsed, 2), "csv_bytes": size, "chunks": chunks,
            "peak_python_bytes": peak, "users_per_second": round(count / elapsed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    with ExitStack() as stack:
        if args.backend in (None, "sqlite"):
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            print(json.dumps({"backend": "sqlite", **run(sqlite_url(directory), args.users)}))
        if args.backend in (None, "postgresql"):
            reason = postgres_unavailable_reason()
            if reason:
                print(json.dumps({"backend": "postgresql", "skipped": reason}))
            else:
                url = stack.enter_context(postgres_database("featurehub_bench"))
                print(json.dumps({"backend": "postgresql", **run(url, args.users)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
