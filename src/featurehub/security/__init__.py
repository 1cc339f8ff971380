"""Passwords, tokens and request authorisation."""
