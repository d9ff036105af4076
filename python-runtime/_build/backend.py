"""A PEP 517 build backend in the standard library only.

Why not setuptools: a fresh `python3 -m venv` of Python 3.11 carries setuptools 65 without the
`wheel` package, so `pip install --no-index --no-build-isolation ./python-runtime` cannot build a
wheel with it offline. This backend zips the two pure-Python packages into a wheel itself.
"""

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

NAME, DIST, VERSION = "workflow-sdk", "workflow_sdk", "0.1.0"
PACKAGES = ("workflow_sdk", "autokitteh")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _extra_all():
    """`[project.optional-dependencies] all` of pyproject.toml: the service's pre-installed packages."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]["all"]


# `pip install ./python-runtime[all]` gives an IDE the service's environment: the extra's
# requirements are written into the metadata, one `Requires-Dist` each.
METADATA = (
    f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Hookline Python SDK (workflow_sdk, also importable as autokitteh) and session runner
Requires-Python: >=3.11
Provides-Extra: all
"""
    + "".join(f'Requires-Dist: {req}; extra == "all"\n' for req in _extra_all())
)


def _package_files():
    for package in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, package)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith((".py", ".json")) or name == "py.typed":
                    path = os.path.join(dirpath, name)
                    yield path, os.path.relpath(path, ROOT).replace(os.sep, "/")


def _write_wheel(directory, files):
    """files: list of (archive name, bytes). Adds dist-info and RECORD; returns the wheel's name."""
    info = f"{DIST}-{VERSION}.dist-info"
    files = files + [
        (f"{info}/METADATA", METADATA.encode()),
        (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: hookline-build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()),
        (f"{info}/top_level.txt", "\n".join(PACKAGES).encode() + b"\n"),
    ]
    record = []
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    wheel_name = f"{DIST}-{VERSION}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_sdist = get_requires_for_build_editable = get_requires_for_build_wheel


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, f"{DIST}-{VERSION}.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(METADATA)
    return os.path.basename(info)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for path, name in _package_files():
        with open(path, "rb") as f:
            files.append((name, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(f"__editable__.{DIST}.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{DIST}-{VERSION}"
    name = f"{base}.tar.gz"
    extra = ["pyproject.toml", "README.md", "preinstalled.txt", "_build/backend.py"]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in extra:
            tar.add(os.path.join(ROOT, rel), f"{base}/{rel}")
        for path, rel in _package_files():
            tar.add(path, f"{base}/{rel}")
        data = METADATA.encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
