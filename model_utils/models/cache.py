"""A folder of converted weights that vouches for itself: written atomically, with a manifest (size and sha256 of
every file) written last, checked on every load (sizes always, hashes when a file's stat changed) and cleared
away when damaged. The bundled model's cache is one (models/bundled.py; docs/ARCHITECTURE.md)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from model_utils.core.files import write_atomic

MANIFEST = "manifest.json"  # written last by a conversion: size and sha256 of every file it wrote
VERIFIED = "verified.json"  # side file: each file's stat fingerprint when its hash last matched the manifest
REQUIRED_FILES = ("config.json", "model.safetensors")  # a manifest without these cannot describe a whole cache


def write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    """Run `write(folder)` on a fresh folder beside `target`, then rename it to `target` in one step.

    A crash or an error mid-write leaves no `target` (only the staging folder, removed on the way out), so a
    half-written cache can never be loaded. If another process finished first, its copy is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".partial-{target.name}-", dir=target.parent))
    try:
        write(staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():  # not a concurrent winner: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _fingerprint(path: Path) -> list[int]:
    # ctime changes on every write and cannot be set back (utime sets only atime and mtime), and a copy or a
    # restore gets a new inode: either way the next load re-hashes
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _record_verified(folder: Path, fingerprints: dict[str, list[int]]) -> None:
    # best effort: a read-only cache is still used, it is only re-hashed on every load
    with contextlib.suppress(OSError):
        write_atomic(folder / VERIFIED, json.dumps(fingerprints))  # no reader sees half of it


def write_manifest(folder: Path) -> None:
    """Record the size and sha256 of every file in `folder`, and mark the files verified as they are now."""
    files, fingerprints = {}, {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name not in (MANIFEST, VERIFIED):
            fingerprints[path.name] = _fingerprint(path)  # before hashing: a write during the hash shows next time
            files[path.name] = {"size": fingerprints[path.name][0], "sha256": _sha256(path)}
    (folder / MANIFEST).write_text(json.dumps({"files": files}, indent=2))
    _record_verified(folder, fingerprints)


class _DamagedCacheError(Exception):
    """Why a converted cache cannot be trusted, in a few words for the one-line report."""


def _read_manifest(folder: Path) -> dict[str, tuple[int, str]]:
    try:
        files = json.loads((folder / MANIFEST).read_text())["files"]
        expected = {name: (int(entry["size"]), str(entry["sha256"])) for name, entry in files.items()}
    except FileNotFoundError:
        raise _DamagedCacheError(f"it has no {MANIFEST}, so what it holds cannot be checked") from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _DamagedCacheError(f"its {MANIFEST} is unreadable") from None
    for name in REQUIRED_FILES:
        if name not in expected:
            raise _DamagedCacheError(f"its {MANIFEST} does not list {name}")
    return expected


def _verify(folder: Path) -> None:
    """Raise _DamagedCacheError unless each file of the manifest is there, of its size and (if changed) its hash."""
    expected = _read_manifest(folder)
    fingerprints = {}
    for name, (size, _) in expected.items():
        try:
            fingerprints[name] = _fingerprint(folder / name)
        except FileNotFoundError:
            raise _DamagedCacheError(f"{name} is missing") from None
        if fingerprints[name][0] != size:
            raise _DamagedCacheError(f"{name} is {fingerprints[name][0]:,} bytes, expected {size:,}")
    with contextlib.suppress(OSError, ValueError):
        if json.loads((folder / VERIFIED).read_text()) == fingerprints:
            return  # unchanged since its hashes last matched: the cheap path of a warm load
    for name, (_, digest) in expected.items():
        if _sha256(folder / name) != digest:
            raise _DamagedCacheError(f"{name} does not match the sha256 recorded when it was written")
    _record_verified(folder, fingerprints)


def cache_problem(folder: Path) -> str | None:
    """Why the converted cache in `folder` cannot be used as it is (a few words), or None if it checks out."""
    if not folder.is_dir():
        return "it is missing"
    try:
        _verify(folder)
    except _DamagedCacheError as damage:
        return str(damage)
    return None

