"""rs-admin: notifications (being written)."""

__all__: list[str] = []
