"""Users of a project: search with the user filter, CSV export, reading and updating them."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, delete, exists, func, not_, or_, select
from sqlalchemy.orm import Session

from featurehub.db.platform import ProjectUser, ResourceAccess, Role, UserMetadata, UserResource
from featurehub.errors import Forbidden, InvalidInput, NotFound, Unprocessable
from featurehub.security.authorization import Caller, is_granted
from featurehub.services.admin import accesses, hierarchy, members
from featurehub.web import PageRequest, fetch_page, order_by

SORTABLE: dict[str, ColumnElement[Any]] = {
    "id": ProjectUser.id, "email": ProjectUser.email, "firstName": ProjectUser.first_name,
    "lastName": ProjectUser.last_name, "status": ProjectUser.status,
    "origin": ProjectUser.origin, "created": ProjectUser.created,
    "lastUpdate": ProjectUser.last_update, "lastConnection": ProjectUser.last_connection,
    "maxQuota": ProjectUser.max_quota, "currentQuota": ProjectUser.current_quota,
}
DEFAULT_SORT = (("created", True),)


# --- the user filter -----------------------------------------------------------------------------

def _like_pattern(value: str, match_mode: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return {"STARTS_WITH": f"{escaped}%", "CONTAINS": f"%{escaped}%",
            "ENDS_WITH": f"%{escaped}"}[match_mode]


def _matches(column: Any, restriction: dict[str, Any]) -> ColumnElement[bool] | None:
    """One value of the restriction matches the column (None: no values, no restriction)."""
    values = restriction.get("values") or []
    if not values:
        return None
    match_mode = restriction.get("matchMode") or "STRICT"
    ignore_case = bool(restriction.get("ignoreCase"))
    subject = func.lower(column) if ignore_case else column
    conditions = []
    for value in values:
        value = value.lower() if ignore_case else value
        if match_mode == "STRICT":
            conditions.append(subject == value)
        else:
            conditions.append(subject.like(_like_pattern(value, match_mode), escape="\\"))
    return or_(*conditions)


def _string_restriction(column: Any, restriction: dict[str, Any] | str | None
                        ) -> ColumnElement[bool] | None:
    if restriction is None:
        return None
    if isinstance(restriction, str):  # a plain string: case-insensitive substring
        restriction = {"values": [restriction], "matchMode": "CONTAINS", "ignoreCase": True}
    matched = _matches(column, restriction)
    if matched is None:
        return None
    if restriction.get("mode") == "EXCLUDE":
        return or_(column.is_(None), not_(matched))
    return matched


def _groups_restriction(session: Session, restriction: dict[str, Any] | None
                        ) -> ColumnElement[bool] | None:
    """Access groups are a JSON array: a user matches when one of its groups matches."""
    if restriction is None:
        return None
    function = (func.json_array_elements_text if session.get_bind().dialect.name == "postgresql"
                else func.json_each)
    groups = function(ProjectUser.access_groups).table_valued("value").alias("access_group")
    matched = _matches(groups.c.value, restriction)
    if matched is None:
        return None
    any_group = exists(select(groups.c.value).where(matched))
    return not_(any_group) if restriction.get("mode") == "EXCLUDE" else any_group


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError as error:
        raise InvalidInput(f"'{text}' is not a date-time.") from error
    value = value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # an offset that leaves the calendar: the calendar's end
        return datetime.min.replace(tzinfo=UTC) if value.year == 1 else datetime.max.replace(
            tzinfo=UTC)


def _date_range(column: Any, date_range: dict[str, Any] | None) -> list[ColumnElement[bool]]:
    conditions = []
    if date_range and date_range.get("after"):
        conditions.append(column >= _instant(date_range["after"]))
    if date_range and date_range.get("before"):
        conditions.append(column <= _instant(date_range["before"]))
    return conditions


def filter_conditions(session: Session, user_filter: dict[str, Any]) -> list[ColumnElement[bool]]:
    members.refuse_nul(user_filter, "The filter")
    candidates = [
        _groups_restriction(session, user_filter.get("accessGroups")),
        _string_restriction(ProjectUser.email, user_filter.get("email")),
        _string_restriction(ProjectUser.first_name, user_filter.get("firstName")),
        _string_restriction(ProjectUser.last_name, user_filter.get("lastName")),
        _string_restriction(ProjectUser.origin, user_filter.get("origins")),
        _string_restriction(Role.name, user_filter.get("roles")),
        _string_restriction(ProjectUser.status, user_filter.get("status")),
        *_date_range(ProjectUser.created, user_filter.get("creationDate")),
        *_date_range(ProjectUser.last_connection, user_filter.get("lastConnection")),
    ]
    warning = user_filter.get("quotaWarningCount")
    if warning is not None:
        candidates.append(and_(ProjectUser.max_quota.is_not(None), ProjectUser.max_quota >= 0,
                               ProjectUser.max_quota - ProjectUser.current_quota <= warning))
    return [condition for condition in candidates if condition is not None]


def _filtered(session: Session, project_id: int, user_filter: dict[str, Any] | None,
              selected: Select[Any]) -> Select[Any]:
    return (selected.join(Role, Role.id == ProjectUser.role_id)
            .where(ProjectUser.project_id == project_id,
                   *filter_conditions(session, user_filter or {})))


def search_users(session: Session, *, project_id: int, user_filter: dict[str, Any] | None,
                 page: PageRequest) -> tuple[list[dict[str, Any]], int]:
    query = _filtered(session, project_id, user_filter, select(ProjectUser)).order_by(
        *order_by(page, SORTABLE, default=DEFAULT_SORT), ProjectUser.id)
    rows, total = fetch_page(session, query, page)
    return members.present(session, rows), total


def pending_accesses(session: Session, *, project_id: int, page: PageRequest
                     ) -> tuple[list[dict[str, Any]], int]:
    return search_users(session, project_id=project_id,
                        user_filter={"status": {"values": ["WAITING_ACCESS"]}}, page=page)


def count_users(session: Session, *, project_id: int, status: str | None) -> int:
    query = select(func.count(ProjectUser.id)).where(ProjectUser.project_id == project_id)
    if status is not None:
        query = query.where(ProjectUser.status == status)
    return session.scalar(query) or 0


# --- CSV export ----------------------------------------------------------------------------------

CSV_HEADER = ("id", "email", "firstName", "lastName", "status", "role", "origin", "accessGroups",
              "created", "lastUpdate", "lastConnection", "maxQuota", "currentQuota",
              "licenseAccepted")
CSV_CHUNK = 64 * 1024


def export_query(session: Session, *, project_id: int, user_filter: dict[str, Any] | None
                 ) -> Select[Any]:
    """The export's query, built (and the filter checked) before the answer starts."""
    columns = select(
        ProjectUser.id, ProjectUser.email, ProjectUser.first_name, ProjectUser.last_name,
        ProjectUser.status, Role.name, ProjectUser.origin, ProjectUser.access_groups,
        ProjectUser.created, ProjectUser.last_update, ProjectUser.last_connection,
        ProjectUser.max_quota, ProjectUser.current_quota, ProjectUser.license_accepted)
    return _filtered(session, project_id, user_filter, columns).order_by(
        ProjectUser.created, ProjectUser.id)


