"""Pure platform logic: contract translation, paging, endpoint discovery, routing, tokens."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from featurehub.errors import InvalidInput, Unauthenticated
from featurehub.middleware import BodyLimit, DocumentedMethods
from featurehub.security.tokens import KeyRing
from featurehub.services.endpoints import contract_endpoints
from featurehub.settings import REPO_ROOT, SettingError, Settings
from featurehub.validation import to_json_schema
from featurehub.web import PageRequest, order_by


class TestToJsonSchema:
    def test_nullable_type_admits_null(self):
        assert to_json_schema({"type": "string", "nullable": True, "maxLength": 3}) == {
            "type": ["string", "null"], "maxLength": 3}

    def test_nullable_enum_admits_null(self):
        assert to_json_schema({"type": "string", "enum": ["A"], "nullable": True}) == {
            "type": ["string", "null"], "enum": ["A", None]}

    def test_nullable_without_type_becomes_any_of(self):
        assert to_json_schema({"nullable": True, "properties": {"a": {"type": "integer"}}}) == {
            "anyOf": [{"properties": {"a": {"type": "integer"}}}, {"type": "null"}]}

    def test_extensions_dropped_and_nested_translated(self):
        schema = {"type": "object", "x-default-role": "PUBLIC", "example": {},
                  "properties": {"p": {"type": "integer", "nullable": True}},
                  "required": ["p"]}
        assert to_json_schema(schema) == {"type": "object", "required": ["p"],
                                          "properties": {"p": {"type": ["integer", "null"]}}}


class TestPageRequest:
    def test_split_sort_tokens_are_rejoined(self):
        page = PageRequest.of(2, 5, ["name", "desc", "id"])
        assert (page.number, page.size, page.offset) == (2, 5, 10)
        assert page.sort == (("name", False), ("id", True))

    def test_unsplit_sort_and_defaults(self):
        page = PageRequest.of(None, None, ["name,ASC"], default_size=10)
        assert (page.number, page.size, page.sort) == (0, 10, (("name", True),))

    def test_lone_direction_is_ignored(self):
        assert PageRequest.of(0, 1, ["desc"]).sort == ()

    def test_unknown_property_is_refused(self):
        with pytest.raises(InvalidInput, match="Cannot sort on 'colour'"):
            order_by(PageRequest.of(0, 1, ["colour"]), {"name": object()})  # type: ignore[dict-item]


class TestContractEndpoints:
    def test_every_operation_with_its_default_role(self):
        endpoints = {e.key: e for e in contract_endpoints(REPO_ROOT / "openapi", "rs-access")}
        assert endpoints["/themes@GET"].default_role == "PUBLIC"
        assert endpoints["/themes/{themeId}@DELETE"].default_role == "PROJECT_ADMIN"
        assert endpoints["/themes@POST"].controller == "themes"

    def test_included_path_items_are_followed(self):
        endpoints = {e.key: e for e in contract_endpoints(REPO_ROOT / "openapi", "rs-access")}
        assert endpoints["/settings/{name}@PUT"].default_role == "ADMIN"


class TestDocumentedMethods:
    def test_literal_path_wins_over_template(self):
        endpoints = contract_endpoints(REPO_ROOT / "openapi", "rs-access")
        middleware = DocumentedMethods(app=None, routes=[("/rs-access/api/v1", endpoints)])  # type: ignore[arg-type]
        assert middleware.allowed("/rs-access/api/v1/themes/3") == {"GET", "PUT", "DELETE"}
        assert middleware.allowed("/rs-access/api/v1/themes") == {"GET", "POST"}
        assert middleware.allowed("/elsewhere") is None


class TestBodyLimit:
    """The middleware alone, around an app that reads the whole body (as the validators do)."""

    @staticmethod
    def call(limit, headers, chunks):
        seen = {"read": b"", "messages": []}

        async def app(scope, receive, send):
            while True:
                message = await receive()
                seen["read"] += message.get("body", b"")
                if not message.get("more_body"):
                    break
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

        incoming = [{"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
                    for index, chunk in enumerate(chunks)]
        pulled = []

        async def receive():
            pulled.append(1)
            return incoming.pop(0)

        async def send(message):
            seen["messages"].append(message)

        scope = {"type": "http", "method": "POST", "path": "/x", "headers": headers}
        asyncio.run(BodyLimit(app, limit)(scope, receive, send))
        return seen, len(pulled)

    def test_a_declared_length_over_the_limit_is_refused_before_reading(self):
        seen, pulled = self.call(1024, [(b"content-length", b"1025")], [b"x" * 1025])
        start, body = seen["messages"]
        assert (start["status"], dict(start["headers"])[b"content-type"], pulled) == (
            413, b"application/problem+json", 0)
        assert json.loads(body["body"])["title"] == "Content Too Large"
        assert seen["read"] == b""

    def test_a_body_at_the_limit_passes_whole(self):
        seen, _ = self.call(1024, [(b"content-length", b"1024")], [b"x" * 1000, b"y" * 24])
        assert seen["read"] == b"x" * 1000 + b"y" * 24
        assert seen["messages"][0]["status"] == 200

    def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(self):
        seen, pulled = self.call(1024, [(b"transfer-encoding", b"chunked")],
                                 [b"x" * 600, b"x" * 600, b"x" * 600])
        assert (seen["messages"][0]["status"], pulled, seen["read"]) == (413, 2, b"")

    def test_a_chunked_body_within_the_limit_is_handed_on_in_its_chunks(self):
        seen, _ = self.call(1024, [(b"transfer-encoding", b"chunked")], [b"a" * 500, b"b" * 500])
        assert (seen["messages"][0]["status"], seen["read"]) == (200, b"a" * 500 + b"b" * 500)


class TestKeyRing:
    @pytest.fixture
    def keys(self) -> KeyRing:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return KeyRing("kid", key, issuer="featurehub", ttl=60)

    def test_round_trip(self, keys):
        token, ttl = keys.issue(subject="a@b.c", tenant="demo", role="EXPLOIT")
        claims = keys.verify(token)
        assert (claims.subject, claims.tenant, claims.role, claims.kind, ttl) == (
            "a@b.c", "demo", "EXPLOIT", "user", 60)
        assert claims.expires_at > time.time()

    def test_expired_token_is_refused(self, keys):
        expired = KeyRing("kid", keys._private_key, issuer="featurehub", ttl=-10)
        token, _ = expired.issue(subject="a@b.c", tenant="demo", role="EXPLOIT")
        with pytest.raises(Unauthenticated, match="expired"):
            keys.verify(token)

    def test_token_of_another_key_is_refused(self, keys):
        other = KeyRing("other", rsa.generate_private_key(public_exponent=65537, key_size=2048),
                        issuer="featurehub", ttl=60)
        token, _ = other.issue(subject="a@b.c", tenant="demo", role="EXPLOIT")
        with pytest.raises(Unauthenticated, match="invalid"):
            keys.verify(token)


class TestSettingsFromEnv:
    def test_reads_variables(self):
        settings = Settings.from_env({"FEATUREHUB_PORT": "9100", "FEATUREHUB_HOST": "0.0.0.0",
                                      "FEATUREHUB_EMBEDDED_WORKER": "false"})
        assert (settings.port, settings.host, settings.embedded_worker) == (9100, "0.0.0.0", False)

    def test_public_url_is_kept_without_its_trailing_slash(self):
        settings = Settings.from_env({"FEATUREHUB_PUBLIC_URL": "https://fh.example.org/api/"})
        assert settings.public_url == "https://fh.example.org/api"
        assert Settings.from_env({"FEATUREHUB_PUBLIC_URL": "http://[::1]:8080"}).public_url == \
            "http://[::1]:8080"
        assert Settings.from_env({}).public_url is None

    def test_max_body_is_read_in_mebibytes(self):
        assert Settings.from_env({"FEATUREHUB_MAX_BODY_MB": "8"}).max_body_bytes == 8 * 1024 * 1024
        assert Settings.from_env({}).max_body_bytes == 32 * 1024 * 1024
        for value in ("0", "-1", "1.5", "lots"):
            with pytest.raises(SettingError, match="FEATUREHUB_MAX_BODY_MB"):
                Settings.from_env({"FEATUREHUB_MAX_BODY_MB": value})

    @pytest.mark.parametrize("value", ["fh.example.org", "ftp://fh.example.org", "https://",
                                       "https://fh.example.org/?a=1", "https://fh.example.org/#x",
                                       "http://[::1", "https://fh.example.org:abc",
                                       "https://fh.example.org:99999"])
    def test_public_url_that_is_not_an_address_is_refused(self, value):
        with pytest.raises(SettingError, match="FEATUREHUB_PUBLIC_URL"):
            Settings.from_env({"FEATUREHUB_PUBLIC_URL": value})
