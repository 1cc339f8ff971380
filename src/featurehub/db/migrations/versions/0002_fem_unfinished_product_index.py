"""the product index of requests holds the unfinished ones only

Revision ID: 0002_fem
Revises: 0001_fem
Create Date: 2026-11-23 13:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0002_fem'
down_revision: str | Sequence[str] | None = '0001_fem'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNFINISHED = sa.text("step IN ('LOCAL_DELAYED', 'LOCAL_SCHEDULED', 'REMOTE_STORAGE_REQUESTED')")


def upgrade() -> None:
    with op.batch_alter_table('fem_requests', schema=None) as batch_op:
        batch_op.drop_index('ix_fem_requests_product')
        batch_op.create_index('ix_fem_requests_product', ['product_key', 'id'], unique=False,
                              sqlite_where=UNFINISHED, postgresql_where=UNFINISHED)


def downgrade() -> None:
    with op.batch_alter_table('fem_requests', schema=None) as batch_op:
        batch_op.drop_index('ix_fem_requests_product')
        batch_op.create_index('ix_fem_requests_product', ['product_key', 'id'], unique=False)
