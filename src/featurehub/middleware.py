"""ASGI middleware in front of routing: answer methods a documented path does not have with 405
and an exact `Allow` header (routing alone reports only the first route that matched the path),
paths with control characters with 404 (connexion's router and Flask's disagree on them), and
bodies larger than the service takes with 413 before they are held in memory. The published
contracts (`openapi.json`, `openapi.yaml`) are rendered once, not at every request."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from connexion.jsonifier import Jsonifier
from connexion.middleware import ConnexionMiddleware
from connexion.middleware.swagger_ui import SwaggerUIAPI, SwaggerUIMiddleware
from connexion.utils import yamldumper
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from featurehub.services.endpoints import Endpoint

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", template)
    regex = "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts)
    return re.compile(f"^{regex}/?$")


class DocumentedMethods:
    def __init__(self, app: ASGIApp, routes: Iterable[tuple[str, Iterable[Endpoint]]]) -> None:
        self.app = app
        methods: dict[str, set[str]] = {}
        for base_path, endpoints in routes:
            for endpoint in endpoints:
                methods.setdefault(base_path + endpoint.resource, set()).add(endpoint.verb)
        # Literal paths first, so `/toponyms/search` is not taken for `/toponyms/{businessId}`.
        self.routes = sorted(((_pattern(path), verbs, path.count("{")) for path, verbs in
                              methods.items()), key=lambda route: route[2])

    def allowed(self, path: str) -> set[str] | None:
        for pattern, verbs, _ in self.routes:
            if pattern.match(path):
                return verbs
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if _CONTROL.search(scope["path"]):
                await _problem(send, 404, "Not Found", "No resource at this path.")
                return
            verbs = self.allowed(scope["path"])
            if verbs is not None and scope["method"] not in verbs:
                await _method_not_allowed(send, sorted(verbs))
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """Bodies over `limit` bytes get 413. A declared length is checked before anything is read;
    a body without one (chunked) is read up to the limit, then handed on. Request bodies are
    parsed whole (a thousand features at a time), so an unbounded one would be held in memory
    whole, several times over once parsed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((value for name, value in scope["headers"]
                         if name == b"content-length"), None)
        if declared is not None:
            if declared.strip().isdigit() and int(declared) > self.limit:
                await self._too_large(send)
                return
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        size = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._too_large(send)
                return
            if not message.get("more_body"):
                break

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await _problem(send, 413, "Content Too Large",
                       f"The body is larger than {self.limit / (1024 * 1024):g} MiB, the most this "
                       f"service takes (FEATUREHUB_MAX_BODY_MB): send it in smaller requests.")


class RenderedContractAPI(SwaggerUIAPI):
    """connexion clones, re-validates and re-serialises a whole contract at every request of
    `openapi.json` (110 ms for rs-fem, 400 ms for rs-admin, in the event loop: no other request
    is served meanwhile, and the route is public). The rendering is kept per base path (one
    per mount; a few at most behind path-rewriting proxies)."""

    MAX_BASE_PATHS = 16

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rendered: dict[tuple[str, str], bytes] = {}

    def _render(self, request: Any, kind: str, render: Any, media_type: str) -> Response:
        key = (kind, self._base_path_for_prefix(request))
        content = self._rendered.get(key)
        if content is None:
            content = render(self._spec_for_prefix(request))
            content = content.encode() if isinstance(content, str) else content
            if len(self._rendered) < 2 * self.MAX_BASE_PATHS:
                self._rendered[key] = content
        return Response(content=content, status_code=200, media_type=media_type)

    async def _get_openapi_json(self, request: Any) -> Response:
        return self._render(request, "json", Jsonifier().dumps, "application/json")

    async def _get_openapi_yaml(self, request: Any) -> Response:
        return self._render(request, "yaml", yamldumper, "text/yaml")


class RenderedContractMiddleware(SwaggerUIMiddleware):
    """connexion's Swagger UI middleware, serving contracts rendered once."""

    def add_api(self, specification: Any, base_path: str | None = None,
                arguments: dict[str, Any] | None = None, **kwargs: Any) -> None:
        api = RenderedContractAPI(specification, base_path=base_path, arguments=arguments,
                                  default=self.default_fn, **kwargs)
        self.router.mount(api.base_path, app=api.router)


def middlewares() -> list[Any]:
    """connexion's middleware stack with RenderedContractMiddleware in place of its own."""
    return [RenderedContractMiddleware if middleware is SwaggerUIMiddleware else middleware
            for middleware in ConnexionMiddleware.default_middlewares]


async def _method_not_allowed(send: Send, verbs: list[str]) -> None:
    await _problem(send, 405, "Method Not Allowed", f"Allowed methods: {', '.join(verbs)}.",
                   [(b"allow", ", ".join(verbs).encode())])


async def _problem(send: Send, status: int, title: str, detail: str,
                   extra_headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"type": "about:blank", "title": title, "status": status,
                       "detail": detail}).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
        *(extra_headers or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

