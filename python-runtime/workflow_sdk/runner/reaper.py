"""The fork server's reaping: every child it forked, and the orphans it adopts as subreaper."""

import json
import os

from . import faults
from . import limits as limits_module


class Reaper:
    """Reaps every child (and, as subreaper, what they orphan) and tells the service how each of
    its own children ended: one line `{"type":"exit","pid":…,"code"|"signal":…}` on stdout, so a
    session whose process died is reported with its signal or exit code."""

    def __init__(self, children, cgroups):
        self.children = children
        self.cgroups = cgroups
        self.sweeping = []  # session cgroups not yet empty

    def __call__(self, *_):
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid not in self.children:
                continue  # a grandchild its session left behind
            self.children.discard(pid)
            faults.write(pid=pid, exit=usage.ru_minflt)
            self._report(pid, status)
            self.sweeping.extend(limits_module.end_group(pid, self.cgroups))

    def _report(self, pid, status):
        how = (
            {"signal": os.WTERMSIG(status)}
            if os.WIFSIGNALED(status)
            else {"code": os.waitstatus_to_exitcode(status)}
        )
        if "signal" in how and limits_module.oom_killed(self.cgroups, pid):
            how["limit"] = "memory"  # the OOM killer, at the session's memory.max
        line = json.dumps({"type": "exit", "pid": pid, **how}, separators=(",", ":")) + "\n"
        try:
            os.write(1, line.encode())  # one write, below PIPE_BUF: never torn, safe in a handler
        except OSError:
            pass

    def sweep(self):
        self.sweeping = [p for p in self.sweeping if not limits_module.sweep_cgroup(p)]
