import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { forkServers, pgrep } from "./support/processes.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "warm");
const post = async (url: string) =>
  ((await (await fetch(url, { method: "POST" })).json()) as { session_id: string }).session_id;

describe("warm Python processes", () => {
  const emu = useEmulator({ maxSessions: 4 });
  let urls: Record<string, string>;

  // Each test starts from the manifest's COLOR: a value set through the API would win over it
  // until deleted.
  beforeEach(async () => {
    await emu.api("/envs/warm_pool/vars/COLOR", { method: "DELETE", allowError: true });
    urls = await emu.deploy(FIXTURE);
  });

  it("start each session with fresh module state and the vars of that moment", async () => {
    const first = await post(urls.state!);
    await emu.ended(first);
    expect(await emu.prints(first)).toEqual(["1 red clean"]);
    await emu.api("/envs/warm_pool/vars/COLOR", {
      method: "PUT",
      body: JSON.stringify({ value: "blue" }),
    });
    const second = await post(urls.state!);
    await emu.ended(second);
    expect(await emu.prints(second)).toEqual(["1 blue clean"]);
  });

  it("replaces a fork server that was killed", async () => {
    // A session first, so that a fork server runs whatever ran before this test.
    expect((await emu.ended(await post(urls.state!))).state).toBe("completed");
    const [server] = forkServers();
    expect(server).toBeGreaterThan(0);
    process.kill(server!, "SIGKILL");
    // Reaped (so the service has heard of its exit), however long that takes here.
    await until("the killed fork server to be reaped", () => !forkServers().includes(server!));
    const id = await post(urls.state!);
    const record = await emu.ended(id);
    expect(record.state).toBe("completed");
    const [replacement] = forkServers();
    expect(replacement).toBeGreaterThan(0);
    expect(replacement).not.toBe(server);
  });

  it("stays within SVC_MAX_SESSIONS processes under a burst, and runs every session", async () => {
    const ids = await Promise.all(Array.from({ length: 40 }, () => post(urls.busy!)));
    // Sessions waiting for a slot are still `created`: only a started process makes `running`.
    const { sessions } = await emu.api<{ sessions: unknown[] }>(
      "/sessions?project=warm_pool&state=created&limit=100",
    );
    expect(sessions.length).toBeGreaterThan(0);
    let most = 0;
    const sampler = setInterval(() => {
      const [server] = forkServers();
      if (server) most = Math.max(most, pgrep("-P", String(server)).length);
    }, 10);
    try {
      for (const id of ids) expect((await emu.ended(id)).state).toBe("completed");
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeGreaterThan(0);
    // SVC_MAX_SESSIONS running, plus the fork server's 2 spares and the child the service
    // connected ahead, all waiting for the next sessions.
    expect(most).toBeLessThanOrEqual(4 + 2 + 1);
  }, 180_000); // 40 sessions, 4 at a time: room for a machine where each costs seconds
});
