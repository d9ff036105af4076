"""AutoKitteh compatibility: `import autokitteh` is `workflow_sdk` under its old name.

`autokitteh.<sub>` (errors, store, slack, …) is the very module `workflow_sdk.<sub>`, so
`autokitteh.errors.AutoKittehError is workflow_sdk.errors.AutoKittehError`.
"""

import importlib
import importlib.abc
import importlib.util
import sys

from workflow_sdk import *  # noqa: F401,F403
from workflow_sdk import __all__, __version__, errors  # noqa: F401


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        module = importlib.import_module(self._target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import system set the alias's spec on the real module: put the real one back, so the
        # module's own relative imports (made when a helper is called) resolve without a warning.
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("autokitteh."):
            return None
        real = "workflow_sdk." + fullname[len("autokitteh.") :]
        if real not in sys.modules and importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
    sys.meta_path.append(_AliasFinder())
