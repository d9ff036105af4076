import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { runtimeContract } from "../../test/support/runtime-contract.ts";
import { recordingHost, testEvent, testSpec } from "../../test/support/test-host.ts";
import type { WebhookData } from "../model/records.ts";

/** The contract's handlers, written against the fake's workflow API. */
const handlers = () =>
  fakeRuntime({
    "handlers.py:on_post": (spec, wf) => {
      wf.print(`hello ${(spec.event.data as WebhookData).body.text}`);
      wf.print("to stderr", "stderr");
    },
    "handlers.py:on_fail": () => {
      throw new Error("KeyError: 'missing'");
    },
    "handlers.py:on_sync": (_spec, wf) => {
      wf.outcome({
        status_code: 201,
        headers: { "X-N": "42" },
        body: Buffer.from("n=42"),
        more: false,
      });
    },
    "handlers.py:on_durable": async (_spec, wf) => {
      const n = await wf.activity("handlers.double", () => 21 * 2);
      const sid = await wf.subscribe("hook", "");
      const e = await wf.nextEvent([sid], 5000);
      wf.print(`got ${(e?.data as WebhookData | undefined)?.body.text} ${n}`);
      wf.outcome({ status_code: 200, headers: {}, body: Buffer.from("done"), more: false });
    },
    "handlers.py:on_loop": async (_spec, wf) => {
      wf.print("looping");
      await new Promise(() => {});
    },
    "handlers.py:on_crash": (_spec, wf) => {
      wf.print("crashing");
      wf.crash("the fake process died");
    },
  }).runtime;

// In process: the same contract the Python runtime passes, so route tests stand on firm ground.
runtimeContract("fake", async () => ({
  runtime: handlers(),
  fresh: handlers,
  build: { id: "bld_contract", files: {} },
  host: recordingHost,
  spec: testSpec,
  event: testEvent,
}));
