"""Deployment-warm imports: a fork server that has already imported one project's modules.

The service starts one such server per active deployment (build and vars). It imports the
project's entry modules once, with the deployment's vars in its environment, before it forks its
spare children; each session's child then finds its modules imported. Rule 6 of the spec makes
import-time code deterministic, so a child forked after the import holds what a fresh import
would give. What differs (prints at import, threads or sockets opened at import) is in
docs/sessions.md.
"""

import contextlib
import importlib
import os
import sys

from .loader import CALL_NAME, ProjectFinder

__all__ = ["WarmHook", "adopt", "adopt_ahead", "install_hook", "warm_import"]


class WarmHook:
    """The import hook's stand-in while no session exists: calls made at import run as written."""

    def __init__(self):
        self.modules = set()

    @staticmethod
    def call(f, /, *args, **kwargs):
        return f(*args, **kwargs)

    @contextlib.contextmanager
    def importing(self):
        yield


# (project_dir, finder, hook, prints) once warm_import has run in this process.
_warmed = None


class _Recorder:
    """sys.stdout/sys.stderr while importing: keeps what is printed, for each session to replay."""

    def __init__(self, stream, prints):
        self._stream = stream
        self._prints = prints

    def write(self, text):
        if text:
            self._prints.append((self._stream, text))
        return len(text)

    def flush(self):
        pass


def warm_import(project_dir, modules):
    """Import `modules` of the project at `project_dir` through the project's import hook.

    What is printed while importing is kept and replayed as each session's own prints (a cold
    session prints it while importing too). Raises what the import raises; the server then exits
    before it says `ready`.
    """
    global _warmed
    project_dir = os.path.realpath(project_dir)
    os.chdir(project_dir)
    sys.path.insert(0, project_dir)
    hook = WarmHook()
    finder = ProjectFinder(project_dir, hook)
    sys.meta_path.insert(0, finder)
    importlib.invalidate_caches()
    prints = []
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Recorder("stdout", prints), _Recorder("stderr", prints)
    # Writes to fd 1 go to stderr meanwhile: this server's stdout speaks the protocol.
    fd1 = os.dup(1)
    os.dup2(2, 1)
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        sys.stdout, sys.stderr = saved
        os.dup2(fd1, 1)
        os.close(fd1)
    _warmed = (project_dir, finder, hook, prints)


def adopt(activities, project_dir):
    """In a session's child: give the warm modules to this session's activities.

    The rewritten calls of a module look `_hl_call` up in its globals, so rebinding that name
    routes them to this session. Returns the project finder and what the import printed, or
    None when this process is not warm for `project_dir` (the session then imports as usual).
    """
    if _warmed is None or _warmed[0] != os.path.realpath(project_dir):
        return None
    _, finder, hook, prints = _warmed
    activities.modules |= hook.modules
    finder._hook = activities  # modules imported later, during the session, hook into it
    for name in hook.modules:
        module = sys.modules.get(name)
        if module is not None:
            module.__dict__[CALL_NAME] = activities.call
    return finder, prints


def adopt_ahead(activities):
    """`adopt` before `start` says the project: a warm server's child serves its own project.

    Returns (project_dir, adopted) for `install_hook`, or None in a cold server's child.
    """
    if _warmed is None:
        return None
    return _warmed[0], adopt(activities, _warmed[0])


def install_hook(activities, project_dir, adopted=None):
    """A session's import hook: the warm server's, given to this session, else a new one.

    In a child of this deployment's warm server the modules are imported already, and what the
    import printed is written again as the session's own prints. `adopted` is what
    `adopt_ahead` did before `start`, used when it was for this project. Returns the finder.
    """
    if adopted is not None and adopted[0] == os.path.realpath(project_dir):
        warmed = adopted[1]
    else:
        warmed = adopt(activities, project_dir)
    if warmed is None:  # not forked from this deployment's warm server: import as usual
        sys.path.insert(0, project_dir)
        finder = ProjectFinder(project_dir, activities)
        sys.meta_path.insert(0, finder)
        importlib.invalidate_caches()
        return finder
    finder, prints = warmed
    for stream, text in prints:  # what a fresh import would have printed
        getattr(sys, stream).write(text)
    return finder
