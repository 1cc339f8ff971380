"""rs-authentication handlers."""

from featurehub.api.rs_authentication.oauth import create_token, get_jwks

__all__ = ["create_token", "get_jwks"]
