import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AcceptLog } from "../storage/accept-log.ts";
import { frontGate } from "./gate.ts";
import { landing } from "./landing.ts";
import { type FrontMessage, gatherPosts } from "./messages.ts";

/** What crossed to the host, in order: messages as the host gets them, requests passed on. */
function crossing() {
  const seen: string[] = [];
  const post = gatherPosts((batch) => seen.push(...batch.map((m) => m.t)));
  const turn = () => new Promise((r) => setImmediate(r));
  return { seen, post, turn };
}

describe("what reaches the host once the front's writes have landed", () => {
  const root = mkdtempSync(join(tmpdir(), "hookline-landing-"));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("hands a session over once its commit landed, counted in hand until then; passes a request on after every commit and message before it", async () => {
    let land!: () => void;
    const commit = () => new Promise<void>((r) => (land = r));
    const accepts = new AcceptLog(join(root, "accepts"), { commit, failed: () => {} });
    const gate = frontGate(10);
    const { seen, post, turn } = crossing();
    const toHost = landing(accepts, gate, post);
    const forward = toHost.forward((req) => seen.push(`request ${req.url}`));

    await accepts.take([{ key: "sessions:s1", value: "{}" }]);
    const adopt = { t: "adopt", id: "s1", record: "{}", event: "{}" } as const;
    toHost.post(adopt);
    toHost.post({ t: "event" }); // not a hand-over: at once
    forward({ url: "/api/v1/sessions/s1" } as IncomingMessage, {} as ServerResponse);
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(["event"]);
    let idle = false;
    void gate.idle().then(() => {
      idle = true;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(idle).toBe(false); // a stop waits for the hand-over
    expect(gate.busy).toBe(true);
    gate.taking(1); // the client's next request, while the hand-over waits: not two at once
    gate.taking(-1);
    expect(gate.crowded()).toBe(false);

    land();
    await accepts.settled();
    await turn();
    // The request that reads the session comes after its hand-over, not before it.
    expect(seen).toEqual(["event", "adopt", "request /api/v1/sessions/s1"]);
    await gate.idle();
    await accepts.close();
  });

  it("hands a held (sync) session over once logged, marked landing, and says when its commit landed", async () => {
    let land!: () => void;
    const commit = () => new Promise<void>((r) => (land = r));
    const accepts = new AcceptLog(join(root, "accepts-held"), { commit, failed: () => {} });
    const sent: FrontMessage[] = [];
    const post = gatherPosts((batch) => sent.push(...batch));
    const toHost = landing(accepts, frontGate(10), post);
    await accepts.take([{ key: "sessions:s2", value: "{}" }]);
    toHost.post({ t: "adopt", id: "s2", record: "{}", event: "{}", holdMs: 1000 });
    await new Promise((r) => setTimeout(r, 10));
    expect(sent).toEqual([
      { t: "adopt", id: "s2", record: "{}", event: "{}", holdMs: 1000, landing: true },
    ]);
    land();
    await accepts.settled();
    await new Promise((r) => setImmediate(r));
    expect(sent.at(-1)).toEqual({ t: "landed", id: "s2" });
    await accepts.close();
  });

  it("without an accept log, a request passed on still comes after the messages before it", async () => {
    const { seen, post, turn } = crossing();
    const toHost = landing(null, frontGate(10), post);
    const forward = toHost.forward((req) => seen.push(`request ${req.url}`));
    toHost.post({ t: "adopt", id: "s1", record: "{}", event: "{}" });
    forward({ url: "/api/v1/sessions/s1/watch" } as IncomingMessage, {} as ServerResponse);
    expect(seen).toEqual([]);
    await turn();
    expect(seen).toEqual(["adopt", "request /api/v1/sessions/s1/watch"]);
    // Nothing waiting to cross: at once.
    forward({ url: "/healthz" } as IncomingMessage, {} as ServerResponse);
    expect(seen.at(-1)).toBe("request /healthz");
  });
});
