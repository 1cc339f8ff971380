"""Answer shapes shared by every microservice: wrappers `{content, links}` and pages
`{content, links, page}`, and the translation of `sort` parameters into SQL ordering."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session

from featurehub.errors import InvalidInput


def dump(item: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, BaseModel):
        return item.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(item)


def wrap(item: BaseModel | Mapping[str, Any] | None) -> dict[str, Any]:
    return {"content": None if item is None else dump(item), "links": []}


@dataclass(frozen=True)
class PageRequest:
    number: int = 0
    size: int = 20
    sort: tuple[tuple[str, bool], ...] = ()  # (property, ascending)

    @classmethod
    def of(cls, page: int | None, size: int | None, sort: Sequence[str] | None,
           default_size: int = 20) -> PageRequest:
        # `sort=name,desc&sort=id` may reach us split on commas: ["name", "desc", "id"].
        orders: list[tuple[str, bool]] = []
        for criterion in sort or ():
            for part in criterion.split(","):
                if part.lower() in ("asc", "desc"):
                    if orders:
                        orders[-1] = (orders[-1][0], part.lower() == "asc")
                elif part:
                    orders.append((part, True))
        return cls(page or 0, size or default_size, tuple(orders))

    @property
    def offset(self) -> int:
        return self.number * self.size


def order_by(page: PageRequest, columns: Mapping[str, ColumnElement[Any]],
             default: Iterable[tuple[str, bool]] = ()) -> list[ColumnElement[Any]]:
    """ORDER BY clauses for the requested sort, refusing properties that cannot be sorted on."""
    clauses = []
    for name, ascending in page.sort or tuple(default):
        column = columns.get(name)
        if column is None:
            raise InvalidInput(
                f"Cannot sort on '{name}'; sortable properties: {', '.join(sorted(columns))}.")
        clauses.append(column.asc() if ascending else column.desc())
    return clauses


def paged_result(items: Sequence[BaseModel | Mapping[str, Any]], total: int,
                 page: PageRequest) -> dict[str, Any]:
    return {
        "content": [wrap(item) for item in items],
        "links": [],
        "page": {
            "number": page.number,
            "size": page.size,
            "totalElements": total,
            "totalPages": math.ceil(total / page.size) if page.size else 0,
        },
    }


def fetch_page(session: Session, query: Select[Any], page: PageRequest) -> tuple[list[Any], int]:
    """The rows of one page of `query` and the total count of its rows."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    rows = list(session.scalars(query.offset(page.offset).limit(page.size)))
    return rows, total
