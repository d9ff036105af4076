"""Per-session cgroups: the `pids` and `memory` controllers, where the service may write them.

A fork server makes one folder `hookline-<server pid>` per hierarchy it uses; each session process
makes a cgroup `<folder>/<its pid>` right after fork, sets its limits there and moves itself in.
Pages the child shares with the server stay charged to the server (a cgroup charges the process
that first touched a page), so a session's memory is what it touches itself.

Where each controller is looked for, first found wins:
- cgroup v2 (`/sys/fs/cgroup` when it is the cgroup2 mount, else `/sys/fs/cgroup/unified` on a
  hybrid host): the controller must be listed in the root's `cgroup.controllers`; it is enabled in
  the root's and the server folder's `cgroup.subtree_control` (a cgroup with processes in it
  cannot enable controllers for its children, so the server stays out of its folder);
- cgroup v1: `/sys/fs/cgroup/pids` (its root), `/sys/fs/cgroup/memory` (under the cgroup this
  process is in, so that the host's own limit still holds above the session's).
`HOOKLINE_SESSION_CGROUPS=off` in the service's environment uses none (the rlimit fallback of
limits.py; the tests use it to run that path on a host that has cgroups). See docs/limits.md.
"""

import os
import signal

CGROUP = "/sys/fs/cgroup"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _v2_root():
    for root in (CGROUP, os.path.join(CGROUP, "unified")):
        if _read(os.path.join(root, "cgroup.controllers")) is not None and os.access(root, os.W_OK):
            return root
    return None


def _v1_parent(controller):
    """Where this process's v1 `controller` cgroup is (memory), or the hierarchy's root (pids)."""
    root = os.path.join(CGROUP, controller)
    if controller == "memory":
        for line in (_read("/proc/self/cgroup") or "").splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                root = os.path.join(root, path.lstrip("/"))
    if os.path.exists(os.path.join(root, "cgroup.procs")) and os.access(root, os.W_OK):
        return root
    return None


def _remove_stale(parent):
    """Folders of fork servers that are gone (killed before they could remove their own)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("hookline-")]
    except OSError:
        return
    for name in names:
        try:
            os.kill(int(name[len("hookline-") :]), 0)
            continue  # its server still runs
        except ProcessLookupError:
            pass
        except (ValueError, PermissionError):
            continue
        folder = os.path.join(parent, name)
        try:
            for sub in os.listdir(folder):
                if sub.isdigit():
                    # Only empty ones go: nothing is killed on the word of a pid (pid namespaces).
                    try:
                        os.rmdir(os.path.join(folder, sub))
                    except OSError:
                        pass
            os.rmdir(folder)
        except OSError:
            pass  # still in use, or removed by another server meanwhile


def _enable_v2(root, folder, wanted):
    """Enables what it can of `wanted` for the folder's children; returns what it enabled."""
    offered = set((_read(os.path.join(root, "cgroup.controllers")) or "").split())
    enabled = set()
    for c in sorted(wanted & offered):
        try:
            if c not in (_read(os.path.join(root, "cgroup.subtree_control")) or "").split():
                _write(os.path.join(root, "cgroup.subtree_control"), f"+{c}")
            _write(os.path.join(folder, "cgroup.subtree_control"), f"+{c}")
            enabled.add(c)
        except OSError:
            pass  # EBUSY (processes in the root of a delegated tree), EACCES, ...
    return enabled


def server_folders(server_pid, wanted):
    """{controller: (version, folder)} for the controllers of `wanted` this server can use."""
    if not wanted or os.environ.get("HOOKLINE_SESSION_CGROUPS") == "off":
        return {}
    out = {}
    name = f"hookline-{server_pid}"
    root = _v2_root()
    if root is not None:
        _remove_stale(root)
        folder = os.path.join(root, name)
        try:
            os.makedirs(folder, exist_ok=True)
            for c in _enable_v2(root, folder, set(wanted)):
                out[c] = (2, folder)
            if not out:
                os.rmdir(folder)
        except OSError:
            pass
    for c in set(wanted) - set(out):
        parent = _v1_parent(c)
        if parent is None:
            continue
        _remove_stale(parent)
        folder = os.path.join(parent, name)
        try:
            os.makedirs(folder, exist_ok=True)
            out[c] = (1, folder)
        except OSError:
            pass
    return out


def _settings(controller, version, value):
    """The files to write, in order (v1's memsw limit may not be below the memory limit)."""
    if controller == "pids":
        return [("pids.max", str(value))]
    if version == 2:
        return [("memory.max", str(value)), ("memory.swap.max", "0"), ("memory.oom.group", "1")]
    return [("memory.limit_in_bytes", str(value)), ("memory.memsw.limit_in_bytes", str(value))]


def join(folders, values):
    """In the child: a cgroup of its own in each folder, limited to `values` {controller: n}.

    Returns {controller: path} for the controllers now bounding this process.
    """
    joined = {}
    pid = str(os.getpid())
    for controller, value in values.items():
        if controller not in folders:
            continue
        version, folder = folders[controller]
        path = os.path.join(folder, pid)
        try:
            os.makedirs(path, exist_ok=True)
            for i, (name, text) in enumerate(_settings(controller, version, value)):
                try:
                    _write(os.path.join(path, name), text)
                except OSError:
                    if i == 0:
                        raise  # the limit itself; the others are refinements a host may lack
            _write(os.path.join(path, "cgroup.procs"), "0")
            joined[controller] = path
        except OSError:
            pass
    return joined


def _counter(path, file, key):
    for line in (_read(os.path.join(path, file)) or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            return int(parts[1])
    return 0


def hit(controller, path):
    """Whether the cgroup at `path` has refused `controller`'s resource at its limit."""
    if controller == "pids":
        return _counter(path, "pids.events", "max") > 0
    failcnt = (_read(os.path.join(path, "memory.failcnt")) or "0").strip()  # v1
    return _counter(path, "memory.events", "max") > 0 or failcnt not in ("", "0")


def oom_killed(folders, pid):
    """Whether the kernel's OOM killer killed a process of session `pid` at its memory limit."""
    if "memory" not in folders:
        return False
    path = os.path.join(folders["memory"][1], str(pid))
    return (
        _counter(path, "memory.events", "oom_kill") > 0
        or _counter(path, "memory.oom_control", "oom_kill") > 0
    )


def session_paths(folders, pid):
    """The cgroups session `pid` made (one a folder), to be swept once it has ended."""
    paths = {os.path.join(folder, str(pid)) for _, folder in folders.values()}
    return [p for p in paths if os.path.isdir(p)]


def sweep(path):
    """Kills what remains in a session's cgroup and removes it; False while it is not yet empty."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            left = [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return True
    except OSError:
        return False
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.rmdir(path)
        return True
    except OSError:  # zombies still counted until reaped
        return False


def remove_folders(folders):
    for _, folder in set(folders.values()):
        try:
            os.rmdir(folder)
        except OSError:
            pass
