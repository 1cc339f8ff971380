"""Requests as their producers see them: one by id, search, retry of those in error, deletion
of those not being processed; and the counters of each session."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, delete, func, select, update
from sqlalchemy.orm import Session

from featurehub.db.base import utcnow
from featurehub.db.fem import Feature, FeatureRequest
from featurehub.errors import InvalidInput, NotFound
from featurehub.services.fem.lifecycle import (
    CREATION,
    DENIED,
    ERROR,
    ERROR_STEPS,
    GRANTED,
    LOCAL_DELAYED,
    PATCH,
    PRIORITY_NAMES,
    RUNNING_STEPS,
    SUCCESS,
)
from featurehub.web import PageRequest, order_by

SORTABLE = {"requestDate": FeatureRequest.request_date, "lastUpdate": FeatureRequest.last_update,
            "providerId": FeatureRequest.provider_id, "state": FeatureRequest.state,
            "step": FeatureRequest.step, "priority": FeatureRequest.priority}


def as_dict(row: FeatureRequest) -> dict[str, Any]:
    return {
        "requestId": row.request_id, "type": row.type, "state": row.state, "step": row.step,
        "priority": PRIORITY_NAMES[row.priority], "providerId": row.provider_id, "urn": row.urn,
        "requestOwner": row.request_owner, "sessionOwner": row.session_owner,
        "session": row.session, "requestDate": row.request_date.isoformat(),
        "lastUpdate": row.last_update.isoformat(), "errors": list(row.errors or []),
    }


def get_request(session: Session, *, project_id: int, request_id: str) -> dict[str, Any]:
    row = session.scalars(select(FeatureRequest).where(
        FeatureRequest.project_id == project_id, FeatureRequest.request_id == request_id)).first()
    if row is None:
        raise NotFound(f"Request '{request_id}' does not exist.")
    return as_dict(row)


def text_filter(value: str | None, member: str) -> str | None:
    if value is not None and "\x00" in value:
        raise InvalidInput(f"{member} contains a NUL character.")
    return value


def date_filter(value: str | None, member: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as error:
        raise InvalidInput(f"{member} is not an ISO 8601 date-time: '{value}'.") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # an offset that pushes year 1 or 9999 out of range: clamp
        return (datetime.min if moment.year == 1 else datetime.max).replace(tzinfo=UTC)


def _filtered(project_id: int, type_: str, criteria: Mapping[str, Any]) -> list[Any]:
    conditions = [FeatureRequest.project_id == project_id, FeatureRequest.type == type_]
    owner = text_filter(criteria.get("source"), "source")
    if owner is not None:
        conditions.append(FeatureRequest.session_owner == owner)
    session_name = text_filter(criteria.get("session"), "session")
    if session_name is not None:
        conditions.append(FeatureRequest.session == session_name)
    for member, column in (("providerIds", FeatureRequest.provider_id),
                           ("requestIds", FeatureRequest.request_id)):
        values = criteria.get(member)
        if values is not None:
            conditions.append(column.in_([text_filter(v, member) for v in values]))
    if criteria.get("states") is not None:
        conditions.append(FeatureRequest.state.in_(criteria["states"]))
    if criteria.get("steps") is not None:
        conditions.append(FeatureRequest.step.in_(criteria["steps"]))
    return conditions + last_update_between(FeatureRequest.last_update, criteria)


def last_update_between(column: Any, criteria: Mapping[str, Any]) -> list[Any]:
    """Conditions of a `lastUpdate: {after, before}` filter member."""
    dates = criteria.get("lastUpdate") or {}
    after = date_filter(dates.get("after"), "lastUpdate.after")
    before = date_filter(dates.get("before"), "lastUpdate.before")
    return ([column >= after] if after is not None else []) + (
        [column <= before] if before is not None else [])


def search_requests(session: Session, *, project_id: int, type_: str,
                    criteria: Mapping[str, Any], page: PageRequest
                    ) -> tuple[list[dict[str, Any]], int, int]:
    """A page of matching requests, the number matching, the number of those in error."""
    conditions = _filtered(project_id, type_, criteria)
    query: Select[Any] = select(FeatureRequest).where(*conditions).order_by(
        *order_by(page, SORTABLE, default=[("requestDate", True)]), FeatureRequest.id)
    counts = dict(session.execute(select(FeatureRequest.state, func.count()).where(
        *conditions).group_by(FeatureRequest.state)).all())
    rows = session.scalars(query.offset(page.offset).limit(page.size))
    return [as_dict(row) for row in rows], sum(counts.values()), counts.get(ERROR, 0)


def retry_requests(session: Session, *, project_id: int, type_: str,
                   criteria: Mapping[str, Any]) -> dict[str, Any]:
    """Requests in error go back to the queue."""
    conditions = _filtered(project_id, type_, criteria)
    matched = session.scalar(select(func.count()).select_from(FeatureRequest).where(
        *conditions)) or 0
    handled = session.execute(update(FeatureRequest).where(
        *conditions, FeatureRequest.state == ERROR, FeatureRequest.step.in_(ERROR_STEPS),
    ).values(state=GRANTED, step=LOCAL_DELAYED, errors=None, claimed_by=None, claimed_at=None,
             last_update=utcnow()).execution_options(synchronize_session=False)).rowcount
    session.commit()
    return {"totalRequested": matched, "totalHandled": handled,
            "message": f"{handled} request(s) in error retried, {matched - handled} matching "
                       f"request(s) not in error left as they are."}


def delete_requests(session: Session, *, project_id: int, type_: str,
                    criteria: Mapping[str, Any]) -> dict[str, Any]:
    """Requests not being processed are deleted (a granted one is thereby cancelled)."""
    conditions = _filtered(project_id, type_, criteria)
    matched = session.scalar(select(func.count()).select_from(FeatureRequest).where(
        *conditions)) or 0
    handled = session.execute(delete(FeatureRequest).where(
        *conditions, FeatureRequest.step.not_in(RUNNING_STEPS),
    ).execution_options(synchronize_session=False)).rowcount
    session.commit()
    return {"totalRequested": matched, "totalHandled": handled,
            "message": f"{handled} request(s) deleted, {matched - handled} being processed "
                       f"left."}


# ---- sessions ----

_COUNTERS = ("referencingRequests", "deniedReferencingRequests", "runningReferencingRequests",
             "inErrorReferencingRequests", "referencedProducts", "updateRequests",
             "deniedUpdateRequests", "runningUpdateRequests", "inErrorUpdateRequests",
             "updatedProducts")


def session_counters(session: Session, *, project_id: int, session_owner: str | None,
                     session_name: str | None) -> list[dict[str, Any]]:
    """Counters of each (sessionOwner, session), computed from the requests and products."""
    text_filter(session_owner, "sessionOwner")
    text_filter(session_name, "session")
    request_conditions = [FeatureRequest.project_id == project_id,
                          FeatureRequest.session_owner.is_not(None),
                          FeatureRequest.session.is_not(None)]
    feature_conditions = [Feature.project_id == project_id,
                          Feature.session_owner.is_not(None), Feature.session.is_not(None)]
    if session_owner is not None:
        request_conditions.append(FeatureRequest.session_owner == session_owner)
        feature_conditions.append(Feature.session_owner == session_owner)
    if session_name is not None:
        request_conditions.append(FeatureRequest.session == session_name)
        feature_conditions.append(Feature.session == session_name)
    counters: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(_COUNTERS, 0))
    for owner, name, type_, state, count in session.execute(
            select(FeatureRequest.session_owner, FeatureRequest.session, FeatureRequest.type,
                   FeatureRequest.state, func.count())
            .where(*request_conditions)
            .group_by(FeatureRequest.session_owner, FeatureRequest.session,
                      FeatureRequest.type, FeatureRequest.state)):
        prefix = {CREATION: "ReferencingRequests", PATCH: "UpdateRequests"}.get(type_)
        if prefix is None:
            continue
        entry = counters[(owner, name)]
        entry["referencingRequests" if type_ == CREATION else "updateRequests"] += count
        qualifier = {DENIED: "denied", GRANTED: "running", ERROR: "inError"}.get(state)
        if qualifier:
            entry[qualifier + prefix] += count
    for owner, name, count in session.execute(
            select(Feature.session_owner, Feature.session, func.count())
            .where(*feature_conditions).group_by(Feature.session_owner, Feature.session)):
        counters[(owner, name)]["referencedProducts"] = count
    for owner, name, count in session.execute(
            select(FeatureRequest.session_owner, FeatureRequest.session,
                   func.count(FeatureRequest.urn.distinct()))
            .where(*request_conditions, FeatureRequest.type == PATCH,
                   FeatureRequest.state == SUCCESS)
            .group_by(FeatureRequest.session_owner, FeatureRequest.session)):
        counters[(owner, name)]["updatedProducts"] = count
    return [{"sessionOwner": owner, "session": name, **values}
            for (owner, name), values in sorted(counters.items())]
