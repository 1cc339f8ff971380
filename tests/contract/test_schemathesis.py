"""Schemathesis over every published document, against the app with a valid token.

Each microservice's `/openapi.json` is fuzzed with every check on (server errors, status codes,
content types, response schemas, negative-data rejection, ...); the examples are bounded so the run
takes minutes. FEATUREHUB_CONTRACT_EXAMPLES raises the bound for a deeper run.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import hypothesis
import schemathesis
from hypothesis import HealthCheck
from schemathesis.core.parameters import ParameterLocation

from featurehub.app import create_app
from featurehub.settings import MICROSERVICES, REPO_ROOT, Settings

CONFIG = schemathesis.config.SchemathesisConfig.from_path(
    Path(__file__).with_name("schemathesis.toml"))
MAX_EXAMPLES = int(os.environ.get("FEATUREHUB_CONTRACT_EXAMPLES", "25"))
PUBLISHED = [name for name in MICROSERVICES if (REPO_ROOT / "openapi" / f"{name}.yaml").exists()]

# Schemathesis reads the schemas while tests are collected, so the app is built then, once.
_directory = tempfile.mkdtemp(prefix="featurehub-contract-")
atexit.register(shutil.rmtree, _directory, True)
_settings = Settings.from_env(
    environ={}, database_url=f"sqlite:///{_directory}/contract.db",
    bootstrap_admin_password="contract-password", validate_responses=False,
    embedded_worker=False, load_toponyms=False,
)
APP = create_app(_settings)
_runtime = APP.app.extensions["featurehub"]
atexit.register(_runtime.stop)
_token, _ = _runtime.keys.issue(subject=_settings.bootstrap_admin_email,
                                tenant=_settings.bootstrap_project, role="INSTANCE_ADMIN")
HEADERS = {"Authorization": f"Bearer {_token}"}


def _headers(case) -> dict[str, str]:
    """The token, unless the case leaves it out on purpose: a negative case whose headers
    lack the required Authorization expects the request refused (401), and sending the token
    anyway would make a valid request that Schemathesis reports as wrongly accepted."""
    info = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    if info is not None and info.mode.is_negative and "Authorization" not in (case.headers or {}):
        return {}
    return HEADERS


def _contract_test(microservice: str):
    schema = schemathesis.openapi.from_asgi(f"/{microservice}/api/v1/openapi.json", APP,
                                           config=CONFIG)

    @schema.parametrize()
    @hypothesis.settings(
        max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
        suppress_health_check=list(HealthCheck),
    )
    def test(case):
        case.call_and_validate(headers=_headers(case))

    return test


for _name in PUBLISHED:
    globals()[f"test_{_name.replace('-', '_')}_contract"] = _contract_test(_name)
