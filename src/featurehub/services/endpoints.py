"""The endpoints each microservice declares in its contract, with their default roles."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

HTTP_VERBS = ("get", "head", "post", "put", "patch", "delete", "options", "trace")


@dataclass(frozen=True)
class Endpoint:
    microservice: str
    controller: str
    resource: str
    verb: str
    default_role: str
    description: str | None
    operation_id: str

    @property
    def key(self) -> str:
        return f"{self.resource}@{self.verb}"


@lru_cache(maxsize=32)
def contract_endpoints(openapi_dir: Path, microservice: str) -> tuple[Endpoint, ...]:
    """Every operation of `openapi/<microservice>.yaml` as an endpoint to register."""
    document = yaml.safe_load((openapi_dir / f"{microservice}.yaml").read_text())
    endpoints = []
    for path, item in document.get("paths", {}).items():
        if "$ref" in item:
            item = _path_item(openapi_dir, item["$ref"])
        for verb in HTTP_VERBS:
            operation = item.get(verb)
            if operation is None:
                continue
            tags = operation.get("tags") or [microservice]
            endpoints.append(Endpoint(
                microservice=microservice,
                controller=tags[0],
                resource=path,
                verb=verb.upper(),
                default_role=operation["x-default-role"],
                description=operation.get("summary"),
                operation_id=operation["operationId"],
            ))
    return tuple(endpoints)


def _path_item(openapi_dir: Path, reference: str) -> dict:
    """A path item included from another document (`common.yaml#/paths/~1settings`)."""
    filename, _, pointer = reference.partition("#")
    node = yaml.safe_load((openapi_dir / filename).read_text())
    for token in pointer.strip("/").split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def all_endpoints(openapi_dir: Path,
                  microservices: tuple[str, ...]) -> dict[str, tuple[Endpoint, ...]]:
    return {
        name: contract_endpoints(openapi_dir, name)
        for name in microservices
        if (openapi_dir / f"{name}.yaml").exists()
    }
