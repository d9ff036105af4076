import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EventRecord, SessionRecord } from "../model/records.ts";
import { AcceptLog } from "../storage/accept-log.ts";
import { frontGate } from "./gate.ts";
import { landing } from "./landing.ts";
import type { FrontMessage } from "./messages.ts";

describe("what reaches the host once the front's writes have landed", () => {
  const root = mkdtempSync(join(tmpdir(), "hookline-landing-"));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("hands a session over once its commit landed, counted in hand until then; passes a request on after every commit before it", async () => {
    let land!: () => void;
    const commit = () => new Promise<void>((r) => (land = r));
    const accepts = new AcceptLog(join(root, "accepts"), { commit, failed: () => {} });
    const gate = frontGate(10);
    const posted: FrontMessage["t"][] = [];
    const toHost = landing(accepts, gate, (m) => posted.push(m.t));
    const forwarded: string[] = [];
    const forward = toHost.forward((req) => forwarded.push(req.url!));

    await accepts.take([{ key: "sessions:s1", value: "{}" }]);
    const adopt = { t: "adopt", record: {} as SessionRecord, event: {} as EventRecord } as const;
    toHost.post(adopt);
    toHost.post({ t: "event" }); // not a hand-over: at once
    forward({ url: "/api/v1/sessions/s1" } as IncomingMessage, {} as ServerResponse);
    await new Promise((r) => setTimeout(r, 10));
    expect(posted).toEqual(["event"]);
    expect(forwarded).toEqual([]);
    let idle = false;
    void gate.idle().then(() => {
      idle = true;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(idle).toBe(false); // a stop waits for the hand-over

    land();
    await accepts.settled();
    expect(posted).toEqual(["event", "adopt"]);
    expect(forwarded).toEqual(["/api/v1/sessions/s1"]);
    await gate.idle();
    await accepts.close();
  });

  it("without an accept log, everything at once", () => {
    const posted: FrontMessage["t"][] = [];
    const toHost = landing(null, frontGate(10), (m) => posted.push(m.t));
    toHost.post({ t: "adopt", record: {} as SessionRecord, event: {} as EventRecord });
    expect(posted).toEqual(["adopt"]);
  });
});
