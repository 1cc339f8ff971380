"""Configuration, read once from the environment (FEATUREHUB_*) into an immutable object."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[2]
MICROSERVICES = ("rs-authentication", "rs-access", "rs-fem", "rs-admin")


class SettingError(ValueError):
    """A FEATUREHUB_* variable that cannot be used as it is."""


def _public_url(value: str) -> str:
    """The service's address as its users reach it: http(s)://host[:port][/path], no query."""
    try:
        parts = urlsplit(value.strip())
        usable = (parts.scheme in ("http", "https") and bool(parts.hostname)
                  and not parts.query and not parts.fragment)
        parts.port  # noqa: B018 - raises on a port that is no number from 0 to 65535
    except ValueError:  # brackets of an IPv6 address not closed, a port that is no number
        usable = False
    if not usable:
        raise SettingError(f"FEATUREHUB_PUBLIC_URL is the service's address as its users reach "
                           f"it, like https://featurehub.example.org, not '{value}'.")
    return value.strip().rstrip("/")


def _mebibytes(value: str, name: str) -> int:
    if not value.strip().isdigit() or int(value) == 0:
        raise SettingError(f"{name} is a whole number of MiB above 0, not '{value}'.")
    return int(value) * 1024 * 1024


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    database_url: str = f"sqlite:///{REPO_ROOT / 'var' / 'featurehub.db'}"
    host: str = "127.0.0.1"
    port: int = 9000
    openapi_dir: Path = REPO_ROOT / "openapi"
    bootstrap_project: str = "demo"
    bootstrap_admin_email: str = "admin@featurehub.local"
    bootstrap_admin_password: str | None = None
    token_ttl_seconds: int = 3600
    jwt_private_key_file: Path | None = None
    token_issuer: str = "featurehub"
    # Validate our own answers against the contract (on in tests; costs time in production).
    validate_responses: bool = False
    # Run the feature worker and schedulers inside the API process (the embedded default).
    embedded_worker: bool = True
    models_dir: Path | None = None
    storage_settings_file: Path | None = None
    # Directories under which a project administrator may put a local storage root through the
    # API (locations of the storage settings file, written by the operator, are not limited).
    storage_roots: tuple[Path, ...] = (REPO_ROOT / "var" / "storage",)
    # The largest request body taken (413 beyond).
    max_body_bytes: int = 32 * 1024 * 1024
    smtp_url: str | None = None
    # Address of the service as its users reach it, for the links mailed to them. Unset, links
    # are built from the address a request reached (its Host header, which the client chooses).
    public_url: str | None = None
    # Sender address of the notification e-mails.
    smtp_from: str = "featurehub@localhost"
    amqp_url: str | None = None
    load_toponyms: bool = True
    # Microservices served by this process; `direct` serves one of them at the root path.
    services: tuple[str, ...] = MICROSERVICES
    direct: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: object) -> Settings:
        env = dict(os.environ if environ is None else environ)
        get = env.get
        values: dict[str, object] = {}
        if get("FEATUREHUB_DATABASE_URL"):
            values["database_url"] = get("FEATUREHUB_DATABASE_URL")
        if get("FEATUREHUB_HOST"):
            values["host"] = get("FEATUREHUB_HOST")
        if get("FEATUREHUB_PORT"):
            values["port"] = int(get("FEATUREHUB_PORT", "9000"))
        if get("FEATUREHUB_BOOTSTRAP_PROJECT"):
            values["bootstrap_project"] = get("FEATUREHUB_BOOTSTRAP_PROJECT")
        if get("FEATUREHUB_BOOTSTRAP_ADMIN_EMAIL"):
            values["bootstrap_admin_email"] = get("FEATUREHUB_BOOTSTRAP_ADMIN_EMAIL")
        if get("FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD"):
            values["bootstrap_admin_password"] = get("FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD")
        if get("FEATUREHUB_TOKEN_TTL"):
            values["token_ttl_seconds"] = int(get("FEATUREHUB_TOKEN_TTL", "3600"))
        if get("FEATUREHUB_JWT_PRIVATE_KEY_FILE"):
            values["jwt_private_key_file"] = Path(get("FEATUREHUB_JWT_PRIVATE_KEY_FILE", ""))
        if get("FEATUREHUB_MODELS_DIR"):
            values["models_dir"] = Path(get("FEATUREHUB_MODELS_DIR", ""))
        if get("FEATUREHUB_STORAGE_SETTINGS_FILE"):
            values["storage_settings_file"] = Path(get("FEATUREHUB_STORAGE_SETTINGS_FILE", ""))
        if get("FEATUREHUB_STORAGE_ROOTS"):
            values["storage_roots"] = tuple(
                Path(item) for item in get("FEATUREHUB_STORAGE_ROOTS", "").split(os.pathsep)
                if item)
        if get("FEATUREHUB_SMTP_URL"):
            values["smtp_url"] = get("FEATUREHUB_SMTP_URL")
        if get("FEATUREHUB_SMTP_FROM"):
            values["smtp_from"] = get("FEATUREHUB_SMTP_FROM")
        if get("FEATUREHUB_MAX_BODY_MB"):
            values["max_body_bytes"] = _mebibytes(get("FEATUREHUB_MAX_BODY_MB", ""),
                                                  "FEATUREHUB_MAX_BODY_MB")
        if get("FEATUREHUB_PUBLIC_URL"):
            values["public_url"] = _public_url(get("FEATUREHUB_PUBLIC_URL", ""))
        if get("FEATUREHUB_AMQP_URL"):
            values["amqp_url"] = get("FEATUREHUB_AMQP_URL")
        values["validate_responses"] = _bool(get("FEATUREHUB_VALIDATE_RESPONSES"), False)
        values["embedded_worker"] = _bool(get("FEATUREHUB_EMBEDDED_WORKER"), True)
        values["load_toponyms"] = _bool(get("FEATUREHUB_LOAD_TOPONYMS"), True)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")
