"""The application factory: nothing is built at import time."""

from __future__ import annotations

import logging

from connexion import FlaskApp
from connexion.middleware import MiddlewarePosition
from sqlalchemy.exc import IntegrityError, OperationalError

from featurehub import errors
from featurehub.db.base import make_engine, make_session_factory
from featurehub.db.migrate import upgrade
from featurehub.jsonify import FastJsonifier
from featurehub.middleware import BodyLimit, DocumentedMethods, middlewares
from featurehub.runtime import Runtime, close_db_session
from featurehub.security.authorization import AuthorizingResolver, PackageResolver
from featurehub.security.tokens import KeyRing
from featurehub.services import hooks, projects
from featurehub.services.endpoints import all_endpoints, contract_endpoints
from featurehub.settings import MICROSERVICES, Settings
from featurehub.validation import validator_map

log = logging.getLogger("featurehub")

# Endpoints of these microservices are checked against the caller's role; the token service
# itself is instance-wide and open.
AUTHORIZED_MICROSERVICES = tuple(name for name in MICROSERVICES if name != "rs-authentication")


def build_runtime(settings: Settings) -> Runtime:
    """Database migrated, signing key loaded, first project bootstrapped, endpoints registered."""
    engine = make_engine(settings.database_url)
    upgrade(engine)
    sessions = make_session_factory(engine)
    # Hooks that run outside a request (project creation) read the settings from their session.
    sessions.configure(info={"settings": settings})
    endpoints = all_endpoints(settings.openapi_dir, AUTHORIZED_MICROSERVICES)
    with sessions() as session:
        keys = KeyRing.load(session, key_file=settings.jwt_private_key_file,
                            issuer=settings.token_issuer, ttl=settings.token_ttl_seconds)
        created = projects.bootstrap(
            session, project_name=settings.bootstrap_project,
            admin_email=settings.bootstrap_admin_email,
            admin_password=settings.bootstrap_admin_password, endpoints=endpoints,
        )
        if created is not None:
            log.warning("Created project '%s' and instance administrator '%s'.",
                        created.project, created.admin_email)
            if created.generated_password:
                print(f"featurehub: instance administrator {created.admin_email} "
                      f"password (shown once): {created.generated_password}", flush=True)
        projects.register_all(session, endpoints)
    return Runtime(settings=settings, engine=engine, sessions=sessions, keys=keys,
                   endpoints=endpoints)


def create_app(settings: Settings | None = None, *, start_workers: bool | None = None) -> FlaskApp:
    settings = settings or Settings.from_env()
    logging.getLogger("connexion.security").setLevel(logging.ERROR)
    runtime = build_runtime(settings)

    app = FlaskApp(__name__, specification_dir=str(settings.openapi_dir), jsonifier=FastJsonifier(),
                   middlewares=middlewares())
    services = (settings.direct,) if settings.direct else settings.services
    routes = []
    for microservice in services:
        if not (settings.openapi_dir / f"{microservice}.yaml").exists():
            continue
        package = "featurehub.api." + microservice.replace("-", "_")
        base_path = "" if settings.direct else f"/{microservice}/api/v1"
        routes.append((base_path, contract_endpoints(settings.openapi_dir, microservice)))
        app.add_api(
            f"{microservice}.yaml",
            base_path=base_path,
            resolver=(AuthorizingResolver(package, microservice)
                      if microservice in AUTHORIZED_MICROSERVICES
                      else PackageResolver(package)),
            strict_validation=True,
            validate_responses=settings.validate_responses,
            validator_map=validator_map(),
        )
    app.add_middleware(DocumentedMethods, position=MiddlewarePosition.BEFORE_EXCEPTION,
                       routes=routes)
    app.add_middleware(BodyLimit, position=MiddlewarePosition.BEFORE_EXCEPTION,
                       limit=settings.max_body_bytes)
    app.add_error_handler(errors.DomainError, errors.handle_domain_error)
    app.add_error_handler(IntegrityError, errors.handle_integrity_error)
    app.add_error_handler(OperationalError, errors.handle_operational_error)
    app.add_error_handler(Exception, errors.handle_unexpected)

    flask_app = app.app
    flask_app.extensions["featurehub"] = runtime
    flask_app.teardown_appcontext(close_db_session)
    if settings.embedded_worker if start_workers is None else start_workers:
        hooks.app_started(runtime)
    return app

