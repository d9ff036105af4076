"""Answers 202 with a job id right away, then does the slow part after the response is sent."""

import time

import workflow_sdk


def on_job(event):
    job = event.session_id
    workflow_sdk.http_outcome(status_code=202, headers={"Location": f"/jobs/{job}"}, json={"job": job})
    # The client has its answer; this runs on. time.sleep runs as an activity.
    for step in range(3):
        time.sleep(0.2)
        print(f"job {job}: step {step + 1} of 3 done")
    print(f"job {job}: finished")
