"""AutoKitteh's integration modules that have no client helper here yet, importable.

`github`, `slack`, `openai`, `anthropic`, `gemini`, `twilio`, `linear`, `jira`, `atlassian`,
`google`, `aws`, `discord`, `hubspot`, `auth0`, `asana`, `notion`, `pipedrive`, `reddit`,
`telegram`, `zoom`, `microsoft`, `confluence` and `connections` are real modules of this
package. The others (`autokitteh.airtable`, `autokitteh.salesforce`, …) import, so a program
whose other handlers need them not still runs; each of their helpers (any public name) raises
`ConnectionNotSupportedError` when called, saying so.
"""

import importlib.abc
import importlib.util
import sys
import types

from .errors import ConnectionNotSupportedError

NAMES = frozenset(
    """
    airtable azurebot height kubernetes salesforce
    """.split()
)


def _helper(module, name):
    def helper(*args, **kwargs):
        connection = args[0] if args else kwargs.get("connection")
        raise ConnectionNotSupportedError(f"{module}.{name}", connection)

    helper.__name__ = helper.__qualname__ = name
    helper.__module__ = module
    return helper


class IntegrationModule(types.ModuleType):
    """A module whose every public attribute is a helper that raises ConnectionNotSupportedError."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        helper = _helper(self.__name__, name)
        setattr(self, name, helper)
        return helper


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = IntegrationModule(spec.name)
        module.__doc__ = f"{spec.name}: the AutoKitteh integration; its client helpers are not supported yet."
        return module

    def exec_module(self, module):
        pass


class IntegrationFinder(importlib.abc.MetaPathFinder):
    """Finds `workflow_sdk.<integration>` (and so `autokitteh.<integration>`)."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.partition(".")
        if package == "workflow_sdk" and name in NAMES:
            return importlib.util.spec_from_loader(fullname, _Loader())
        return None


def install():
    if not any(isinstance(f, IntegrationFinder) for f in sys.meta_path):
        sys.meta_path.append(IntegrationFinder())
