import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeService, json, problem } from "../../test/support/cli.ts";
import { clientFromEnv, createClient, readToken, sseParser } from "./client.ts";

let svc: Awaited<ReturnType<typeof fakeService>> | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

describe("client", () => {
  it("sends JSON with the bearer token and parses the answer", async () => {
    svc = await fakeService((_req, res) => json(res, 200, { ok: true }));
    const client = createClient(`${svc.url}/`, "tok");
    expect(await client.put("/api/v1/envs/demo/vars/A", { value: "1", secret: false })).toEqual({
      ok: true,
    });
    const [req] = svc.seen;
    expect(req?.method).toBe("PUT");
    expect(req?.url).toBe("/api/v1/envs/demo/vars/A");
    expect(req?.headers.authorization).toBe("Bearer tok");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req?.body ?? "")).toEqual({ value: "1", secret: false });
  });

  it("sends no Authorization header without a token", async () => {
    svc = await fakeService((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect(await createClient(svc.url).delete("/x")).toBeUndefined();
    expect(svc.seen[0]?.headers.authorization).toBeUndefined();
  });

  it("turns problem+json into its detail, multi-line included", async () => {
    svc = await fakeService((_req, res) => problem(res, 422, "build failed:\n  File handlers.py"));
    await expect(createClient(svc.url).get("/x")).rejects.toMatchObject({
      message: "build failed:\n  File handlers.py",
      status: 422,
    });
  });

  it("names the status when the error is not problem+json", async () => {
    svc = await fakeService((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>bad gateway</html>");
    });
    await expect(createClient(svc.url).get("/x")).rejects.toThrow(
      "the service answered 502 Bad Gateway",
    );
  });

  it("says how to start the service when nothing listens", async () => {
    await expect(createClient("http://127.0.0.1:9").get("/x")).rejects.toThrow(
      "cannot reach the service at http://127.0.0.1:9: is it running? (start it with: npx cli up --mode dev)",
    );
  });

  it("reads server-sent events until told to stop", async () => {
    svc = await fakeService((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(': hello\n\ndata: {"a":');
      setTimeout(() => res.write("1}\n\nevent: end\r\ndata: {}\r\n\r\n"), 20);
      // the server keeps the stream open: the client must stop on `end` by itself
    });
    const seen: [string, string][] = [];
    await createClient(svc.url).events("/w", (event, data) => {
      seen.push([event, data]);
      return event === "end" ? "stop" : undefined;
    });
    expect(seen).toEqual([
      ["message", '{"a":1}'],
      ["end", "{}"],
    ]);
    expect(svc.seen[0]?.headers.accept).toBe("text/event-stream");
  });
});

describe("sseParser", () => {
  it("joins data lines and handles split chunks", () => {
    const seen: string[] = [];
    const p = sseParser((event, data) => void seen.push(`${event}=${data}`));
    p.push("event: x\nda");
    p.push("ta: 1\ndata:2\n");
    expect(seen).toEqual([]);
    p.push("\n");
    expect(seen).toEqual(["x=1\n2"]);
  });
});

describe("token", () => {
  let tmp: string | undefined;
  afterEach(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("takes SVC_API_TOKEN first, else <configHome>/token", async () => {
    tmp = await mkdtemp(join(tmpdir(), "hookline-token-"));
    expect(readToken({ XDG_CONFIG_HOME: tmp })).toBeUndefined();
    await mkdir(join(tmp, "hookline"));
    await writeFile(join(tmp, "hookline", "token"), "from-file\n");
    expect(readToken({ XDG_CONFIG_HOME: tmp })).toBe("from-file");
    expect(readToken({ XDG_CONFIG_HOME: tmp, SVC_API_TOKEN: "from-env" })).toBe("from-env");

    svc = await fakeService((_req, res) => json(res, 200, {}));
    await clientFromEnv({ XDG_CONFIG_HOME: tmp, SVC_URL: svc.url }).get("/x");
    expect(svc.seen[0]?.headers.authorization).toBe("Bearer from-file");
  });
});
