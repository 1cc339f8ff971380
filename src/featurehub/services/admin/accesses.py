"""Access requests and the user status machine, and the access settings.

E-mails are queued (`mails`) and sent by the notification scheduler:
- a person whose access request is granted (at once in auto-accept mode, else when accepted)
  is asked to confirm their e-mail address with a link carrying their verification token, as
  long as it is not verified; users created by an administrator or from an external access
  are not asked (the reference grants them access without that step);
- the `user_creation_mail_recipients` are told of every new user, whichever way it came."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from featurehub.db.admin import AccessRequestRecord
from featurehub.db.base import utcnow
from featurehub.db.platform import EmailVerification, Project, ProjectUser
from featurehub.errors import Forbidden, NotFound, TooManyRequests
from featurehub.security.authorization import role_chain
from featurehub.services import settings
from featurehub.services.admin import hierarchy, mails, members, notifications
from featurehub.services.admin import settings as admin_settings

MICROSERVICE = admin_settings.MICROSERVICE

# token -> the link that verifies it on this service (the handler knows where it is reached).
VerificationLink = Callable[[str], str]


# The window of the `access_requests_per_hour` limit (the notification scheduler deletes the
# records older than that).
ACCESS_REQUEST_WINDOW = timedelta(hours=1)


def _limit_access_requests(session: Session, project_id: int, address: str,
                           now: datetime) -> None:
    """Refuse (429) a public access request from an address that made the most the project
    takes in the last hour; else record it (committed with the request)."""
    address = address[:64]
    limit = int(settings.value_of(session, project_id=project_id, microservice=MICROSERVICE,
                                  name=admin_settings.ACCESS_REQUESTS_PER_HOUR))
    if limit:
        window = (AccessRequestRecord.project_id == project_id,
                  AccessRequestRecord.address == address,
                  AccessRequestRecord.created > now - ACCESS_REQUEST_WINDOW)
        recent = session.scalar(
            select(func.count()).select_from(AccessRequestRecord).where(*window)) or 0
        if recent >= limit:
            # The address is taken again once the requests over the limit left the window.
            freed = session.scalar(select(AccessRequestRecord.created).where(*window)
                                   .order_by(AccessRequestRecord.created)
                                   .offset(recent - limit).limit(1))
            raise TooManyRequests(
                f"This project takes at most {limit} access request(s) per hour from one "
                f"address (setting {admin_settings.ACCESS_REQUESTS_PER_HOUR}); try again "
                f"later.", retry_after=(freed + ACCESS_REQUEST_WINDOW - now).total_seconds())
    session.add(AccessRequestRecord(project_id=project_id, address=address, created=now))


def request_access(session: Session, *, project_id: int, request: dict[str, Any],
                   verification_link: VerificationLink, address: str) -> ProjectUser:
    """WAITING_ACCESS with the default role, or ACCESS_GRANTED at once in auto-accept mode;
    at most `access_requests_per_hour` per client `address`."""
    members.refuse_nul(request)
    _limit_access_requests(session, project_id, address, utcnow())
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
    _tell_creation_recipients(session, user, requested=True, role_name=role.name)
    if status == "ACCESS_GRANTED":
        ask_to_verify_email(session, user, verification_link)
    session.commit()
    return user


def grant_access(session: Session, *, project_id: int, caller_role: str,
                 request: dict[str, Any]) -> dict[str, Any]:
    """requestExternalAccess and createUser: ACCESS_GRANTED at once, with a role the caller may
    give (the default role when none is named)."""
    members.refuse_nul(request)
    role_name = request.get("roleName") or members.default_role(session, project_id).name
    role = hierarchy.role_to_give(session, project_id, caller_role, role_name)
    user = members.create_member(session, project_id=project_id, request=request,
                                 status="ACCESS_GRANTED", role=role)
    _tell_creation_recipients(session, user, requested=False, role_name=role.name)
    session.commit()
    return members.present_one(session, user)


def _project_name(session: Session, project_id: int) -> str:
    project = session.get(Project, project_id)
    assert project is not None
    return project.name


def _tell_creation_recipients(session: Session, user: ProjectUser, *, requested: bool,
                              role_name: str) -> None:
    recipients = settings.value_of(session, project_id=user.project_id,
                                   microservice=MICROSERVICE,
                                   name=admin_settings.USER_CREATION_MAIL_RECIPIENTS)
    if not recipients:
        return
    project = _project_name(session, user.project_id)
    if not requested:
        event = f"{user.email} was given access to the project {project}."
    elif user.status == "ACCESS_GRANTED":
        event = (f"{user.email} asked for access to the project {project} and was granted it "
                 f"at once.")
    else:
        event = (f"{user.email} asked for access to the project {project}; the request waits "
                 f"for an administrator.")
    mails.queue(session, project_id=user.project_id, kind=mails.USER_CREATED,
                addresses=recipients, subject="New project user",
                body=f"{event}\n\nStatus {user.status}, role {role_name}, origin "
                     f"{user.origin}.\n")


def ask_to_verify_email(session: Session, user: ProjectUser,
                        verification_link: VerificationLink) -> None:
    """Queue the e-mail with the link that verifies the user's address, unless verified."""
    verification = session.get(EmailVerification, user.id)
    if verification is None or verification.verified is not None:
        return
    project = _project_name(session, user.project_id)
    mails.queue(session, project_id=user.project_id, kind=mails.EMAIL_VERIFICATION,
                addresses=[user.email], subject="Confirm your e-mail address",
                body=f"Your access to the project {project} is granted. Please confirm your "
                     f"e-mail address {user.email} by following this link:\n\n"
                     f"{_link(user, verification.token, verification_link)}\n")


def _link(user: ProjectUser, token: str, verification_link: VerificationLink) -> str:
    """The requester's own page when the request named one (it calls verifyEmail with the
    token, as the reference's `requestLink?origin_url=&token=&account_email=`), else this
    service's verifyEmail."""
    page = user.request_link or ""
    if not page.startswith(("https://", "http://")):
        return verification_link(token)
    query = urlencode({"origin_url": user.origin_url or "", "token": token,
                       "account_email": user.email})
    return f"{page}{'&' if '?' in page else '?'}{query}"


def change_access(session: Session, *, project_id: int, caller_role: str, user_id: int,
                  action: str, verification_link: VerificationLink) -> dict[str, Any]:
    user = members.find_user(session, project_id, user_id)
    members.check_may_manage(session, project_id, caller_role, user)
    members.apply_transition(user, action)
    if action == "accept":  # only access requests wait for it
        ask_to_verify_email(session, user, verification_link)
    session.commit()
    return members.present_one(session, user)


def remove_user(session: Session, *, project_id: int, caller_role: str, user_id: int) -> None:
    """The user leaves the project, with their notifications; their account stays."""
    user = members.find_user(session, project_id, user_id)
    members.check_may_manage(session, project_id, caller_role, user)
    notifications.forget_user(session, project_id=project_id, email=user.email)
    mails.forget_verification(session, project_id=project_id, email=user.email)
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
    if name not in admin_settings.ACCESS_SETTINGS:
        raise NotFound(f"Setting '{name}' is not an access setting (known: "
                       f"{', '.join(admin_settings.ACCESS_SETTINGS)}).")
    return settings.update_setting(session, project_id=project_id, microservice=MICROSERVICE,
                                   name=name, body_name=body_name, value=value,
                                   caller_role=caller_role)
