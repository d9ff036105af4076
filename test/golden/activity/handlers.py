import uuid
import time

import workflow_sdk


@workflow_sdk.activity
def double(n):
    print(f"inside the activity with {n}")
    return n * 2


def helper(n):
    # A project function: not an activity itself.
    return n + 1


def on_event(event):
    time.sleep(0.01)
    print(double(helper(20)))
    print(len(str(uuid.uuid4())))
