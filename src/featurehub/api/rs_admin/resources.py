"""rs-admin: resources (being written)."""

__all__: list[str] = []
