"""Roles."""

from __future__ import annotations

from typing import Any

__all__ = ["retrieveBorrowableRoles"]


def retrieveBorrowableRoles() -> list[dict[str, Any]]:  # noqa: N802
    return []
