"""Domain errors, and their one translation into RFC 7807 problem+json answers."""

from __future__ import annotations

import logging
import math

from connexion.exceptions import ProblemException
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from connexion.problem import problem
from sqlalchemy.exc import IntegrityError, OperationalError

log = logging.getLogger(__name__)


class DomainError(Exception):
    """A refusal that the caller can understand and act on."""

    status = 400
    title = "Bad Request"

    def __init__(self, detail: str, *, title: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if title:
            self.title = title


class InvalidInput(DomainError):
    status, title = 400, "Bad Request"


class Unauthenticated(DomainError):
    status, title = 401, "Unauthorized"


class Forbidden(DomainError):
    status, title = 403, "Forbidden"


class NotFound(DomainError):
    status, title = 404, "Not Found"


class Conflict(DomainError):
    status, title = 409, "Conflict"


class UnsupportedContent(DomainError):
    status, title = 415, "Unsupported Media Type"


class Unprocessable(DomainError):
    status, title = 422, "Unprocessable Entity"


class TooManyRequests(DomainError):
    """A rate limit was reached; `retry_after`: the seconds until the caller is taken again
    (answered as the Retry-After header)."""

    status, title = 429, "Too Many Requests"

    def __init__(self, detail: str, *, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.retry_after = None if retry_after is None else max(1, math.ceil(retry_after))


def problem_response(status: int, title: str, detail: str,
                     headers: dict[str, str] | None = None) -> ConnexionResponse:
    return problem(status=status, title=title, detail=detail, headers=headers)


def handle_domain_error(_request: ConnexionRequest, error: DomainError) -> ConnexionResponse:
    retry_after = getattr(error, "retry_after", None)
    return problem_response(error.status, error.title, error.detail,
                            {"Retry-After": str(retry_after)} if retry_after else None)


def handle_integrity_error(_request: ConnexionRequest, error: IntegrityError) -> ConnexionResponse:
    # Reached only when two requests race for the same unique key; the loser is told so.
    log.info("integrity error: %s", error.orig)
    return problem_response(409, "Conflict", "The entity conflicts with one stored meanwhile.")


def handle_operational_error(_request: ConnexionRequest,
                             error: OperationalError) -> ConnexionResponse:
    log.error("database unavailable: %s", error.orig)
    return problem_response(503, "Service Unavailable", "The database is unavailable; retry later.")


def handle_unexpected(_request: ConnexionRequest, error: Exception) -> ConnexionResponse:
    if isinstance(error, ProblemException):
        return problem(status=error.status, title=error.title, detail=error.detail,
                       type=error.type, instance=error.instance, headers=error.headers,
                       ext=error.ext)
    log.exception("unexpected error", exc_info=error)
    return problem_response(500, "Internal Server Error", "An unexpected error occurred.")
