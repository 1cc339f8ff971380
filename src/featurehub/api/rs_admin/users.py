"""rs-admin: users (being written)."""

__all__: list[str] = []
