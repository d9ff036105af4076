// A session stored but never queued: its instance died between the record and the queue (its
// sender got no 202). Here the dying instance is `SharedWork.accept` itself, over the real Redis
// queue, with a push that never happens; the surviving instance queues the session a lease time
// later and runs it to its end. Real service, real Python, real Redis (docs/scale-out.md).
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/clock.ts";
import type { Cluster } from "../src/cluster/cluster.ts";
import { redisWorkQueue } from "../src/cluster/work-queue.ts";
import { newId } from "../src/ids.ts";
import { silentLogger } from "../src/log.ts";
import { SessionChannel } from "../src/sessions/channel.ts";
import { SessionsHere } from "../src/sessions/context.ts";
import type { Lifecycle } from "../src/sessions/lifecycle.ts";
import { SharedWork } from "../src/sessions/shared-work.ts";
import { createStorageFromUrl, redisTarget } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { useEmulator } from "./support/emulator.ts";
import { redisTestUrl, warnIfNoRedis } from "./support/redis.ts";
import { until } from "./support/until.ts";

process.env.SVC_SECRET_KEY = "00".repeat(32);
const enabled = warnIfNoRedis("the never-queued session test");
const storage = enabled ? redisTestUrl() : "memory:";
const LEASE_MS = 1500;

describe.skipIf(!enabled)("a session stored by an instance that died before queueing it", () => {
  const survivor = useEmulator({ storage, leaseMs: LEASE_MS });
  const stores = createStores(createStorageFromUrl(storage));
  const target = redisTarget(storage)!;
  const queue = redisWorkQueue({
    ...{ url: target.url, prefix: target.base, instanceId: "dead", leaseMs: LEASE_MS },
    leased: () => {},
  });
  afterAll(async () => {
    await queue.dispose();
    await stores.dispose();
  });

  it("is queued again a lease time later and runs once, to its end", async () => {
    const urls = await survivor.deploy(join(import.meta.dirname, "fixtures", "cluster"));
    // A real event and session first: the dead instance's input is built from what they hold.
    const res = await fetch(urls.hello!, { method: "POST", body: "" });
    const { session_id: first } = (await res.json()) as { session_id: string };
    expect((await survivor.ended(first)).state).toBe("completed");
    const template = (await stores.sessions.get(first))!;
    const doc = (await stores.projects.get(template.project_id))!;
    const event = { ...(await stores.events.get(template.event_id))!, id: newId("evt") };
    await stores.events.put(event);

    // The dying instance: its record is written, its push never reaches the queue.
    const dead: Cluster = {
      ...({ shared: true, instanceId: "dead" } as Cluster),
      queue: {
        ...queue,
        // It dies at the push: the push never comes back.
        push: () => new Promise<void>(() => {}),
      },
    };
    const lifecycle = {} as unknown as Lifecycle;
    const channel = new SessionChannel();
    const here = new SessionsHere(1);
    const work = new SharedWork({
      ...{ cluster: dead, stores, lifecycle, channel, here },
      ...{ log: silentLogger, clock: systemClock, slots: 1 },
    });
    const sessionId = newId("ses");
    const input = {
      sessionId,
      doc,
      trigger: doc.triggers.find((t) => t.name === "hello")!,
      deploymentId: template.deployment_id,
      buildId: template.build_id,
      event,
    };
    void work.accept(input);
    const stored = await until(
      "the dying instance's record",
      async () => (await stores.sessions.get(sessionId)) ?? undefined,
    );
    work.dispose();
    expect(stored.state).toBe("created");

    // The survivor's sweep queues it once the lease time is over; it runs there. Waited for by
    // its state rather than its end: a session never queued again stays `created`, said here.
    await until(
      `the survivor to queue again the session the dead instance left \`created\` (its lease of ${LEASE_MS} ms lapsed; still \`created\`: never re-queued)`,
      async () => (await stores.sessions.get(sessionId))?.state !== "created",
    );
    const record = await survivor.ended(sessionId);
    expect(record.state).toBe("completed");
    expect(await survivor.prints(sessionId)).toEqual(["red"]);
    const sessions = await stores.sessions.list({ project_id: doc.project.id });
    expect(sessions.filter((s) => s.event_id === event.id).map((s) => s.id)).toEqual([sessionId]);
  }, 120_000);
});
