"""Persistence: SQLAlchemy 2 tables, engine and unit of work, alembic migrations."""
