"""recent public access requests (rate limit per address)

Revision ID: 0003_admin
Revises: 0002_admin
Create Date: 2026-11-23 19:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import featurehub.db.base

revision: str = '0003_admin'
down_revision: str | Sequence[str] | None = '0002_admin'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('admin_access_requests',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('address', sa.String(length=64), nullable=False),
    sa.Column('created', featurehub.db.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_admin_access_requests_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_admin_access_requests'))
    )
    with op.batch_alter_table('admin_access_requests', schema=None) as batch_op:
        batch_op.create_index('ix_admin_access_requests_address', ['project_id', 'address', 'created'], unique=False)
        batch_op.create_index('ix_admin_access_requests_created', ['created'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('admin_access_requests', schema=None) as batch_op:
        batch_op.drop_index('ix_admin_access_requests_created')
        batch_op.drop_index('ix_admin_access_requests_address')

    op.drop_table('admin_access_requests')
