"""Storage locations of a project, each served by a plugin (`local`: a directory of this
machine), from `/storages` or from the settings file FEATUREHUB_STORAGE_SETTINGS_FILE:

    {"storages": [{"project": "demo", "name": "disk", "plugin": "local",
                   "configuration": {"root": "/srv/featurehub/disk"}}]}

(`"project": "*"` gives the location to every project; a project's own location of the same
name takes precedence). Files are fetched from file:// and http(s):// URLs, their checksum
verified while they are written."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit

import orjson
from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.fem import StorageLocation
from featurehub.errors import Conflict, NotFound, Unprocessable
from featurehub.services.fem.rules import canonical_algorithm

log = logging.getLogger(__name__)
PLUGINS = ("local",)
CHUNK = 1 << 16


@dataclass(frozen=True)
class Location:
    name: str
    plugin: str
    configuration: dict[str, Any] = field(default_factory=dict)
    source: str = "project"  # "project" | "settings-file"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "plugin": self.plugin, "configuration": self.configuration,
                "source": self.source}

    @property
    def root(self) -> Path:
        return Path(self.configuration["root"])


class StorageFailure(Exception):
    """A file could not be fetched, verified or stored (the request can be retried)."""


# ---- locations ----

_file_cache: dict[str, Any] = {"key": None, "entries": []}


def _settings_file_entries(settings_file: Path | None) -> list[dict[str, Any]]:
    if settings_file is None or not settings_file.is_file():
        return []
    key = (str(settings_file), settings_file.stat().st_mtime_ns)
    if _file_cache["key"] != key:
        entries = []
        try:
            listed = orjson.loads(settings_file.read_bytes())["storages"]
            if not isinstance(listed, list):
                raise TypeError("'storages' is not a list")
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.warning("storage settings file %s ignored: %s", settings_file, error)
            listed = []
        # A bad entry is left out alone: the other locations of the file keep working.
        for entry in listed:
            try:
                location_problem(entry.get("name"), entry.get("plugin"),
                                 entry.get("configuration"))
            except (AttributeError, Unprocessable) as error:
                log.warning("storage settings file %s: entry %s ignored: %s", settings_file,
                            entry, getattr(error, "detail", error))
                continue
            entries.append(entry)
        _file_cache.update(key=key, entries=entries)
    return _file_cache["entries"]


def locations(session: Session, *, project_id: int, project: str,
              settings_file: Path | None) -> dict[str, Location]:
    """Every storage location of the project, by name."""
    found = {
        entry["name"]: Location(entry["name"], entry["plugin"], entry["configuration"],
                                "settings-file")
        for entry in _settings_file_entries(settings_file)
        if entry.get("project") in (project, "*")
    }
    for row in session.scalars(select(StorageLocation).where(
            StorageLocation.project_id == project_id)):
        found[row.name] = Location(row.name, row.plugin, row.configuration)
    return found


def location_problem(name: Any, plugin: Any, configuration: Any) -> None:
    if not isinstance(name, str) or not name:
        raise Unprocessable("A storage location has a name.")
    if plugin not in PLUGINS:
        raise Unprocessable(f"Storage '{name}': unknown plugin '{plugin}' "
                            f"(known: {', '.join(PLUGINS)}).")
    root = (configuration or {}).get("root") if isinstance(configuration, dict) else None
    if not isinstance(root, str) or not os.path.isabs(root):
        raise Unprocessable(f"Storage '{name}': configuration.root is an absolute directory.")
    if os.path.normpath(root) == "/":
        raise Unprocessable(f"Storage '{name}': the root directory '/' cannot be a storage.")


def list_locations(session: Session, *, project_id: int, project: str,
                   settings_file: Path | None) -> list[Location]:
    found = locations(session, project_id=project_id, project=project,
                      settings_file=settings_file)
    return [found[name] for name in sorted(found)]


def get_location(session: Session, *, project_id: int, project: str, name: str,
                 settings_file: Path | None) -> Location:
    location = locations(session, project_id=project_id, project=project,
                         settings_file=settings_file).get(name)
    if location is None:
        raise NotFound(f"Storage location '{name}' does not exist.")
    return location


def put_location(session: Session, *, project_id: int, name: str, body_name: str | None,
                 plugin: str, configuration: dict[str, Any],
                 allowed_roots: Sequence[Path]) -> Location:
    if body_name is not None and body_name != name:
        raise Unprocessable(f"The storage name in the body ('{body_name}') is not the one in "
                            f"the path ('{name}').")
    location_problem(name, plugin, configuration)
    configuration = {"root": os.path.normpath(configuration["root"])}
    root = Path(os.path.realpath(configuration["root"]))
    allowed = [Path(os.path.realpath(item)) for item in allowed_roots]
    if not any(root == item or item in root.parents for item in allowed):
        raise Unprocessable(
            f"Storage '{name}': root {configuration['root']} is not under an allowed directory "
            f"({', '.join(str(item) for item in allowed_roots) or 'none'}; the operator sets "
            "them with FEATUREHUB_STORAGE_ROOTS).")
    row = session.scalars(select(StorageLocation).where(
        StorageLocation.project_id == project_id, StorageLocation.name == name)).first()
    if row is None:
        row = StorageLocation(project_id=project_id, name=name)
        session.add(row)
    row.plugin = plugin
    row.configuration = configuration
    session.commit()
    return Location(name, plugin, configuration)


def delete_location(session: Session, *, project_id: int, project: str, name: str,
                    settings_file: Path | None) -> None:
    row = session.scalars(select(StorageLocation).where(
        StorageLocation.project_id == project_id, StorageLocation.name == name)).first()
    if row is None:
        if any(entry.get("name") == name and entry.get("project") in (project, "*")
               for entry in _settings_file_entries(settings_file)):
            raise Conflict(f"Storage location '{name}' comes from the storage settings file "
                           f"(FEATUREHUB_STORAGE_SETTINGS_FILE); change the file instead.")
        raise NotFound(f"Storage location '{name}' does not exist.")
    session.delete(row)
    session.commit()


# ---- the local plugin ----

def _relative(store_path: str | None) -> PurePosixPath:
    """storePath as a relative path that cannot leave the root."""
    parts = [part for part in PurePosixPath(store_path or "").parts if part not in ("/", ".")]
    if ".." in parts:
        raise StorageFailure(f"storePath '{store_path}' leaves the storage root.")
    return PurePosixPath(*parts) if parts else PurePosixPath()


def _open_source(url: str, timeout: float) -> BinaryIO:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        if scheme == "file":
            return open(unquote(parts.path), "rb")  # noqa: SIM115 - closed by the caller
        if scheme in ("http", "https"):
            return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 - scheme checked
    except OSError as error:
        raise StorageFailure(f"cannot fetch '{url}': {error}") from error
    raise StorageFailure(f"cannot fetch '{url}': unsupported scheme '{scheme}'.")


def store_file(location: Location, *, url: str, store_path: str | None, filename: str,
               algorithm: str, checksum: str, timeout: float = 30.0) -> str:
    """Copy the file at `url` under the location's root/storePath, verifying its checksum;
    returns the URL of the stored copy."""
    spec = canonical_algorithm(algorithm)
    if spec is None:
        raise StorageFailure(f"unsupported checksum algorithm '{algorithm}'.")
    name = PurePosixPath(filename).name
    if not name or name in (".", ".."):
        raise StorageFailure(f"filename '{filename}' cannot be stored.")
    directory = location.root / _relative(store_path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StorageFailure(f"cannot create '{directory}' in storage '{location.name}': "
                             f"{error}") from error
    digest = hashlib.new(spec[1])
    source = _open_source(url, timeout)
    descriptor, incoming_name = tempfile.mkstemp(dir=directory, prefix=".incoming-")
    incoming = Path(incoming_name)
    try:
        with source, os.fdopen(descriptor, "wb") as target:
            while chunk := source.read(CHUNK):
                digest.update(chunk)
                target.write(chunk)
    except OSError as error:
        incoming.unlink(missing_ok=True)
        raise StorageFailure(f"cannot fetch '{url}': {error}") from error
    if digest.hexdigest() != checksum.lower():
        incoming.unlink(missing_ok=True)
        raise StorageFailure(f"checksum mismatch for '{url}': {spec[0]} {digest.hexdigest()}, "
                             f"expected {checksum.lower()}.")
    final = directory / name
    os.replace(incoming, final)
    return final.as_uri()


def _stored_path(location: Location, url: str) -> Path:
    """The path of the file at `url` in the location; StorageFailure when the location does
    not hold that url (not a file:// url, or outside its root)."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "file":
        raise StorageFailure(f"'{url}' is not a file of storage '{location.name}'.")
    path = Path(os.path.normpath(unquote(parts.path)))
    root = Path(os.path.normpath(location.root))
    if root != path and root not in path.parents:
        raise StorageFailure(f"'{url}' is outside storage '{location.name}'.")
    return path


def holds(location: Location, url: str) -> bool:
    """Whether the file at `url` is one of the location's: its plugin can serve it."""
    try:
        _stored_path(location, url)
    except StorageFailure:
        return False
    return True


def open_stored(location: Location, url: str) -> Path:
    """The local file behind `url` when it lies inside the location's root."""
    path = _stored_path(location, url)
    if not path.is_file():
        raise StorageFailure(f"'{url}' is missing from storage '{location.name}'.")
    return path


def read_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            yield chunk
