"""Access requests and the user status machine, and the access settings."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.base import utcnow
from featurehub.db.platform import EmailVerification, ProjectUser
from featurehub.errors import Forbidden, NotFound, Unprocessable
from featurehub.security.authorization import role_chain
from featurehub.services import settings
from featurehub.services.admin import members
from featurehub.services.admin import settings as admin_settings

MICROSERVICE = admin_settings.MICROSERVICE


def request_access(session: Session, *, project_id: int, request: dict[str, Any]) -> ProjectUser:
    """WAITING_ACCESS with the default role, or ACCESS_GRANTED at once in auto-accept mode."""
    members.refuse_nul(request)
    role = members.default_role(session, project_id)
    asked = request.get("roleName")
    if asked is not None:
        below = {r.name: r for r in role_chain(session, project_id, role.name)}
        if asked not in below:
            raise Forbidden(f"An access request may ask for the role {role.name} or a role "
                            f"below it, not {asked}.")
        role = below[asked]
    mode = settings.value_of(session, project_id=project_id, microservice=MICROSERVICE,
                             name=admin_settings.ACCEPTANCE_MODE)
    status = "ACCESS_GRANTED" if mode == "auto-accept" else "WAITING_ACCESS"
    user = members.create_member(session, project_id=project_id, request=request, status=status,
                                 role=role)
    session.commit()
    return user


def grant_access(session: Session, *, project_id: int, caller_role: str,
                 request: dict[str, Any]) -> dict[str, Any]:
    """requestExternalAccess and createUser: ACCESS_GRANTED at once, with a role the caller may
    give (the default role when none is named)."""
    members.refuse_nul(request)
    role_name = request.get("roleName") or members.default_role(session, project_id).name
    role = members.role_to_give(session, project_id, caller_role, role_name)
    user = members.create_member(session, project_id=project_id, request=request,
                                 status="ACCESS_GRANTED", role=role)
    session.commit()
    return members.present_one(session, user)


def change_access(session: Session, *, project_id: int, caller_role: str, user_id: int,
                  action: str) -> dict[str, Any]:
    user = members.find_user(session, project_id, user_id)
    members.check_may_manage(session, project_id, caller_role, user)
    members.apply_transition(user, action)
    session.commit()
    return members.present_one(session, user)


def remove_user(session: Session, *, project_id: int, caller_role: str, user_id: int) -> None:
    user = members.find_user(session, project_id, user_id)
    members.check_may_manage(session, project_id, caller_role, user)
    session.delete(user)
    session.commit()


def verify_email(session: Session, *, project_id: int, token: str) -> None:
    verification = None if "\x00" in token else session.scalars(
        select(EmailVerification)
        .join(ProjectUser, ProjectUser.id == EmailVerification.project_user_id)
        .where(EmailVerification.token == token, ProjectUser.project_id == project_id)).first()
    if verification is None:
        raise NotFound("This email verification link is unknown.")
    if verification.verified is None:
        verification.verified = utcnow()
        session.commit()


def access_settings(session: Session, *, project_id: int) -> list[settings.Setting]:
    return settings.list_settings(session, project_id=project_id, microservice=MICROSERVICE,
                                  names=list(admin_settings.ACCESS_SETTINGS))


def update_access_setting(session: Session, *, project_id: int, caller_role: str, name: str,
                          body_name: str, value: Any) -> settings.Setting:
    members.refuse_nul(value, "The value")
    if name not in admin_settings.ACCESS_SETTINGS:
        raise NotFound(f"Setting '{name}' is not an access setting (known: "
                       f"{', '.join(admin_settings.ACCESS_SETTINGS)}).")
    if name == admin_settings.DEFAULT_ROLE and isinstance(value, str) and body_name == name:
        if value in ("PUBLIC", "INSTANCE_ADMIN"):
            raise Unprocessable(f"The default role cannot be {value}.")
        members.role_to_give(session, project_id, caller_role, value)
    return settings.update_setting(session, project_id=project_id, microservice=MICROSERVICE,
                                   name=name, body_name=body_name, value=value)
