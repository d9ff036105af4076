"""A session process's minor page faults, phase by phase, for the bench (docs/performance.md).

Off unless the fork server's environment names a file in `HOOKLINE_FAULT_PHASES` (the bench
sets it; the service passes its environment on). Then each session's process counts its faults
since the fork (getrusage, all its threads) at each phase it passes and appends one JSON line to
that file at its `done`, and the fork server one line per child it reaps with the child's total
from wait4 (the exit's teardown included):

    {"pid": 4242, "forked": 231, "spare": 520, "taken": 522, "start": 640, "done": 901}
    {"pid": 4242, "exit": 955}

Off, `mark` is one global lookup: nothing is counted or written.
"""

import json
import os
import resource

PATH = os.environ.get("HOOKLINE_FAULT_PHASES") or None
_marks = {}


def mark(phase):
    """Count this process's faults so far as of the end of `phase` (when phases are on)."""
    if PATH is not None:
        _marks[phase] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def write(**fields):
    """Append the phases counted so far (and `fields`) as one line, then start a new count."""
    if PATH is None:
        return
    line = json.dumps({"pid": os.getpid(), **_marks, **fields}, separators=(",", ":")) + "\n"
    _marks.clear()
    try:
        fd = os.open(PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())  # one write to a file opened O_APPEND: lines never interleave
        finally:
            os.close(fd)
    except OSError:
        pass
