import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { until } from "./support/until.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const post = (url: string, body = "") => fetch(url, { method: "POST", body });

// The sync timeout is the behaviour under test here only: a short one, in a service of its own.
describe("synchronous webhooks with a 1 s sync timeout", () => {
  const emu = useEmulator({ syncTimeoutMs: 1000 });
  let urls: Record<string, string>;

  beforeAll(async () => {
    urls = await emu.deploy(join(FIXTURES, "sync"));
  });

  it("answers 504 after SVC_SYNC_TIMEOUT while the session keeps running", async () => {
    const t0 = performance.now();
    const res = await post(urls.slow!);
    expect(res.status).toBe(504);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(990);
    const { session_id } = (await res.json()) as { session_id: string };
    const record = await emu.ended(session_id);
    expect(record.state).toBe("completed");
    expect(await emu.prints(session_id)).toContain("finished after the timeout");
  });
});

// Elsewhere a generous timeout: 24 sessions forked at once on a slow, busy machine can take
// many seconds; the tests wait for answers, the timeouts are only room for such a machine.
describe("synchronous webhooks over real HTTP", { timeout: 180_000 }, () => {
  const emu = useEmulator({ syncTimeoutMs: 120_000 });
  let urls: Record<string, string>;

  beforeAll(async () => {
    urls = await emu.deploy(join(FIXTURES, "sync"));
  });

  it("answers with the handler's status and headers, not only 200", async () => {
    for (const status of [201, 202, 204, 302, 404, 418, 500, 503]) {
      const res = await fetch(`${urls.answers!}?status=${status}`, {
        method: "POST",
        redirect: "manual",
      });
      expect(res.status, `http_outcome(${status})`).toBe(status);
      expect(res.headers.get("x-answered-by"), `X-Answered-By of ${status}`).toBe("handler");
      expect(res.headers.get("location")).toBe("/elsewhere");
      expect(res.headers.get("cache-control")).toBe("no-store");
      // 204 carries no body, whatever the handler gave.
      expect(await res.text()).toBe(status === 204 ? "" : `status ${status}`);
    }
  });

  it("answers 502 as soon as a session ends without a final outcome", async () => {
    const res = await post(urls.ends!);
    // 502 at once, not a 504 after the sync timeout: the end is signalled, not waited out.
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await res.json()) as { session_id: string; state: string };
    expect(problem.state).toBe("completed");
    expect(problem.session_id).toMatch(/^ses_/);
  });

  it("answers 502 naming the state, never the traceback, when the handler raises", async () => {
    const res = await post(urls.fails!);
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toContain('"state":"error"');
    expect(text).not.toContain("secret detail");
  });

  it("never crosses the answers of concurrent requests", async () => {
    const ns = Array.from({ length: 24 }, (_, i) => i);
    const answers = await Promise.all(
      ns.map(
        async (n) =>
          (await (await post(urls.echo!, JSON.stringify({ n }))).json()) as { n: number },
      ),
    );
    expect(answers.map((a) => a.n)).toEqual(ns);
  });

  it("times out next_event after its value and returns a false value", async () => {
    const { session_id } = (await (await post(urls.waits!)).json()) as { session_id: string };
    await emu.ended(session_id);
    const out = JSON.parse((await emu.prints(session_id))[0]!) as { got: unknown; waited: number };
    expect(out.got).toBeNull();
    expect(out.waited).toBeGreaterThanOrEqual(2);
    // "Not long after" is proven on a hand-driven clock (src/events/subscriptions.test.ts): an
    // upper bound on this machine's wall clock would measure the machine's load.
  });

  it("raises ValueError in the handler for bad statuses, headers and body+json", async () => {
    const res = await post(urls.bad!);
    expect(await res.json()).toEqual(Array(5).fill("ValueError"));
  });

  it("ignores outcomes of an asynchronous session and logs a warning", async () => {
    const res = await post(urls.async_outcome!);
    expect(res.status).toBe(202);
    const { session_id } = (await res.json()) as { session_id: string };
    await emu.ended(session_id);
    const { entries } = await emu.api<{ entries: { kind: string; text?: string }[] }>(
      `/sessions/${session_id}/log`,
    );
    expect(entries.some((e) => e.kind === "warning" && e.text?.includes("asynchronous"))).toBe(
      true,
    );
  });

  it("keeps the session running when the client hangs up", async () => {
    const ac = new AbortController();
    const before = await emu.api<{ sessions: { id: string }[] }>("/sessions?project=sync_rules");
    const known = new Set(before.sessions.map((s) => s.id));
    const pending = fetch(urls.slow!, { method: "POST", signal: ac.signal }).catch(() => null);
    // Hung up once its session runs (however long a slow machine takes to start it).
    const id = await until("the slow session to run", async () => {
      const { sessions } = await emu.api<{
        sessions: { id: string; trigger_name: string; state: string }[];
      }>("/sessions?project=sync_rules");
      const s = sessions.find((x) => x.trigger_name === "slow" && !known.has(x.id));
      return s?.state === "running" && s.id;
    });
    ac.abort();
    await pending;
    const record = await emu.ended(id);
    expect(record.state).toBe("completed");
    expect(await emu.prints(id)).toEqual(["finished after the timeout"]);
  });

  it("runs AutoKitteh projects: nested manifest, import autokitteh, positional body", async () => {
    const ak = await emu.deploy(join(FIXTURES, "autokitteh"));
    const res = await fetch(ak.hook!, { method: "GET" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello kitteh via GET");
  });
});
