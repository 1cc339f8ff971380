"""Fixtures shared by the rs-admin tests."""

from tests.api.admin.test_notification_delivery import smtp  # noqa: F401 - a real SMTP server
