"""Real third-party packages for tests, installed once with pip into a cache folder of their own.

pip resolves them from whatever index this machine's pip is configured with (pip.conf, `PIP_*`);
`--retries 0` so an unreachable default index next to a reachable mirror costs no backoff. A
package pip cannot install fails the test that needs it, with pip's last lines: never a skip.
"""

import os
import subprocess
import sys
import tempfile

CACHE = os.path.join(tempfile.gettempdir(), "hookline-test-packages")


def installed(requirement, module):
    """A folder holding `requirement` (importable as `module`), installed there at the first call."""
    folder = os.path.join(CACHE, requirement.lower())
    probe = [sys.executable, "-c", f"import sys; sys.path.insert(0, {folder!r}); import {module}"]
    if subprocess.run(probe, capture_output=True).returncode == 0:
        return folder
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--retries",
        "0",
        "--quiet",
        "--target",
        folder,
        requirement,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-5:])
        raise AssertionError(f"pip could not install {requirement} for this test:\n{tail}")
    return folder
