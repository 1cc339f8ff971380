"""Rules one feature must follow, checked at acceptance: each returns the cause of a denial
(naming the member and the rule) or None. The body's shape was checked by the contract already."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

# Checksum algorithm names accepted (case-insensitive, with or without the dash) -> canonical
# name, hashlib name, hexadecimal length.
ALGORITHMS: dict[str, tuple[str, str, int]] = {}
for _canonical, _hashlib, _length in (("MD5", "md5", 32), ("SHA-1", "sha1", 40),
                                      ("SHA-256", "sha256", 64), ("SHA-512", "sha512", 128)):
    ALGORITHMS[_canonical] = ALGORITHMS[_canonical.replace("-", "")] = (
        _canonical, _hashlib, _length)
FETCHABLE_SCHEMES = ("file", "http", "https")
MAX_FILES_OF_A_KIND = 100
MAX_PROVIDER_ID = 100
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_BLANK = re.compile(r"[\s\x00-\x1f\x7f]")


def canonical_algorithm(name: str) -> tuple[str, str, int] | None:
    return ALGORITHMS.get(name.upper())


_PLAIN_URL = re.compile(r"^(?:https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?|file://)/[^\s\x00-\x1f\x7f]*$")


def url_problem(url: str) -> str | None:
    """Why `url` is not a usable URL, or None."""
    if _PLAIN_URL.match(url):
        return None
    if _BLANK.search(url):
        return "contains blanks or control characters"
    try:
        parts = urlsplit(url)
    except ValueError as error:
        return str(error)
    scheme = parts.scheme.lower()
    if not scheme or not _SCHEME.match(scheme):
        return "has no scheme"
    if scheme in ("http", "https") and not parts.hostname:
        return "has no host"
    if scheme == "file" and not parts.path.startswith("/"):
        return "is not an absolute file path"
    if not parts.netloc and not parts.path:
        return "names nothing"
    return None


def files_problem(files: Sequence[Mapping[str, Any]], *, storages: Sequence[Any]) -> str | None:
    """Denial cause for a feature's files: checksums, urls, stored/referenced kinds."""
    to_store = to_reference = 0
    checksums: set[str] = set()
    for file in files:  # written for speed: it runs for every feature accepted
        attributes = file["attributes"]
        name = attributes["filename"]
        algorithm = ALGORITHMS.get(attributes["algorithm"].upper())
        if algorithm is None:
            return (f"File '{name}': unsupported checksum algorithm '{attributes['algorithm']}' "
                    f"(MD5, SHA-1, SHA-256 or SHA-512).")
        checksum = attributes["checksum"]
        if len(checksum) != algorithm[2] or not _HEX.match(checksum):
            return (f"File '{name}': checksum '{checksum}' is not an {algorithm[0]} checksum "
                    f"({algorithm[2]} hexadecimal digits).")
        lowered = checksum.lower()
        if lowered in checksums:
            return f"Duplicate checksum '{checksum}' among the files of the feature."
        checksums.add(lowered)
        locations = file["locations"]
        referenced = 0  # locations naming a storage
        for location in locations:
            if location.get("storage"):
                referenced += 1
        if referenced and referenced != len(locations):
            return (f"File '{name}' mixes locations with a storage (referenced) and without "
                    f"(to store).")
        for location in locations:
            problem = url_problem(location["url"])
            if problem:
                return f"File '{name}': url '{location['url']}' is invalid: it {problem}."
        if referenced == len(locations):
            to_reference += 1
            if attributes.get("filesize") is None:
                return (f"File '{name}' is only referenced (its location names a storage): "
                        f"attributes.filesize is required.")
        else:
            to_store += 1
            if not storages:
                return (f"File '{name}' has a location without storage, a file to store, but "
                        f"metadata.storages is empty.")
            for location in locations:
                if urlsplit(location["url"]).scheme.lower() not in FETCHABLE_SCHEMES:
                    return (f"File '{name}': '{location['url']}' cannot be fetched to be stored "
                            f"(file, http and https URLs only).")
    if to_store and to_reference:
        return ("A feature cannot mix files to store (locations without storage) and files only "
                "referenced (locations with a storage).")
    if to_store > MAX_FILES_OF_A_KIND or to_reference > MAX_FILES_OF_A_KIND:
        return f"At most {MAX_FILES_OF_A_KIND} files to store and {MAX_FILES_OF_A_KIND} files " \
               f"to reference per feature."
    return None


def files_to_store(files: Iterable[Mapping[str, Any]]) -> bool:
    return any(not location.get("storage") for file in files for location in file["locations"])


# ---- geometry ----

