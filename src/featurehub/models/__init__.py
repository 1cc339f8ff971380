"""Pydantic models generated from openapi/ by codegen/generate.py. Do not edit."""
