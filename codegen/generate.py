"""Validate every OpenAPI document in openapi/ and generate pydantic models from it.

    python codegen/generate.py          # (re)write src/featurehub/models/<service>.py
    python codegen/generate.py --check  # fail when a generated file is missing or stale

The generator's settings live in pyproject.toml ([tool.datamodel-codegen]); its version is pinned
there too, so the output is deterministic.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "openapi"
MODELS = ROOT / "src" / "featurehub" / "models"
INIT = '"""Pydantic models generated from openapi/ by codegen/generate.py. Do not edit."""\n'


def module_name(spec: Path) -> str:
    """`rs-admin.yaml` -> rs_admin; a part of it, `rs-admin/users.yaml` -> rs_admin_users."""
    return "_".join(spec.relative_to(SPECS).with_suffix("").parts).replace("-", "_")


def validate_spec(spec: Path) -> None:
    document, base_uri = read_from_filename(str(spec))
    validate(document, base_uri=base_uri)


def defines_schemas(spec: Path) -> bool:
    document, _ = read_from_filename(str(spec))
    return bool(document.get("components", {}).get("schemas"))


def generate(spec: Path, output: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "datamodel_code_generator", "--input", str(spec.relative_to(ROOT)),
         "--output", str(output)],
        cwd=ROOT, check=True, capture_output=True, text=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()

    # A microservice's contract may be split: `<service>.yaml` includes the path items of the
    # documents in `<service>/`, each a valid document of its own.
    specs = sorted(SPECS.glob("*.yaml")) + sorted(SPECS.glob("*/*.yaml"))
    for spec in specs:
        validate_spec(spec)
    # A document that only includes others' path items has no schemas of its own: no models.
    services = [spec for spec in specs if defines_schemas(spec)]

    stale: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in services:
            generated = Path(tmp) / f"{module_name(spec)}.py"
            generate(spec, generated)
            target = MODELS / generated.name
            if args.check:
                current = target.read_text() if target.exists() else ""
                if current != generated.read_text():
                    stale.append(target.name)
                    sys.stdout.writelines(difflib.unified_diff(
                        current.splitlines(True), generated.read_text().splitlines(True),
                        f"committed/{target.name}", f"generated/{target.name}", n=1))
            else:
                MODELS.mkdir(parents=True, exist_ok=True)
                target.write_text(generated.read_text())
    expected = {f"{module_name(spec)}.py" for spec in services} | {"__init__.py"}
    extra = sorted(p.name for p in MODELS.glob("*.py") if p.name not in expected)
    if args.check:
        init = MODELS / "__init__.py"
        if not init.exists() or init.read_text() != INIT:
            stale.append("__init__.py")
        if stale or extra:
            print(f"\ncodegen-check: stale {stale}, not generated from any spec {extra}; "
                  "run `make codegen`", file=sys.stderr)
            return 1
        print(f"codegen-check: {len(specs)} documents valid, {len(services)} model modules fresh")
    else:
        (MODELS / "__init__.py").write_text(INIT)
        for name in extra:
            (MODELS / name).unlink()
        print(f"codegen: {len(specs)} documents valid, {len(services)} model modules written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
