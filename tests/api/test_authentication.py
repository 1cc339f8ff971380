"""rs-authentication: tokens and JWKS."""

from __future__ import annotations

import jwt
import pytest

from featurehub.services import clients

TOKEN = "/rs-authentication/api/v1/oauth/token"


def password_grant(client, username, password, scope):
    return client.post(TOKEN, data={"grant_type": "password", "username": username,
                                    "password": password, "scope": scope})


class TestPasswordGrant:
    def test_bootstrap_admin_gets_an_instance_admin_token(self, client, settings, rt):
        response = password_grant(client, settings.bootstrap_admin_email, "bootstrap-password",
                                  settings.bootstrap_project)
        assert response.status_code == 200
        body = response.json()
        assert {k: v for k, v in body.items() if k != "access_token"} == {
            "token_type": "bearer", "expires_in": settings.token_ttl_seconds,
            "scope": settings.bootstrap_project, "role": "INSTANCE_ADMIN"}
        assert response.headers["cache-control"] == "no-store"
        claims = jwt.decode(body["access_token"], options={"verify_signature": False})
        assert (claims["sub"], claims["tenant"], claims["role"]) == (
            settings.bootstrap_admin_email, settings.bootstrap_project, "INSTANCE_ADMIN")

    def test_wrong_password_is_invalid_grant(self, client, settings):
        response = password_grant(client, settings.bootstrap_admin_email, "nope",
                                  settings.bootstrap_project)
        assert response.status_code == 400
        assert response.json() == {"error": "invalid_grant",
                                   "error_description": "Bad credentials."}

    def test_unknown_project_is_invalid_scope(self, client, settings):
        response = password_grant(client, settings.bootstrap_admin_email, "bootstrap-password",
                                  "nowhere")
        assert response.status_code == 400
        assert response.json() == {"error": "invalid_scope",
                                   "error_description": "Project 'nowhere' does not exist."}

    def test_missing_scope_is_invalid_request(self, client):
        response = client.post(TOKEN, data={"grant_type": "password", "username": "a@b.c",
                                            "password": "x"})
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_request"

    def test_unknown_grant_type_is_400_problem(self, client):
        response = client.post(TOKEN, data={"grant_type": "implicit"})
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/problem+json"


class TestClientCredentials:
    def test_registered_client_gets_a_token_with_its_role(self, client, project, rt):
        with rt.sessions() as session:
            client_id, secret = clients.create_client(session, project_name=project.name,
                                                      role="EXPLOIT")
        response = client.post(TOKEN, data={"grant_type": "client_credentials",
                                            "client_id": client_id, "client_secret": secret})
        assert response.status_code == 200
        assert response.json()["role"] == "EXPLOIT"
        token = response.json()["access_token"]
        themes = client.get("/rs-access/api/v1/themes",
                            headers={"Authorization": f"Bearer {token}"})
        assert themes.status_code == 200

    def test_bad_secret_is_401_invalid_client(self, client, project, rt):
        with rt.sessions() as session:
            client_id, _ = clients.create_client(session, project_name=project.name, role="EXPLOIT")
        response = client.post(TOKEN, data={"grant_type": "client_credentials",
                                            "client_id": client_id, "client_secret": "wrong"})
        assert response.status_code == 401
        assert response.json() == {"error": "invalid_client",
                                   "error_description": "Client authentication failed."}


class TestJwks:
    def test_published_key_verifies_issued_tokens(self, client, project):
        token = project.token(project.user("EXPLOIT"), "EXPLOIT")
        keys = client.get("/rs-authentication/api/v1/.well-known/jwks.json").json()["keys"]
        key = jwt.PyJWK(keys[0])
        claims = jwt.decode(token, key.key, algorithms=["RS256"], issuer="featurehub")
        assert claims["tenant"] == project.name


class TestTokenLifecycle:
    @pytest.mark.parametrize("status", ["ACCESS_INACTIVE", "WAITING_ACCESS"])
    def test_user_without_granted_access_is_refused(self, client, project, status):
        email = project.user("EXPLOIT", status=status)
        response = client.get("/rs-access/api/v1/themes",
                              headers={"Authorization": f"Bearer {project.token(email)}"})
        assert response.status_code == 401
