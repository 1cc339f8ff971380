"""rs-admin: accesses (being written)."""

__all__: list[str] = []
