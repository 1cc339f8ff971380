"""`featurehub`: the operator's command line."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable, Sequence

from featurehub.settings import MICROSERVICES, SettingError, Settings

Command = Callable[[argparse.Namespace, Settings], int]


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from featurehub.app import create_app

    settings = settings.with_(
        host=args.host or settings.host,
        port=args.port or settings.port,
        direct=args.service,
    )
    app = create_app(settings)
    # Acceptance parses bodies of thousands of features: keep the cyclic collector from
    # rescanning the whole heap several times per body (see tune_garbage_collector).
    from featurehub.services.fem.worker import tune_garbage_collector

    tune_garbage_collector()
    prefix = "" if settings.direct else "/<microservice>/api/v1"
    print(f"featurehub: serving {settings.direct or ', '.join(settings.services)} on "
          f"http://{settings.host}:{settings.port}{prefix} (database {_safe_url(settings)})",
          flush=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=args.log_level)
    return 0


def _db_upgrade(_args: argparse.Namespace, settings: Settings) -> int:
    from featurehub.app import build_runtime

    runtime = build_runtime(settings)
    runtime.stop()
    print(f"featurehub: database {_safe_url(settings)} is up to date")
    return 0


def _project_create(args: argparse.Namespace, settings: Settings) -> int:
    from featurehub.app import build_runtime
    from featurehub.services import projects

    runtime = build_runtime(settings)
    with runtime.sessions() as session:
        project = projects.create_project(session, name=args.name, description=args.description,
                                          endpoints=runtime.endpoints)
        if args.admin_email:
            password = args.admin_password or os.environ.get("FEATUREHUB_ADMIN_PASSWORD")
            from featurehub.security.passwords import generate_password

            generated = password is None
            password = password or generate_password()
            projects.ensure_instance_admin(session, project=project, email=args.admin_email,
                                           password=password)
            session.commit()
            if generated:
                print(f"featurehub: password of {args.admin_email} (shown once): {password}")
    runtime.stop()
    print(f"featurehub: project '{args.name}' created")
    return 0


def _project_list(_args: argparse.Namespace, settings: Settings) -> int:
    from sqlalchemy import select

    from featurehub.app import build_runtime
    from featurehub.db.platform import Project

    runtime = build_runtime(settings)
    with runtime.sessions() as session:
        for project in session.scalars(select(Project).order_by(Project.name)):
            print(project.name)
    runtime.stop()
    return 0


def _client_create(args: argparse.Namespace, settings: Settings) -> int:
    from featurehub.app import build_runtime
    from featurehub.services import clients

    runtime = build_runtime(settings)
    with runtime.sessions() as session:
        client_id, secret = clients.create_client(
            session, project_name=args.project, role=args.role, client_id=args.client_id)
    runtime.stop()
    print(f"client_id={client_id}\nclient_secret={secret}  (shown once)")
    return 0


# ---- rs-fem: feature workers ----

def _worker(args: argparse.Namespace, settings: Settings) -> int:
    import signal

    from featurehub.app import build_runtime
    from featurehub.db.sqlite import start_wal_checkpointer
    from featurehub.services.fem.worker import (
        FeatureWorker,
        WorkerOptions,
        process_pending,
        tune_garbage_collector,
    )

    runtime = build_runtime(settings)
    tune_garbage_collector()
    options = WorkerOptions(batch_size=args.batch_size, lease_seconds=args.lease_seconds,
                            poll_seconds=args.poll_seconds)
    if args.once:
        print(f"featurehub: {process_pending(runtime, options=options)} request(s) processed")
        runtime.stop()
        return 0
    start_wal_checkpointer(runtime)
    worker = FeatureWorker(runtime, options)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: worker.stop_soon())
    print(f"featurehub: feature worker {options.worker_id} on {_safe_url(settings)}", flush=True)
    worker.run_forever()
    runtime.stop()
    return 0


def _add_worker_command(commands: argparse._SubParsersAction) -> None:
    worker = commands.add_parser(
        "worker", help="process granted rs-fem requests (any number of them on PostgreSQL)")
    worker.add_argument("--once", action="store_true",
                        help="process what is pending, then exit")
    worker.add_argument("--batch-size", type=int, default=1000,
                        help="requests taken per batch (default 1000)")
    worker.add_argument("--lease-seconds", type=float, default=600.0,
                        help="a batch not finished after this is taken back (default 600)")
    worker.add_argument("--poll-seconds", type=float, default=1.0,
                        help="wait between polls of an empty queue (default 1)")
    worker.set_defaults(run=_worker)
# ---- rs-admin: notification scheduler ----

def _scheduler(args: argparse.Namespace, settings: Settings) -> int:
    import signal

    from featurehub.app import build_runtime
    from featurehub.services.admin.scheduler import NotificationScheduler

    runtime = build_runtime(settings)
    scheduler = NotificationScheduler(runtime.sessions, smtp_url=settings.smtp_url,
                                      sender=settings.smtp_from, poll_seconds=args.poll_seconds)
    if args.once:
        report = scheduler.tick()
        print(f"featurehub: {report.notified} notification(s) raised, {report.sent} e-mail(s) "
              f"sent")
        runtime.stop()
        return 0
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: scheduler.stop_soon())
    print(f"featurehub: notification scheduler on {_safe_url(settings)}", flush=True)
    scheduler.run_forever()
    runtime.stop()
    return 0


def _add_scheduler_command(commands: argparse._SubParsersAction) -> None:
    scheduler = commands.add_parser(
        "scheduler", help="e-mail rs-admin notifications (FEATUREHUB_SMTP_URL); any number of "
                          "them may run, each notification is sent once")
    scheduler.add_argument("--once", action="store_true", help="one round, then exit")
    scheduler.add_argument("--poll-seconds", type=float, default=10.0,
                           help="wait between rounds (default 10)")
    scheduler.set_defaults(run=_scheduler)


# -- rs-access: toponyms ------------------------------------------------------------------------

def _toponyms_load(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from featurehub.app import build_runtime
    from featurehub.services import projects
    from featurehub.services.access import toponyms

    runtime = build_runtime(settings)
    with runtime.sessions() as session:
        project = projects.find_project(session, args.project)
        count = toponyms.load_toponyms(session, project_id=project.id,
                                       path=Path(args.file) if args.file else toponyms.COUNTRIES)
        session.commit()
    runtime.stop()
    print(f"featurehub: {count} toponyms loaded into project '{args.project}'")
    return 0


def _toponyms_purge(_args: argparse.Namespace, settings: Settings) -> int:
    from featurehub.app import build_runtime
    from featurehub.services.access import toponyms

    runtime = build_runtime(settings)
    with runtime.sessions() as session:
        count = toponyms.purge_expired(session)
    runtime.stop()
    print(f"featurehub: {count} expired toponyms purged")
    return 0


def _safe_url(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="featurehub",
        description="Feature manager (rs-fem), administration (rs-admin), interface "
                    "configuration (rs-access) and token (rs-authentication) services.",
        epilog="Configuration comes from FEATUREHUB_* environment variables; see README.md.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the HTTP API (and, embedded, the workers)")
    serve.add_argument("--host", help="listen address (FEATUREHUB_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="listen port (FEATUREHUB_PORT, default 9000)")
    serve.add_argument("--service", choices=MICROSERVICES,
                       help="serve only this microservice, at the root path (direct access)")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug"])
    serve.set_defaults(run=_serve)

    db = commands.add_parser("db", help="database maintenance").add_subparsers(
        dest="db_command", required=True, metavar="ACTION")
    db.add_parser("upgrade", help="apply every pending migration").set_defaults(run=_db_upgrade)

    project = commands.add_parser("project", help="projects (tenants)").add_subparsers(
        dest="project_command", required=True, metavar="ACTION")
    create = project.add_parser("create", help="create a project with its native roles")
    create.add_argument("name")
    create.add_argument("--description")
    create.add_argument("--admin-email", help="also make this account an instance administrator")
    create.add_argument("--admin-password", help="its password (default: generated, printed)")
    create.set_defaults(run=_project_create)
    project.add_parser("list", help="list the projects").set_defaults(run=_project_list)

    client = commands.add_parser("client", help="machine clients (client_credentials)")
    client_actions = client.add_subparsers(dest="client_command", required=True, metavar="ACTION")
    client_create = client_actions.add_parser("create", help="register a client of a project")
    client_create.add_argument("--project", required=True)
    client_create.add_argument("--role", default="EXPLOIT", help="role of its tokens")
    client_create.add_argument("--client-id", help="default: generated")
    client_create.set_defaults(run=_client_create)
    _add_worker_command(commands)
    _add_scheduler_command(commands)

    # rs-access
    toponym = commands.add_parser("toponyms", help="toponyms (named areas) of rs-access")
    toponym_actions = toponym.add_subparsers(dest="toponyms_command", required=True,
                                             metavar="ACTION")
    toponym_load = toponym_actions.add_parser(
        "load", help="load toponyms (default: the world's countries) into a project")
    toponym_load.add_argument("--project", required=True)
    toponym_load.add_argument("--file", help="GeoJSON FeatureCollection (.geojson or .geojson.gz) "
                                             "whose features carry businessId, labelEn, labelFr")
    toponym_load.set_defaults(run=_toponyms_load)
    toponym_actions.add_parser("purge", help="delete the expired registered toponyms").set_defaults(
        run=_toponyms_purge)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # connexion imports starlette's test client, which warns about httpx on every start.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    args = build_parser().parse_args(argv)
    from featurehub.errors import DomainError

    try:
        return int(args.run(args, Settings.from_env()))
    except DomainError as error:
        print(f"featurehub: {error.detail}", file=sys.stderr)
        return 2
    except SettingError as error:
        print(f"featurehub: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
