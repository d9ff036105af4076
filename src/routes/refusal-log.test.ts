import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { deployBody, targets } from "../../test/support/app.ts";
import { manualClock } from "../../test/support/clock.ts";
import { fakeRuntime } from "../../test/support/fake-runtime.ts";
import { slackRequest } from "../../test/support/signing.ts";
import type { Logger } from "../log.ts";
import { createSecretBox } from "../secrets.ts";
import { createAddressCache } from "./address-cache.ts";
import { inboundRoutes } from "./inbound.ts";
import { answerErrors } from "./problem.ts";
import { REFUSAL_WINDOW_MS, REFUSALS_LOGGED } from "./refusal-log.ts";

/**
 * A flood of forged deliveries writes a bounded number of log lines, per connection, then says
 * how many it left out. The inbound route over the real app's stores and sessions (a fake
 * runtime for Python), its clock driven by hand.
 */
const MANIFEST = `
version: v2
project: {name: flood}
connections:
  - {name: a, integration: slack, vars: [{name: signing_secret, value: secret-a, secret: true}]}
  - {name: b, integration: slack, vars: [{name: signing_secret, value: secret-b, secret: true}]}
`;

async function setup() {
  const secrets = createSecretBox(randomBytes(32));
  const { hook } = await targets[0]!.make(fakeRuntime().runtime, { services: { secrets } });
  expect((await hook.app.request("/api/v1/deploy", deployBody(MANIFEST))).status).toBe(200);
  const doc = (await hook.stores.projects.byName("flood"))!;
  const lines: string[] = [];
  const log: Logger = { info: () => {}, warn: (l) => lines.push(l), error: () => {} };
  const clock = manualClock(Date.now());
  const routes = new Hono();
  answerErrors(routes, log);
  const taking = {
    addresses: createAddressCache(hook.stores),
    sessions: hook.sessions,
    limits: { maxBody: 1 << 20 },
  };
  routes.route("/inbound", inboundRoutes(taking, { secrets, log, clock }));
  const idOf = (name: string) => doc.connections!.find((c) => c.name === name)!.inbound_id;
  /** `n` deliveries to connection `name` signed with the wrong secret. */
  const forge = async (name: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const at = Math.floor(clock.now() / 1000);
      const res = await routes.request(
        `/inbound/${idOf(name)}`,
        slackRequest("forged", "{}", { at }),
      );
      expect(res.status).toBe(401);
    }
  };
  return { lines, clock, forge, hook };
}

describe("refusal log lines", () => {
  it("are at most 10 a connection a minute; the rest are counted and said at the window's end", async () => {
    const { lines, clock, forge, hook } = await setup();
    await forge("a", 1000);
    expect(lines).toHaveLength(REFUSALS_LOGGED);
    expect(lines[0]).toBe(
      "connection flood/a: refused (401): X-Slack-Signature does not match the body",
    );
    // Another connection has a window of its own.
    await forge("b", 3);
    expect(lines.slice(REFUSALS_LOGGED)).toEqual(
      Array(3).fill("connection flood/b: refused (401): X-Slack-Signature does not match the body"),
    );
    await clock.advance(REFUSAL_WINDOW_MS);
    expect(lines.slice(REFUSALS_LOGGED + 3)).toEqual([
      "connection flood/a: 990 more refused deliveries in the last 60 s not logged (at most 10 are, per connection)",
    ]);
    // A new window: logged again, and nothing stored or started by any of it.
    await forge("a", 1);
    expect(lines).toHaveLength(REFUSALS_LOGGED + 5);
    expect(await hook.stores.events.keys()).toEqual([]);
    await clock.advance(REFUSAL_WINDOW_MS);
    expect(lines).toHaveLength(REFUSALS_LOGGED + 5); // nothing left out: no summary
  });
});
