import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";
import { rawExchange, rawJson } from "./support/raw-http.ts";

const run = promisify(execFile);
const FIXTURE = join(import.meta.dirname, "fixtures", "harden");
const MiB = 1024 * 1024;

describe("hostile bodies over real HTTP (SVC_MAX_BODY = 1 MiB)", () => {
  const emu = useEmulator();
  let urls: Record<string, string>;
  let port: number;
  let path: string;
  const eventCount = async () =>
    (await emu.api<{ events: unknown[] }>("/events?project=harden&limit=1000")).events.length;

  beforeAll(async () => {
    urls = await emu.deploy(FIXTURE);
    port = emu.emulator.port;
    path = new URL(urls.hook!).pathname;
  });

  const chunked = (size: number, piece = 64 * 1024) =>
    rawExchange(port, async (write, end) => {
      await write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      for (let sent = 0; sent < size; sent += piece) {
        const n = Math.min(piece, size - sent);
        await write(`${n.toString(16)}\r\n`);
        await write(Buffer.alloc(n, 0x61));
        await write("\r\n");
      }
      await write("0\r\n\r\n");
      end();
    });

  it("takes a chunked body of exactly the limit", async () => {
    const before = await eventCount();
    const r = await chunked(MiB);
    expect(r.status).toBe(202);
    expect(r.error).toBeNull();
    expect(await eventCount()).toBe(before + 1);
  });

  it("answers 413 to a chunked body that crosses the limit, and stores nothing", async () => {
    const before = await eventCount();
    const r = await chunked(MiB + 1);
    expect(r.status).toBe(413);
    expect(r.error).toBeNull();
    expect(r.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(rawJson(r.text)).toMatchObject({
      status: 413,
      detail: expect.stringContaining("1048576"),
    });
    // A bigger one, well past the limit, the same.
    expect((await chunked(6 * MiB)).status).toBe(413);
    expect(await eventCount()).toBe(before);
  });

  it("answers 400 (problem+json) to both Content-Length and Transfer-Encoding, and stores nothing", async () => {
    const before = await eventCount();
    const r = await rawExchange(port, async (write, end) => {
      await write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
      );
      end();
    });
    // Node's parser refuses the request before the app sees it; the client gets a clear 400.
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/content-type: application\/problem\+json/i);
    expect(rawJson(r.text)).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/malformed/),
    });
    expect(await eventCount()).toBe(before);
  });

  it("stores no event for a body shorter than its Content-Length (client closes early)", async () => {
    const before = await eventCount();
    const short = (how?: "reset") =>
      rawExchange(
        port,
        async (write, end) => {
          await write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n`);
          await write("only forty bytes of the promised thousand");
          await new Promise((res) => setTimeout(res, 50));
          end(how);
        },
        { timeoutMs: 3000 },
      );
    // Half-closed, the client can still read: it is told its request was cut short.
    const halfClosed = await short();
    expect(halfClosed.status).toBe(400);
    expect(halfClosed.text).toMatch(/content-type: application\/problem\+json/i);
    // Reset: nobody to answer.
    const reset = await short("reset");
    expect(reset.status).toBeNull();
    // Give the service time to (wrongly) store something, then check that it did not.
    await new Promise((res) => setTimeout(res, 300));
    expect(await eventCount()).toBe(before);
    expect((await fetch(urls.hook!, { method: "POST", body: "ok" })).status).toBe(202);
    expect(await eventCount()).toBe(before + 1);
  });

  it("lets a raw client that is still sending 2 MiB read its 413, with no reset", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await rawExchange(port, async (write, end) => {
        // As urllib sends it: Connection: close, the whole body, then read.
        await write(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${2 * MiB}\r\n\r\n`,
        );
        // Slowly enough (~0.8 s) that a server closing soon after its answer would reset us.
        for (let sent = 0; sent < 2 * MiB; sent += 64 * 1024) {
          await write(Buffer.alloc(64 * 1024));
          await new Promise((res) => setTimeout(res, 25));
        }
        end();
      });
      expect(r.error).toBeNull();
      expect(r.status).toBe(413);
    }
  });

  it("lets Python's urllib read its 413 for a 2 MiB POST, with and without Content-Length", async () => {
    const script = `
import sys, urllib.request, urllib.error, json
url = sys.argv[1]
def post(data, **kw):
    req = urllib.request.Request(url, data=data, method="POST", **kw)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
out = []
for i in range(5):
    out.append(post(b"x" * (2 * 1024 * 1024)))
    # An iterable body goes out chunked.
    out.append(post(iter([b"y" * (256 * 1024)] * 8)))
print(json.dumps(out))
`;
    const { stdout } = await run("python3", ["-c", script, urls.hook!], { timeout: 60_000 });
    // An unknown webhook id is answered (404) before the body is read: the same holds.
    const unknown = `${emu.url}/webhooks/${"0".repeat(26)}`;
    const { stdout: out404 } = await run("python3", ["-c", script, unknown], { timeout: 60_000 });
    for (const [status] of JSON.parse(out404) as [number, string][]) expect(status).toBe(404);
    const answers = JSON.parse(stdout) as [number, string][];
    expect(answers).toHaveLength(10);
    for (const [status, body] of answers) {
      expect(status).toBe(413);
      expect(JSON.parse(body)).toMatchObject({ status: 413 });
    }
  });
});
