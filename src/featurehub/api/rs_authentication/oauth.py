"""Token endpoint and JWK set."""

from __future__ import annotations

from typing import Any

from featurehub.models.rs_authentication import OAuthError, TokenRequest, TokenResponse
from featurehub.runtime import current_runtime, db_session
from featurehub.services.tokens import OAuthRefusal, issue_client_token, issue_password_token


def create_token(body: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Issue an access token for a user (password) or a machine client (client_credentials)."""
    request = TokenRequest.model_validate(body)
    keys = current_runtime().keys
    no_store = {"Cache-Control": "no-store"}
    try:
        if request.grant_type == "password":
            issued = issue_password_token(db_session(), keys, username=request.username,
                                          password=request.password, scope=request.scope)
        else:
            issued = issue_client_token(db_session(), keys, client_id=request.client_id,
                                        client_secret=request.client_secret, scope=request.scope)
    except OAuthRefusal as refusal:
        error = OAuthError(error=refusal.error, error_description=refusal.description)  # type: ignore[arg-type]
        return error.model_dump(exclude_none=True), refusal.status, no_store
    answer = TokenResponse(access_token=issued.access_token, token_type="bearer",
                           expires_in=issued.expires_in, scope=issued.scope, role=issued.role)
    return answer.model_dump(), 200, no_store


def get_jwks() -> dict[str, Any]:
    """The public keys that verify this instance's tokens."""
    return current_runtime().keys.jwks()
