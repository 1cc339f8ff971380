"""Use cases. Nothing here knows about HTTP."""
