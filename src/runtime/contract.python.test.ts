import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testPython } from "../../test/support/python.ts";
import { type ContractSetup, runtimeContract } from "../../test/support/runtime-contract.ts";
import { recordingHost, testEvent, testSpec } from "../../test/support/test-host.ts";
import { createPythonRuntime } from "./python/runtime.ts";

const HANDLERS = `
import os, sys, time
from workflow_sdk import activity, http_outcome, next_event, subscribe

@activity
def double(x):
    return x * 2

def on_post(event):
    print("hello", event.data.body.text)
    print("to stderr", file=sys.stderr)

def on_fail(event):
    raise KeyError("missing")

def on_sync(event):
    http_outcome(201, headers={"X-N": "42"}, body="n=42")

def on_durable(event):
    n = double(21)
    sid = subscribe("hook", "")
    e = next_event(sid, timeout=5)
    print("got", e.data.body.text, n)
    http_outcome(200, body="done")

def on_loop(event):
    print("looping")
    while True:
        time.sleep(0.05)

def on_crash(event):
    print("crashing")
    sys.stdout.flush()
    os.kill(os.getpid(), 9)
`;

/** Real processes: the fork server, one forked Python per session (or reused ones). */
function pythonContract(spec: ContractSetup["spec"], before: string[] = []) {
  return async (): Promise<ContractSetup> => {
    const python = await testPython();
    const dataHome = await mkdtemp(join(tmpdir(), "hl-contract-"));
    const make = () =>
      createPythonRuntime({ dataHome, python: async () => python, stopGraceMs: 500 });
    const runtime = make();
    const build = {
      id: "bld_contract",
      files: { "handlers.py": Buffer.from(HANDLERS).toString("base64") },
    };
    // Sessions run before the suite's own: with reuse, theirs get the processes these leave.
    for (const entry of before) {
      const end = await runtime.run(spec({ entry }), build, recordingHost()).done;
      if (end.state !== "completed") throw new Error(`${entry}: ${JSON.stringify(end)}`);
    }
    return {
      runtime,
      fresh: make,
      build,
      host: recordingHost,
      spec,
      event: testEvent,
      teardown: () => rm(dataHome, { recursive: true, force: true }),
    };
  };
}

runtimeContract("python", pythonContract(testSpec));
// Every session of the suite on the trigger option: each one after the first of an entry runs
// in a process an earlier one left (durable ones never do).
runtimeContract(
  "python, reuse_process",
  pythonContract(
    (over) => testSpec({ reuseProcess: true, ...over }),
    ["handlers.py:on_post", "handlers.py:on_sync"],
  ),
);
