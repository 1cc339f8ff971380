"""Toponyms: named areas. Loaded ones (countries) are visible and permanent; registered ones are
not visible and expire unless read."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import math
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from shapely.errors import GEOSException, ShapelyError
from shapely.geometry import mapping, shape
from shapely.geometry.base import BaseGeometry
from sqlalchemy import delete, func, insert, or_, select
from sqlalchemy.orm import Session

from featurehub.db.access import Toponym
from featurehub.db.base import utcnow
from featurehub.errors import InvalidInput, NotFound, TooManyRequests, UnsupportedContent
from featurehub.models.rs_access import Toponym as ToponymModel
from featurehub.models.rs_access import ToponymGeometry, ToponymMetadata, ToponymRegistration
from featurehub.services import settings as project_settings
from featurehub.services.access.settings import (
    MICROSERVICE,
    TOPONYM_DAILY_LIMIT,
    TOPONYM_EXPIRATION_DAYS,
)
from featurehub.web import PageRequest, fetch_page, order_by

log = logging.getLogger(__name__)

COUNTRIES = Path(__file__).resolve().parents[2] / "data" / "countries.geojson.gz"
SIMPLIFY_TOLERANCE = 0.1  # degree
SEARCH_LIMIT = 100
REGISTRABLE = ("Polygon", "MultiPolygon")
SORTABLE = {"businessId": Toponym.business_id, "labelEn": Toponym.label_en,
            "labelFr": Toponym.label_fr}


def to_model(row: Toponym, *, geometry: str | None = None,
             with_geometry: bool = True) -> ToponymModel:
    return ToponymModel(
        businessId=row.business_id, labelEn=row.label_en, labelFr=row.label_fr,
        description=row.description, copyright=row.copyright, visible=row.visible,
        boundingBox=f"BOX({row.minx:g} {row.miny:g},{row.maxx:g} {row.maxy:g})",
        geometry=ToponymGeometry.model_validate_json(geometry or row.geometry)
        if with_geometry else None,
        toponymMetadata=ToponymMetadata(author=row.author, project=row.project,
                                        creationDate=row.creation_date,
                                        expirationDate=row.expiration_date),
    )


def _alive(now: datetime) -> Any:
    return or_(Toponym.expiration_date.is_(None), Toponym.expiration_date > now)


def list_toponyms(session: Session, *, project_id: int,
                  page: PageRequest) -> tuple[list[ToponymModel], int]:
    query = select(Toponym).where(Toponym.project_id == project_id, Toponym.visible.is_(True),
                                  _alive(utcnow())).order_by(
        *order_by(page, SORTABLE, default=[("labelEn", True), ("businessId", True)]))
    rows, total = fetch_page(session, query, page)
    return [to_model(row) for row in rows], total


def search_toponyms(session: Session, *, project_id: int, partial_label: str | None,
                    locale: str | None) -> list[ToponymModel]:
    """Case-insensitive substring match on the label of the locale (`fr`, else English)."""
    french = (locale or "").lower() == "fr"
    folded, label = ((Toponym.folded_fr, Toponym.label_fr) if french
                     else (Toponym.folded_en, Toponym.label_en))
    query = select(Toponym).where(Toponym.project_id == project_id, Toponym.visible.is_(True),
                                  _alive(utcnow()))
    if partial_label:
        pattern = partial_label.casefold()
        for char in ("\\", "%", "_"):
            pattern = pattern.replace(char, "\\" + char)
        query = query.where(folded.like(f"%{pattern}%", escape="\\"))
    rows = session.scalars(query.order_by(label, Toponym.business_id).limit(SEARCH_LIMIT))
    return [to_model(row, with_geometry=False) for row in rows]


def get_toponym(session: Session, *, project_id: int, business_id: str,
                simplified: bool = False) -> ToponymModel:
    """A registered toponym that is read lives on: its expiry starts again."""
    now = utcnow()
    row = session.scalars(select(Toponym).where(
        Toponym.project_id == project_id, Toponym.business_id == business_id,
        _alive(now))).first()
    if row is None:
        raise NotFound(f"Toponym '{business_id}' does not exist.")
    if row.expiration_date is not None:
        row.expiration_date = now + timedelta(days=_expiration_days(session, project_id))
        session.commit()
    geometry = None
    if simplified:
        simple = shape(json.loads(row.geometry)).simplify(SIMPLIFY_TOLERANCE,
                                                          preserve_topology=True)
        geometry = json.dumps(mapping(simple))
    return to_model(row, geometry=geometry)


def register_toponym(session: Session, *, project_id: int, project_name: str,
                     caller: str | None, registration: ToponymRegistration
                     ) -> tuple[ToponymModel, bool]:
    """(toponym, created): the same geometry registered before is refreshed instead."""
    geometry = parse_area(registration.feature)
    digest = _digest(geometry)
    now = utcnow()
    expiry = now + timedelta(days=_expiration_days(session, project_id))
    existing = session.scalars(select(Toponym).where(
        Toponym.project_id == project_id, Toponym.geometry_digest == digest,
        Toponym.visible.is_(False), _alive(now))).first()
    if existing is not None:
        existing.expiration_date = expiry
        session.commit()
        return to_model(existing), False
    limit = int(project_settings.value_of(session, project_id=project_id,
                                          microservice=MICROSERVICE, name=TOPONYM_DAILY_LIMIT))
    day_start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    registered_today = session.scalar(select(func.count()).select_from(Toponym).where(
        Toponym.project_id == project_id, Toponym.registered_by == caller,
        Toponym.creation_date >= day_start)) or 0
    if registered_today >= limit:
        raise TooManyRequests(f"At most {limit} toponyms may be registered per user and day.",
                              retry_after=(day_start + timedelta(days=1) - now).total_seconds())
    business_id = _new_business_id(session, project_id)
    row = Toponym(project_id=project_id, business_id=business_id, visible=False,
                  author=registration.user or caller, project=registration.project or project_name,
                  registered_by=caller, creation_date=now, expiration_date=expiry,
                  **_columns(geometry, label_en=business_id, label_fr=business_id))
    session.add(row)
    session.commit()
    return to_model(row), True


def parse_area(text: str) -> BaseGeometry:
    """The Polygon or MultiPolygon of a GeoJSON Feature or geometry given as a string."""
    try:
        document = json.loads(text, parse_constant=_refuse_constant)
    except ValueError as error:
        raise InvalidInput(f"The feature is not valid JSON: {error}.") from None
    if isinstance(document, dict) and document.get("type") == "Feature":
        document = document.get("geometry")
    if not isinstance(document, dict) or not isinstance(document.get("type"), str):
        raise InvalidInput("The feature is neither a GeoJSON Feature nor a GeoJSON geometry.")
    if document["type"] not in REGISTRABLE:
        raise UnsupportedContent(f"Geometry type '{document['type']}' cannot be registered; "
                                 f"only {' and '.join(REGISTRABLE)} can.")
    try:
        geometry = shape(document)
        valid = not geometry.is_empty and all(
            math.isfinite(v) for v in geometry.bounds) and geometry.is_valid
    except (ShapelyError, GEOSException, ValueError, TypeError, AttributeError, IndexError,
            KeyError):
        valid = False
    if not valid:
        raise InvalidInput(f"The {document['type']} is not a valid GeoJSON geometry.")
    minx, miny, maxx, maxy = geometry.bounds
    if minx < -180 or maxx > 180 or miny < -90 or maxy > 90:
        raise InvalidInput("Coordinates are longitudes in [-180, 180] and latitudes in [-90, 90].")
    return geometry


def purge_expired(session: Session) -> int:
    """Delete the registered toponyms whose expiry has passed, in every project."""
    result = session.execute(delete(Toponym).where(Toponym.expiration_date <= utcnow()))
    session.commit()
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def load_toponyms(session: Session, *, project_id: int, path: Path = COUNTRIES) -> int:
    """Bulk-load the features of a GeoJSON FeatureCollection (gzipped or not) as visible,
    permanent toponyms; business ids already present are left as they are."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as stream:
        collection = json.load(stream)
    present = set(session.scalars(select(Toponym.business_id).where(
        Toponym.project_id == project_id)))
    now = utcnow()
    rows = []
    for feature in collection["features"]:
        properties = feature["properties"]
        if properties["businessId"] in present:
            continue
        present.add(properties["businessId"])
        rows.append({
            "project_id": project_id, "business_id": properties["businessId"],
            "description": properties.get("description"),
            "copyright": properties.get("copyright"), "visible": True, "creation_date": now,
            **_columns(shape(feature["geometry"]), label_en=properties["labelEn"],
                       label_fr=properties.get("labelFr") or properties["labelEn"]),
        })
    if rows:
        session.execute(insert(Toponym), rows)
    return len(rows)


