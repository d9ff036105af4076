import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Outcome, SessionRecord } from "../src/model/records.ts";
import { outcomeProblem } from "../src/routes/outcome-check.ts";
import { useEmulator } from "./support/emulator.ts";
import { rawExchange } from "./support/raw-http.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "harden");

describe("malformed outcomes never reach the wire", () => {
  const emu = useEmulator({ syncTimeoutMs: 10_000 });
  let urls: Record<string, string>;

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
  });

  it("raises ValueError in the handler at http_outcome for CR/LF, non-strings and bad statuses", async () => {
    const res = await fetch(urls.sdk_bad!, { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-injected")).toBeNull();
    expect(await res.json()).toEqual({
      raised: [
        "crlf_value",
        "lf_name",
        "int_value",
        "none_value",
        "status_99",
        "status_600",
        "status_str",
      ],
    });
  });

  it("ends the session in error when an outcome message past the SDK holds CR/LF", async () => {
    const { pathname } = new URL(urls.raw_bad!);
    // Raw, to see every byte the service writes: no injected header line, a 502 instead.
    const r = await rawExchange(
      emu.emulator.port,
      async (write) => {
        await write(`POST ${pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
      },
      { settleMs: 200 },
    );
    expect(r.status).toBe(502);
    expect(r.text).not.toMatch(/X-Injected/i);
    const sessionId = /"session_id":"(ses_[a-z0-9]+)"/.exec(r.text)![1]!;
    const ended: SessionRecord = await emu.ended(sessionId);
    expect(ended.state).toBe("error");
    expect(ended.error?.message).toMatch(/bad message from Python: .*header value/);
    // The session stopped at the bad message: the handler's next line never ran.
    expect(await emu.prints(sessionId)).not.toContain("after the bad outcome");
  });

  it("ends the session in error when an outcome message carries a status outside 100-599", async () => {
    const res = await fetch(urls.raw_status!, { method: "POST" });
    expect(res.status).toBe(502);
    const problem = (await res.json()) as { session_id: string; state: string };
    expect(problem.state).toBe("error");
    const ended = await emu.ended(problem.session_id);
    expect(ended.error?.message).toMatch(/status_code/);
  });

  it("still answers a well-formed outcome as given", async () => {
    const res = await fetch(urls.echo!, { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-session")).toMatch(/^ses_/);
    expect(await res.text()).toMatch(/^seen evt_/);
  });
});

describe("outcomeProblem (the route's own check before writing a response)", () => {
  const base: Outcome = { status_code: 200, headers: {}, body: null, more: false };
  it("refuses what cannot be written as HTTP and passes the rest", () => {
    for (const bad of <Outcome[]>[
      { ...base, status_code: 99 },
      { ...base, status_code: 600 },
      { ...base, status_code: 200.5 },
      { ...base, headers: { "X-A": "1\r\nX-B: 2" } },
      { ...base, headers: { "X-A": "a\u0000" } },
      { ...base, headers: { "X A": "a" } },
      { ...base, headers: { "": "a" } },
      { ...base, headers: { "X-A": 5 as unknown as string } },
    ]) {
      expect(outcomeProblem(bad), JSON.stringify(bad)).not.toBeNull();
    }
    expect(outcomeProblem({ ...base, headers: { "X-A": "a\tb café" } })).toBeNull();
  });
});
