"""Optional JSON bodies: an absent body arrives as the schema's default, which connexion hands
over as raw bytes (it carries no content type)."""

from __future__ import annotations

from typing import Any

import orjson


def optional_json(body: Any) -> dict[str, Any]:
    if isinstance(body, (bytes, str)):
        return orjson.loads(body) if body else {}
    return body or {}
