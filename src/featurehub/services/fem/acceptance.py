"""Acceptance of creation and patch requests: each feature is granted (its request row is
committed before the answer, so it will be processed even if the process dies right after) or
denied with a cause naming the member and the rule. Nothing here waits for processing.

The whole call runs a fixed number of queries whatever the number of features: the models
named, the urns given (in a read-only transaction: on SQLite the checks of a thousand features
run without holding the single writer lock), then one INSERT of every request row."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from featurehub.db.base import read_only, utcnow
from featurehub.db.fem import Feature, FeatureRequest, among, streamed_rows, unfinished
from featurehub.errors import InvalidInput
from featurehub.services.fem import outbox
from featurehub.services.fem.datamodels import CompiledModel, resolve_models
from featurehub.services.fem.lifecycle import (
    CREATION,
    DENIED,
    GRANTED,
    LOCAL_DELAYED,
    LOCAL_DENIED,
    PATCH,
    PRIORITIES,
)
from featurehub.services.fem.rules import MAX_PROVIDER_ID, files_problem, geometry_problem
from featurehub.services.fem.urns import (
    ENTITY_TYPES,
    InvalidUrn,
    parse_urn,
    product_uuid,
    request_uuids,
)

FILE_UPDATE_MODES = ("APPEND", "REPLACE")


@dataclass
class Answer:
    granted: dict[str, str] = field(default_factory=dict)
    denied: dict[str, str] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"granted": self.granted, "denied": self.denied, "messages": self.messages}


@dataclass(frozen=True)
class StoredProduct:
    urn: str
    uuid: str
    version: int
    provider_id: str
    entity_type: str
    model: str
    session_owner: str | None
    session: str | None
    properties: dict[str, Any]
    # The creation granted and not processed yet, for a product that is not stored yet.
    creation_request: str | None = None


@dataclass
class _Batch:
    """What one call accumulates: request rows, denials, keys seen."""

    project_id: int
    owner: str
    now: Any
    ids: Iterator[str]  # the request ids, one per feature
    answer: Answer = field(default_factory=Answer)
    events: list[dict[str, Any]] = field(default_factory=list)
    repeated: dict[str, int] = field(default_factory=dict)
    written: int = 0
    _write: Callable[[dict[str, Any]], None] | None = None

    @contextmanager
    def writing(self, session: Session) -> Iterator[None]:
        """Request rows decided inside the block are written by its end (on PostgreSQL while
        the next ones are decided)."""
        with streamed_rows(session, FeatureRequest.__table__) as write:
            self._write = write
            yield

    def _add(self, row: dict[str, Any]) -> None:
        assert self._write is not None, "rows are decided inside writing()"
        self._write(row)
        self.written += 1

    def grant(self, key: str, row: dict[str, Any]) -> None:
        if key in self.answer.granted:
            self.repeated[key] = self.repeated.get(key, 1) + 1
        self.answer.granted[key] = row["request_id"]
        self._add(row)

    def deny(self, key: str, cause: str, row: dict[str, Any]) -> None:
        self.answer.denied[key] = cause
        row.update(state=DENIED, step=LOCAL_DENIED, errors=[cause])
        self._add(row)
        self.events.append(outbox.request_event(
            project_id=self.project_id, created=self.now, type_=row["type"],
            request_id=row["request_id"], request_owner=self.owner,
            provider_id=row["provider_id"], urn=row["urn"], state=DENIED, errors=[cause]))

    def commit(self, session: Session) -> Answer:
        if self.written:
            outbox.record(session, self.events)
            session.commit()
        answer = self.answer
        for key, count in self.repeated.items():
            answer.messages.append(
                f"Feature '{key}' appears {count} times: its requests are processed one after "
                f"the other, in order; 'granted' names the last one.")
        if answer.denied:
            answer.messages.append(f"{len(answer.granted)} feature(s) granted, "
                                   f"{len(answer.denied)} denied.")
        return answer


def _no_nul(value: str | None, member: str) -> None:
    if value is not None and "\x00" in value:
        raise InvalidInput(f"{member} contains a NUL character.")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _identifier_problem(value: str, member: str) -> str | None:
    if _CONTROL.search(value):
        return f"The feature's {member} contains control characters."
    return None


def _request_row(batch: _Batch, *, type_: str, priority: int, feature: Mapping[str, Any],
                 options: Mapping[str, Any], session_owner: str | None, session: str | None
                 ) -> dict[str, Any]:
    provider_id = _text(feature.get("id"))
    urn = _text(feature.get("urn"))
    model = _text(feature.get("model"))
    return {
        "request_id": next(batch.ids), "project_id": batch.project_id, "type": type_,
        "state": GRANTED, "step": LOCAL_DELAYED, "priority": priority, "product_key": None,
        "provider_id": provider_id.replace("\x00", "") if provider_id else None,
        "urn": urn.replace("\x00", "") if urn else None,
        "model": model.replace("\x00", "") if model else None,
        "request_owner": batch.owner, "session_owner": session_owner, "session": session,
        "request_date": batch.now, "last_update": batch.now, "errors": None,
        "feature": feature, "options": options,
    }


def stored_products(session: Session, *, project_id: int,
                    urns: Iterable[str]) -> dict[str, StoredProduct]:
    wanted = {urn for urn in urns if isinstance(urn, str) and urn and "\x00" not in urn}
    if not wanted:
        return {}
    rows = session.execute(select(
        Feature.urn, Feature.uuid, Feature.version, Feature.provider_id, Feature.entity_type,
        Feature.model, Feature.session_owner, Feature.session, Feature.properties,
    ).where(Feature.project_id == project_id, among(session, Feature.urn, wanted)))
    return {row.urn: StoredProduct(*row) for row in rows}


def pending_creations(session: Session, *, project_id: int, products: Iterable[str]
                      ) -> dict[str, StoredProduct]:
    """The products (uuids) given a urn by a creation granted and not processed yet, as they
    will be stored, by urn. Requests on one product run in acceptance order: a request granted
    now on such a urn runs after that creation."""
    wanted = set(products)
    if not wanted:
        return {}
    rows = session.execute(select(
        FeatureRequest.urn, FeatureRequest.request_id, FeatureRequest.product_key,
        FeatureRequest.provider_id, FeatureRequest.session_owner, FeatureRequest.session,
        FeatureRequest.feature,
    ).where(among(session, FeatureRequest.product_key, wanted), unfinished(FeatureRequest.step),
            FeatureRequest.project_id == project_id, FeatureRequest.type == CREATION,
            FeatureRequest.urn.is_not(None)).order_by(FeatureRequest.id))
    pending = {}
    for row in rows:
        feature = row.feature
        pending.setdefault(row.urn, StoredProduct(
            row.urn, row.product_key, parse_urn(row.urn).version, row.provider_id,
            feature["entityType"], feature["model"], row.session_owner, row.session,
            feature.get("properties") or {}, creation_request=row.request_id))
    return pending


def known_products(session: Session, *, project_id: int, urns: Sequence[Any],
                   pending: Mapping[str, StoredProduct]) -> dict[str, StoredProduct]:
    """The products of `urns` that are stored or, in `pending` (read before: a creation a
    worker finishes meanwhile is found in one or the other), granted for creation."""
    known = stored_products(session, project_id=project_id, urns=urns)
    for urn in set(urns) - set(known):
        if urn in pending:
            known[urn] = pending[urn]
    return known


def latest_versions(session: Session, *, project_id: int, products: Iterable[str]
                    ) -> dict[str, int]:
    wanted = set(products)
    if not wanted:
        return {}
    return dict(session.execute(
        select(Feature.uuid, func.max(Feature.version))
        .where(Feature.project_id == project_id, among(session, Feature.uuid, wanted))
        .group_by(Feature.uuid)).all())


def _products(urns: Iterable[str]) -> set[str]:
    products = set()
    for text in urns:
        try:
            products.add(parse_urn(text).uuid)
        except InvalidUrn:
            pass
    return products


def _urn_problem(text: str, *, project: str, entity_type: str | None) -> tuple[str | None, Any]:
    try:
        urn = parse_urn(text)
    except InvalidUrn as error:
        return str(error), None
    if urn.project != project:
        return f"Urn '{text}' belongs to project '{urn.project}', not to '{project}'.", None
    if entity_type is not None and urn.entity_type != entity_type:
        return (f"Urn '{text}' names entity type {urn.entity_type} but the feature's entityType "
                f"is {entity_type}."), None
    return None, urn


def _patch_problem(feature: Mapping[str, Any], stored: StoredProduct,
                   model: CompiledModel | None, storages: Sequence[Any]) -> str | None:
    if model is None:
        return f"Unknown model '{stored.model}' (the model of {stored.urn})."
    requested_model = feature.get("model")
    if requested_model is not None and requested_model != stored.model:
        return (f"The model of a product cannot be patched: '{requested_model}' is not "
                f"'{stored.model}'.")
    entity_type = feature.get("entityType")
    if entity_type is not None and entity_type != stored.entity_type:
        return (f"The entityType of a product cannot be patched: {entity_type} is not "
                f"{stored.entity_type}.")
    problem = geometry_problem(feature.get("geometry"))
    if problem:
        return problem
    properties = feature.get("properties") or {}
    # A non-alterable property sent again with its stored value is no change.
    changed = {name: value for name, value in properties.items()
               if name not in model.fixed or stored.properties.get(name) != value}
    problem = model.patch_problem(changed)
    if problem:
        return problem
    return files_problem(feature.get("files") or (), storages=storages)


def _creation_problem(feature: Mapping[str, Any], models: Mapping[str, CompiledModel],
                      storages: Sequence[Any]) -> str | None:
    provider_id = feature.get("id")
    if not provider_id:
        return "Missing 'id': a feature to create has its provider id."
    if len(provider_id) > MAX_PROVIDER_ID:
        return (f"Feature id is longer than {MAX_PROVIDER_ID} characters "
                f"({len(provider_id)}).")
    problem = _identifier_problem(provider_id, "id")
    if problem:
        return problem
    entity_type = feature.get("entityType")
    if not entity_type:
        return "Missing 'entityType' (DATA, DATASET or COLLECTION)."
    if entity_type not in ENTITY_TYPES:
        return f"Invalid entityType '{entity_type}' (DATA, DATASET or COLLECTION)."
    name = feature.get("model")
    if not name:
        return "Missing 'model': a feature names the data model of its properties."
    model = models.get(name)
    if model is None:
        return f"Unknown model '{name}'."
    problem = geometry_problem(feature.get("geometry"))
    if problem:
        return problem
    problem = model.creation_problem(feature.get("properties") or {})
    if problem:
        return problem
    return files_problem(feature.get("files") or (), storages=storages)


def grant_creations(session: Session, *, project_id: int, project: str, body: Mapping[str, Any],
                    models_dir: Path | None) -> Answer:
    """Grant or deny each feature of a creation request; the granted are stored for
    processing before this returns."""
    features = body["features"]
    metadata = body["metadata"]
    owner = body["requestOwner"]
    for value, member in ((owner, "requestOwner"), (metadata["session"], "metadata.session"),
                          (metadata["sessionOwner"], "metadata.sessionOwner")):
        _no_nul(value, member)
    if not features:
        return Answer(messages=["The request holds no feature: nothing to create."])
    batch = _Batch(project_id, owner, utcnow(), iter(request_uuids(len(features))))
    priority = PRIORITIES[metadata.get("priority") or "NORMAL"]
    storages = metadata["storages"]
    override = bool(metadata.get("override"))
    update_if_exists = bool(metadata.get("updateIfExists"))
    creation_options = {"override": override, "storages": storages}
    session_owner, session_name = metadata["sessionOwner"], metadata["session"]
    given = [feature["urn"] for feature in features if feature.get("urn")]
    with read_only(session):
        models = resolve_models(session, project_id=project_id, models_dir=models_dir,
                                names={feature.get("model") for feature in features})
        # Versions granted and not processed yet count as stored: the same urn is requested
        # already, and a lower version would be refused once they are processed.
        products = _products(given)
        pending = pending_creations(session, project_id=project_id, products=products)
        existing = known_products(session, project_id=project_id, urns=given, pending=pending)
        latest = latest_versions(session, project_id=project_id, products=products)
        for product in pending.values():
            latest[product.uuid] = max(latest.get(product.uuid, 0), product.version)
        if existing:
            models.update(resolve_models(
                session, project_id=project_id, models_dir=models_dir,
                names={product.model for product in existing.values()} - set(models)))
    seen_urns: set[str] = set()
    with batch.writing(session):
        for index, feature in enumerate(features):
            key = feature.get("id") or feature.get("urn") or f"features[{index}]"
            row = _request_row(batch, type_=CREATION, priority=priority, feature=feature,
                               options=creation_options, session_owner=session_owner,
                               session=session_name)
            problem = _creation_problem(feature, models, storages)
            if problem:
                batch.deny(key, problem, row)
                continue
            row["product_key"] = product_uuid(project, feature["id"])
            text = feature.get("urn")
            if not text:
                batch.grant(key, row)
                continue
            problem, urn = _urn_problem(text, project=project, entity_type=feature["entityType"])
            if problem is None and urn.uuid != row["product_key"]:
                problem = (f"Urn '{text}' is not one of the product '{feature['id']}': the urns "
                           f"of its versions are URN:FEATURE:{urn.entity_type}:{project}:"
                           f"{row['product_key']}:V<n> (the uuid is name-based on the id).")
            if problem is None and text in seen_urns:
                problem = f"Duplicate urn '{text}' in the request."
            if problem:
                batch.deny(key, problem, row)
                continue
            seen_urns.add(text)
            stored = existing.get(text)
            if stored is not None:
                if not update_if_exists:
                    batch.deny(key, f"URN {text} already exists." if stored.creation_request
                               is None else f"URN {text} is requested already (creation "
                               f"{stored.creation_request}, not processed yet).", row)
                    continue
                problem = _patch_problem(feature, stored, models.get(stored.model), storages)
                if problem:
                    batch.deny(key, problem, row)
                    continue
                row.update(type=PATCH, provider_id=stored.provider_id, session_owner=session_owner,
                           session=session_name, options={"storages": storages,
                                                          "fileUpdateMode": "APPEND"})
                batch.grant(key, row)
                continue
            if urn.version <= latest.get(urn.uuid, 0):
                batch.deny(key, f"Version is invalid: V{urn.version} of {text} is not above the "
                                f"latest version V{latest[urn.uuid]} of this product (stored, or "
                                f"requested and not processed yet).", row)
                continue
            batch.grant(key, row)
    return batch.commit(session)


def grant_patches(session: Session, *, project_id: int, project: str, body: Mapping[str, Any],
                  file_update_mode: str, models_dir: Path | None) -> Answer:
    """Grant or deny each feature of a patch request (features identified by urn)."""
    if file_update_mode not in FILE_UPDATE_MODES:
        raise InvalidInput(f"Header request.file_update_mode is APPEND or REPLACE, not "
                           f"'{file_update_mode}'.")
    features = body["features"]
    metadata = body["metadata"]
    owner = body["requestOwner"]
    recipient = metadata.get("acknowledgedRecipient")
    _no_nul(owner, "requestOwner")
    _no_nul(recipient, "metadata.acknowledgedRecipient")
    if not features:
        return Answer(messages=["The request holds no feature: nothing to patch."])
    batch = _Batch(project_id, owner, utcnow(), iter(request_uuids(len(features))))
    priority = PRIORITIES[metadata["priority"]]
    storages = metadata["storages"]
    options: dict[str, Any] = {"storages": storages, "fileUpdateMode": file_update_mode}
    if recipient:
        options["acknowledgedRecipient"] = recipient
    with read_only(session):
        urns = [feature.get("urn") for feature in features]
        pending = pending_creations(session, project_id=project_id, products=_products(
            urn for urn in urns if isinstance(urn, str)))
        stored = known_products(session, project_id=project_id, urns=urns, pending=pending)
        models = resolve_models(session, project_id=project_id, models_dir=models_dir,
                                names={product.model for product in stored.values()})
    seen: set[str] = set()
    with batch.writing(session):
        for index, feature in enumerate(features):
            text = feature.get("urn")
            key = text or feature.get("id") or f"features[{index}]"
            product = stored.get(text) if text else None
            row = _request_row(batch, type_=PATCH, priority=priority, feature=feature,
                               options=options,
                               session_owner=product.session_owner if product else None,
                               session=product.session if product else None)
            if not text:
                batch.deny(key, "Missing 'urn': a patch identifies the product by its urn.", row)
                continue
            problem, urn = _urn_problem(text, project=project, entity_type=None)
            if problem is None and text in seen:
                problem = f"Duplicate urn '{text}' in the request."
            if problem is None and product is None:
                problem = f"URN {text} does not exist."
            if problem is None:
                problem = _patch_problem(feature, product, models.get(product.model), storages)
            if problem:
                batch.deny(key, problem, row)
                continue
            seen.add(text)
            row.update(product_key=urn.uuid, provider_id=product.provider_id, model=product.model)
            batch.grant(key, row)
    return batch.commit(session)
