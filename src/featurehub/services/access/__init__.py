"""Interface configuration use cases (rs-access)."""
