"""Search history: saved searches of an account in a module. Below ADMIN, a caller reaches only
its own account's history."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.access import SearchHistory
from featurehub.errors import Forbidden, NotFound
from featurehub.models.rs_access import SearchHistory as SearchHistoryModel
from featurehub.security.authorization import role_chain
from featurehub.web import PageRequest, fetch_page, order_by

SORTABLE = {"id": SearchHistory.id, "name": SearchHistory.name}


def to_model(item: SearchHistory) -> SearchHistoryModel:
    return SearchHistoryModel(id=item.id, name=item.name, configuration=item.configuration)


def list_history(session: Session, *, project_id: int, role: str, caller_email: str | None,
                 account_email: str, module_id: int,
                 page: PageRequest) -> tuple[list[SearchHistoryModel], int]:
    _check_owner(session, project_id, role, caller_email, account_email)
    query = select(SearchHistory).where(
        SearchHistory.project_id == project_id, SearchHistory.account_email == account_email,
        SearchHistory.module_id == module_id,
    ).order_by(*order_by(page, SORTABLE, default=[("name", True), ("id", True)]))
    rows, total = fetch_page(session, query, page)
    return [to_model(row) for row in rows], total


def create_history(session: Session, *, project_id: int, role: str, caller_email: str | None,
                   account_email: str, module_id: int,
                   item: SearchHistoryModel) -> SearchHistoryModel:
    _check_owner(session, project_id, role, caller_email, account_email)
    stored = SearchHistory(project_id=project_id, account_email=account_email,
                           module_id=module_id, name=item.name, configuration=item.configuration)
    session.add(stored)
    session.commit()
    return to_model(stored)


def update_history(session: Session, *, project_id: int, role: str, caller_email: str | None,
                   history_id: int, configuration: str) -> SearchHistoryModel:
    stored = _history(session, project_id, role, caller_email, history_id)
    stored.configuration = configuration
    session.commit()
    return to_model(stored)


def delete_history(session: Session, *, project_id: int, role: str, caller_email: str | None,
                   history_id: int) -> None:
    session.delete(_history(session, project_id, role, caller_email, history_id))
    session.commit()


def _history(session: Session, project_id: int, role: str, caller_email: str | None,
             history_id: int) -> SearchHistory:
    stored = session.scalars(select(SearchHistory).where(
        SearchHistory.project_id == project_id, SearchHistory.id == history_id)).first()
    if stored is None:
        raise NotFound(f"Search history element {history_id} does not exist.")
    _check_owner(session, project_id, role, caller_email, stored.account_email)
    return stored


def _check_owner(session: Session, project_id: int, role: str, caller_email: str | None,
                 account_email: str) -> None:
    if caller_email is not None and caller_email == account_email:
        return
    if role == "INSTANCE_ADMIN" or "ADMIN" in {
            r.name for r in role_chain(session, project_id, role)}:
        return
    raise Forbidden(f"Role {role} reaches only the caller's own search history.")
