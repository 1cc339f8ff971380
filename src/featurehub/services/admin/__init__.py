"""Administration services (rs-admin)."""
