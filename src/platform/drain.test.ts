import { describe, expect, it } from "vitest";
import { createDrain } from "./drain.ts";

/** A promise and the way to settle it. */
function gate() {
  let open = () => {};
  const shut = new Promise<void>((r) => {
    open = r;
  });
  return { shut, open };
}

describe("the drain", () => {
  it("waits for the held requests and for the sessions, then ends", async () => {
    const request = gate();
    const d = createDrain(async () => {
      await request.shut;
      return new Response("done");
    });
    const answer = d.fetch(new Request("http://x/webhooks/abc"));
    const sessions = gate();
    let ended = false;
    const drained = d.drain(60_000, sessions.shut).then(() => {
      ended = true;
    });
    expect((await d.fetch(new Request("http://x/readyz"))).status).toBe(503);
    request.open();
    expect(await (await answer).text()).toBe("done");
    await new Promise((r) => setTimeout(r, 20));
    expect(ended, "a session still runs").toBe(false);
    sessions.open();
    await drained;
    expect(ended).toBe(true);
  });

  it("ends at the grace, whatever still runs", async () => {
    const d = createDrain(() => new Response("ok"));
    const started = Date.now();
    await d.drain(50, new Promise<void>(() => {}));
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });
});
