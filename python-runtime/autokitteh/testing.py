"""AutoKitteh spelling of `workflow_sdk.testing`: `from autokitteh import testing`.

>>> from autokitteh import testing
>>> testing.run(lambda event: event.event_type, testing.event("PUT")).value
'put'
"""

from workflow_sdk.testing import *  # noqa: F401,F403
from workflow_sdk.testing import __all__  # noqa: F401
