"""RS256 JSON Web Tokens: the signing key (database or file), issuing, verifying, JWKS."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import select
from sqlalchemy.orm import Session

from featurehub.db.platform import SigningKey
from featurehub.errors import Unauthenticated


@dataclass(frozen=True)
class TokenClaims:
    subject: str
    tenant: str
    role: str
    kind: str  # "user" or "client"
    expires_at: int


class KeyRing:
    """The private key that signs, and the public keys that verify, this instance's tokens."""

    def __init__(self, kid: str, private_key: rsa.RSAPrivateKey, issuer: str, ttl: int) -> None:
        self.kid = kid
        self._private_key = private_key
        self._public_key = private_key.public_key()
        self.issuer = issuer
        self.ttl = ttl

    @classmethod
    def load(cls, session: Session, *, key_file: Path | None, issuer: str, ttl: int) -> KeyRing:
        if key_file is not None:
            pem = key_file.read_bytes()
        else:
            stored = session.scalars(select(SigningKey).order_by(SigningKey.created.desc())).first()
            if stored is None:
                key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
                text = key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                ).decode()
                stored = SigningKey(kid=_kid(key.public_key()), private_pem=text)
                session.add(stored)
                session.commit()
            pem = stored.private_pem.encode()
        private_key = serialization.load_pem_private_key(pem, password=None)
        if not isinstance(private_key, rsa.RSAPrivateKey):
            raise ValueError("the token signing key must be an RSA private key")
        return cls(_kid(private_key.public_key()), private_key, issuer, ttl)

    def issue(self, *, subject: str, tenant: str, role: str, kind: str = "user") -> tuple[str, int]:
        now = int(time.time())
        claims = {
            "sub": subject, "tenant": tenant, "role": role, "typ": kind,
            "iss": self.issuer, "iat": now, "exp": now + self.ttl,
        }
        token = jwt.encode(claims, self._private_key, algorithm="RS256", headers={"kid": self.kid})
        return token, self.ttl

    def verify(self, token: str) -> TokenClaims:
        try:
            claims = jwt.decode(
                token, self._public_key, algorithms=["RS256"], issuer=self.issuer,
                options={"require": ["sub", "exp", "iat"]},
            )
        except jwt.ExpiredSignatureError as error:
            raise Unauthenticated("The token has expired.") from error
        except jwt.PyJWTError as error:
            raise Unauthenticated(f"The token is invalid: {error}.") from error
        for name in ("tenant", "role"):
            if not isinstance(claims.get(name), str):
                raise Unauthenticated(f"The token has no '{name}' claim.")
        return TokenClaims(claims["sub"], claims["tenant"], claims["role"],
                           str(claims.get("typ", "user")), int(claims["exp"]))

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._public_key))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        return {"keys": [jwk]}


def _kid(public_key: rsa.RSAPublicKey) -> str:
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()[:16]