def _columns(geometry: BaseGeometry, *, label_en: str, label_fr: str) -> dict[str, Any]:
    minx, miny, maxx, maxy = geometry.bounds
    return {"label_en": label_en, "label_fr": label_fr, "folded_en": label_en.casefold(),
            "folded_fr": label_fr.casefold(), "geometry": json.dumps(mapping(geometry)),
            "geometry_digest": _digest(geometry), "minx": minx, "miny": miny, "maxx": maxx,
            "maxy": maxy}


def _digest(geometry: BaseGeometry) -> str:
    return hashlib.sha256(geometry.normalize().wkb).hexdigest()


def _new_business_id(session: Session, project_id: int) -> str:
    base = f"Toponym_{datetime.now().isoformat()}"  # noqa: DTZ005 (local time, as the reference)
    candidate, suffix = base, 1
    while session.scalars(select(Toponym.id).where(
            Toponym.project_id == project_id, Toponym.business_id == candidate)).first():
        suffix += 1
        candidate = f"{base}_{suffix}"
    return candidate


def _expiration_days(session: Session, project_id: int) -> int:
    return int(project_settings.value_of(session, project_id=project_id,
                                          microservice=MICROSERVICE, name=TOPONYM_EXPIRATION_DAYS))


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


# -- hooks ------------------------------------------------------------------------------------

def load_into_new_project(session: Session, project: Any) -> None:
    """PROJECT_CREATED: every new project starts with the world's countries, unless
    FEATUREHUB_LOAD_TOPONYMS is false."""
    from featurehub.settings import Settings

    settings = session.info.get("settings") or Settings.from_env()
    if settings.load_toponyms:
        count = load_toponyms(session, project_id=project.id)
        log.info("project %s: %d toponyms loaded", project.name, count)


class PurgeWorker:
    """Purges expired toponyms at start and then every `interval` seconds."""

    def __init__(self, sessions: Any, interval: float = 3600.0) -> None:
        self._sessions = sessions
        self._interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="toponym-purge", daemon=True)

    def start(self) -> PurgeWorker:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                with self._sessions() as session:
                    purged = purge_expired(session)
                if purged:
                    log.info("%d expired toponyms purged", purged)
            except Exception:  # a failed purge is retried at the next round
                log.exception("toponym purge failed")
            self._stopped.wait(self._interval)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)


def start_purge_worker(runtime: Any) -> None:
    """APP_STARTED: expired toponyms are purged in the background."""
    runtime.workers["toponym-purge"] = PurgeWorker(runtime.sessions).start()