MAX_POSITIONS = 100_000
# Nesting depth of `coordinates` above the positions, per geometry type.
_DEPTH = {"Point": 0, "MultiPoint": 1, "LineString": 1, "MultiLineString": 2, "Polygon": 2,
          "MultiPolygon": 3}
_SHAPES = {
    "Point": "a position [x, y(, z)]",
    "MultiPoint": "a list of positions",
    "LineString": "a list of at least 2 positions",
    "MultiLineString": "a list of lines, each a list of at least 2 positions",
    "Polygon": "a list of linear rings, each a closed list of at least 4 positions",
    "MultiPolygon": "a list of polygons, each a list of closed rings of at least 4 positions",
}


_NUMBERS = frozenset((int, float))  # bool is an int subclass, not int: refused


def _is_position(value: Any) -> bool:
    if type(value) is not list:
        return False
    if len(value) == 2:  # the usual [x, y], without a loop
        return type(value[0]) in _NUMBERS and type(value[1]) in _NUMBERS
    if not 2 < len(value) <= 4:
        return False
    for number in value:
        if type(number) not in _NUMBERS:
            return False
    return True


def _positions_valid(kind: str, positions: Any) -> bool:
    """A list of positions: a line of at least 2, a closed ring of at least 4."""
    if type(positions) is not list:
        return False
    if kind in ("Polygon", "MultiPolygon"):
        if len(positions) < 4 or positions[0] != positions[-1]:
            return False
    elif kind in ("LineString", "MultiLineString") and len(positions) < 2:
        return False
    for position in positions:
        if not _is_position(position):
            return False
    return True


def _position_count(kind: str, coordinates: Any, depth: int) -> int | None:
    """How many positions `coordinates` hold, checking in the same pass the nesting of their
    type and the RFC 7946 minimum sizes; None when they break them."""
    if depth == 0:
        return 1 if _is_position(coordinates) else None
    if depth == 1:
        return len(coordinates) if _positions_valid(kind, coordinates) else None
    if type(coordinates) is not list:
        return None
    total = 0
    for item in coordinates:
        if depth == 2:  # lists of positions (rings, lines) checked here, not by a call each
            count = len(item) if _positions_valid(kind, item) else None
        else:
            count = _position_count(kind, item, depth - 1)
        if count is None:
            return None
        total += count
    return total


def _simple_geometry_problem(geometry: Mapping[str, Any]) -> tuple[str | None, int]:
    """The problem of a geometry other than a collection, or None and its number of positions."""
    kind = geometry["type"]
    if "coordinates" not in geometry:
        return f"geometry: a {kind} has coordinates.", 0
    count = _position_count(kind, geometry["coordinates"], _DEPTH[kind])
    if count is None:
        return f"geometry: the coordinates of a {kind} are {_SHAPES[kind]}.", 0
    return None, count


def geometry_problem(geometry: Mapping[str, Any] | None) -> str | None:
    """What RFC 7946 asks beyond the members' types: the nesting of each type's coordinates,
    lines of 2 positions or more, closed polygon rings of 4 positions or more."""
    if geometry is None:
        return None
    if geometry["type"] == "GeometryCollection":
        if "coordinates" in geometry:
            return "geometry: a GeometryCollection has geometries, not coordinates."
        members = geometry.get("geometries")
        if members is None:
            return "geometry: a GeometryCollection has geometries."
        total = 0
        for member in members:
            problem, count = _simple_geometry_problem(member)
            if problem:
                return problem
            total += count
    else:
        problem, total = _simple_geometry_problem(geometry)
        if problem:
            return problem
    if total > MAX_POSITIONS:
        return f"geometry: more than {MAX_POSITIONS} positions."
    return None


def bounding_box(geometry: Mapping[str, Any] | None) -> tuple[float, float, float, float] | None:
    """(min x, min y, max x, max y) of a geometry, None for no geometry or no position."""
    if geometry is None:
        return None
    if geometry["type"] == "GeometryCollection":
        boxes = [box for member in geometry["geometries"]
                 if (box := bounding_box(member)) is not None]
        if not boxes:
            return None
        return (min(b[0] for b in boxes), min(b[1] for b in boxes),
                max(b[2] for b in boxes), max(b[3] for b in boxes))
    lists = [geometry["coordinates"]]
    for _ in range(_DEPTH[geometry["type"]]):  # flatten down to the list of positions
        lists = [item for nested in lists for item in nested]
    if not lists:
        return None
    xs = [position[0] for position in lists]
    ys = [position[1] for position in lists]
    return min(xs), min(ys), max(xs), max(ys)