def export_csv(sessions: Callable[[], Session], query: Select[Any]) -> Iterator[str]:
    """The CSV text in chunks, read from a server-side cursor in its own session: the answer
    streams while rows arrive, whatever the number of users."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    with sessions() as session:
        rows = session.execute(query.execution_options(yield_per=1000, stream_results=True))
        for row in rows:
            writer.writerow([_csv_value(value) for value in row])
            if buffer.tell() >= CSV_CHUNK:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
    yield buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list):
        return ";".join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


# --- one user ------------------------------------------------------------------------------------

def get_user(session: Session, *, project_id: int, user_id: int) -> dict[str, Any]:
    return members.present_one(session, members.find_user(session, project_id, user_id))


def get_user_by_email(session: Session, *, project_id: int, email: str) -> dict[str, Any]:
    return members.present_one(session, members.find_user_by_email(session, project_id, email))


def current_user(session: Session, *, project_id: int, user_id: int | None) -> ProjectUser:
    if user_id is None:
        raise NotFound("The caller has no user in this project.")
    return members.find_user(session, project_id, user_id)


def get_current_user(session: Session, *, project_id: int, user_id: int | None) -> dict[str, Any]:
    return members.present_one(session, current_user(session, project_id=project_id,
                                                     user_id=user_id))


def update_user(session: Session, *, project_id: int, caller_role: str, user_id: int,
                body: dict[str, Any], verification_link: accesses.VerificationLink
                ) -> dict[str, Any]:
    """updateProjectUser: names, groups, quotas, license, role (one the caller may give) and
    status (along the status machine; accepting a request asks to verify the address, as
    acceptAccessRequest does). Metadata and permissions have their own operations."""
    members.refuse_nul(body)
    if body.get("id") is not None and body["id"] != user_id:
        raise Unprocessable(f"The user id in the body ({body['id']}) is not the one in the path "
                            f"({user_id}).")
    user = members.find_user(session, project_id, user_id)
    members.check_may_manage(session, project_id, caller_role, user)
    _check_same_email(user, body)
    role = body.get("role")
    if role is not None and role["name"] != user.role.name:
        user.role = hierarchy.role_to_give(session, project_id, caller_role, role["name"])
    if members.change_status(user, body["status"]) == "accept":
        accesses.ask_to_verify_email(session, user, verification_link)
    user.origin = body["origin"]
    _apply_own_fields(user, body)
    for field, column in (("accessGroups", "access_groups"), ("maxQuota", "max_quota"),
                          ("currentQuota", "current_quota")):
        if field in body:
            setattr(user, column, body[field] if field != "currentQuota" else body[field] or 0)
    session.commit()
    return members.present_one(session, user)


def update_current_user(session: Session, *, project_id: int, user_id: int | None,
                        body: dict[str, Any]) -> dict[str, Any]:
    """updateCurrentProjectUser: the caller's own names and license acceptance."""
    members.refuse_nul(body)
    user = current_user(session, project_id=project_id, user_id=user_id)
    if body.get("id") is not None and body["id"] != user.id:
        raise Forbidden(f"User {user.id} may only update their own user, not {body['id']}.")
    _check_same_email(user, body)
    role = body.get("role")
    if (role is not None and role["name"] != user.role.name) or body["status"] != user.status:
        raise Forbidden("A user cannot change their own role or status.")
    _apply_own_fields(user, body)
    session.commit()
    return members.present_one(session, user)


