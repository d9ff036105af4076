"""AutoKitteh compatibility: `import autokitteh` is `workflow_sdk` under its old name."""

from workflow_sdk import *  # noqa: F401,F403
from workflow_sdk import __all__, __version__  # noqa: F401
