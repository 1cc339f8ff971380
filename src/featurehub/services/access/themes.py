"""UI themes: at most one active theme per project."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from featurehub.db.access import Theme
from featurehub.errors import NotFound, Unprocessable
from featurehub.models.rs_access import Theme as ThemeModel
from featurehub.web import PageRequest, fetch_page, order_by

SORTABLE = {"id": Theme.id, "name": Theme.name, "active": Theme.active}


def to_model(theme: Theme) -> ThemeModel:
    return ThemeModel(id=theme.id, name=theme.name, active=theme.active, visible=theme.visible,
                      configuration=theme.configuration)


def list_themes(session: Session, *, project_id: int,
                page: PageRequest) -> tuple[list[ThemeModel], int]:
    query = select(Theme).where(Theme.project_id == project_id).order_by(
        *order_by(page, SORTABLE, default=[("id", True)]))
    rows, total = fetch_page(session, query, page)
    return [to_model(row) for row in rows], total


def get_theme(session: Session, *, project_id: int, theme_id: int) -> ThemeModel:
    return to_model(_theme(session, project_id, theme_id))


def create_theme(session: Session, *, project_id: int, theme: ThemeModel) -> ThemeModel:
    stored = Theme(project_id=project_id, name=theme.name, active=bool(theme.active),
                   visible=theme.visible is not False, configuration=theme.configuration)
    session.add(stored)
    session.flush()
    _keep_single_active(session, project_id, stored)
    session.commit()
    return to_model(stored)


def update_theme(session: Session, *, project_id: int, theme_id: int,
                 theme: ThemeModel) -> ThemeModel:
    if theme.id is not None and theme.id != theme_id:
        raise Unprocessable(f"The theme id in the body ({theme.id}) is not the one in the path "
                            f"({theme_id}).")
    stored = _theme(session, project_id, theme_id)
    stored.name = theme.name
    stored.configuration = theme.configuration
    stored.active = bool(theme.active)
    stored.visible = theme.visible is not False
    _keep_single_active(session, project_id, stored)
    session.commit()
    return to_model(stored)


def delete_theme(session: Session, *, project_id: int, theme_id: int) -> None:
    session.delete(_theme(session, project_id, theme_id))
    session.commit()


def _theme(session: Session, project_id: int, theme_id: int) -> Theme:
    theme = session.scalars(select(Theme).where(
        Theme.project_id == project_id, Theme.id == theme_id)).first()
    if theme is None:
        raise NotFound(f"Theme {theme_id} does not exist.")
    return theme


def _keep_single_active(session: Session, project_id: int, saved: Theme) -> None:
    if saved.active:
        session.execute(update(Theme).where(
            Theme.project_id == project_id, Theme.id != saved.id, Theme.active.is_(True),
        ).values(active=False))