def _check_same_email(user: ProjectUser, body: dict[str, Any]) -> None:
    if body.get("email") is not None and body["email"] != user.email:
        raise Unprocessable(f"The email of user {user.id} cannot be changed.")


def _apply_own_fields(user: ProjectUser, body: dict[str, Any]) -> None:
    for field, column in (("firstName", "first_name"), ("lastName", "last_name")):
        if field in body:
            setattr(user, column, body[field])
    if body.get("licenseAccepted") is not None:
        user.license_accepted = body["licenseAccepted"]


# --- metadata ------------------------------------------------------------------------------------

def get_metadata(session: Session, *, project_id: int, user_id: int) -> list[dict[str, Any]]:
    user = members.find_user(session, project_id, user_id)
    return [members.metadata_dict(item) for item in session.scalars(
        select(UserMetadata).where(UserMetadata.project_user_id == user.id)
        .order_by(UserMetadata.key))]


def replace_metadata(session: Session, *, project_id: int, caller_role: str, user_id: int,
                     metadata: list[dict[str, Any]]) -> list[dict[str, Any]]:
    members.refuse_nul(metadata)
    members.check_unique_keys(metadata)
    user = members.find_user(session, project_id, user_id)
    members.check_may_manage(session, project_id, caller_role, user)
    session.execute(delete(UserMetadata).where(UserMetadata.project_user_id == user.id))
    session.add_all(members.metadata_rows(user.id, metadata))
    session.commit()
    return get_metadata(session, project_id=project_id, user_id=user_id)


def delete_metadata(session: Session, *, project_id: int, caller_role: str, user_id: int) -> None:
    replace_metadata(session, project_id=project_id, caller_role=caller_role, user_id=user_id,
                     metadata=[])


# --- resource accesses of one user ---------------------------------------------------------------

def get_user_resources(session: Session, *, project_id: int, email: str) -> list[dict[str, Any]]:
    user = members.find_user_by_email(session, project_id, email)
    return [members.resource_dict(access) for access in session.scalars(
        select(ResourceAccess)
        .join(UserResource, UserResource.resource_access_id == ResourceAccess.id)
        .where(UserResource.project_user_id == user.id).order_by(ResourceAccess.id))]


def grant_user_resources(session: Session, *, caller: Caller, email: str,
                         accesses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """updateProjectUserResources: the accesses (by id) join the user's own, merged; each must
    exist in the project and be held by the caller."""
    user = members.find_user_by_email(session, caller.project_id, email)
    members.check_may_manage(session, caller.project_id, caller.role, user)
    ids = []
    for item in accesses:
        if item.get("id") is None:
            raise Unprocessable("A resource access is identified by its id; one has none.")
        ids.append(item["id"])
    stored = {access.id: access for access in session.scalars(select(ResourceAccess).where(
        ResourceAccess.project_id == caller.project_id, ResourceAccess.id.in_(ids)))}
    missing = [str(access_id) for access_id in ids if access_id not in stored]
    if missing:
        raise Unprocessable(f"Resource access {', '.join(missing)} does not exist.")
    for access in stored.values():
        if not is_granted(session, project_id=caller.project_id, role=caller.role,
                          microservice=access.microservice, resource=access.resource,
                          verb=access.verb, user_id=caller.user_id):
            raise Forbidden(f"Role {caller.role} does not hold the access "
                            f"{access.resource}@{access.verb}; it cannot grant it.")
    held = set(session.scalars(select(UserResource.resource_access_id).where(
        UserResource.project_user_id == user.id)))
    session.add_all(UserResource(project_user_id=user.id, resource_access_id=access_id)
                    for access_id in stored if access_id not in held)
    session.commit()
    return get_user_resources(session, project_id=caller.project_id, email=email)


def remove_user_resources(session: Session, *, project_id: int, caller_role: str,
                          email: str) -> None:
    user = members.find_user_by_email(session, project_id, email)
    members.check_may_manage(session, project_id, caller_role, user)
    session.execute(delete(UserResource).where(UserResource.project_user_id == user.id))
    session.commit()
