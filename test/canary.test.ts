// A planted secret must appear nowhere but in the handler's environment (and in what the handler
// itself chooses to send its own HTTP caller): not in CLI output, API responses, server log
// lines (JSON, SVC_LOG_FORMAT=json), /metrics, the spans exported over OTLP, nor in any byte
// stored under the data home, with the fs and the lmdb driver. Real service (`cli up` as a
// process), real Python, real HTTP, the real CLI, the web UI's pages, an OTLP receiver.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { startOtlpReceiver } from "./support/otlp.ts";
import { freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "canary");
const CLI = join(repoRoot, "bin/cli.mjs");
const TOKEN = "canary-api-token-0123456789";

/** The secret as bytes and as base64 at each of the three alignments (a pickled step result). */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const out = [secret];
  for (let pad = 0; pad < 3; pad++) {
    const encoded = Buffer.concat([Buffer.alloc(pad), bytes]).toString("base64");
    const from = pad === 0 ? 0 : 4;
    out.push(encoded.slice(from, 4 * Math.floor((pad + bytes.length) / 3)));
  }
  return out;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe.each(["fs", "lmdb"])("the secret canary (%s storage)", (driver) => {
  const home = mkdtempSync(join(tmpdir(), `hookline-canary-${driver}-`));
  const dataHome = join(home, "data", "hookline");
  const secret = `canary-${randomBytes(12).toString("hex")}`;
  let service: ResultPromise | null = null;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>> | null = null;
  afterAll(async () => {
    await otlp?.close();
    service?.kill("SIGKILL");
    await service?.catch(() => {});
    if (!process.env.KEEP_CANARY) rmSync(home, { recursive: true, force: true });
  });

  it("appears in no CLI output, API response, log line or stored byte", async () => {
    const port = await freePort();
    otlp = await startOtlpReceiver();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      XDG_DATA_HOME: join(home, "data"),
      XDG_CONFIG_HOME: join(home, "config"),
      SVC_WORKER_PYTHON: await testPython(),
      SVC_API_TOKEN: TOKEN,
      SVC_URL: url,
      SVC_LOG_FORMAT: "json",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      ...(driver === "lmdb" ? { SVC_STORAGE: `lmdb:${join(dataHome, "lmdb")}` } : {}),
    };
    service = execa(CLI, ["up", "--mode", "prod", "--port", String(port)], {
      env,
      reject: false,
      all: true,
    });
    await waitHealthy(url, 60_000);
    const seen: Array<[string, string]> = [];
    const cli = async (args: string[], input?: string) => {
      const r = await execa(CLI, args, { env, cwd: FIXTURE, reject: false, input, all: true });
      seen.push([`cli ${args.join(" ")}`, r.all ?? ""]);
      return r;
    };
    const auth = { authorization: `Bearer ${TOKEN}` };
    const api = async (path: string) => {
      const res = await fetch(`${url}/api/v1${path}`, { headers: auth });
      const text = await res.text();
      seen.push([`GET ${path}`, text]);
      return JSON.parse(text);
    };

    expect((await cli(["deploy"])).exitCode).toBe(0);
    expect(
      (await cli(["var", "set", "--env", "canary", "--secret", "CANARY"], secret)).exitCode,
    ).toBe(0);
    const { triggers } = await api("/triggers");
    const hook = (name: string) =>
      url +
      (triggers as { name: string; webhook_path: string }[]).find((t) => t.name === name)!
        .webhook_path;

    for (const name of ["printer", "raiser", "passer", "durable_passer"]) {
      const res = await fetch(hook(name), { method: "POST", body: "{}" });
      seen.push([`POST ${name}`, await res.text()]);
      expect(res.status).toBe(202);
    }
    // A sync handler that raises: 502 problem+json, no traceback, no secret.
    const failed = await fetch(hook("sync_raiser"), { method: "POST", body: "{}" });
    const problem = await failed.text();
    seen.push(["POST sync_raiser", problem]);
    expect(failed.status).toBe(502);
    expect(problem).not.toMatch(/Traceback|RuntimeError|handlers\.py/);
    // The handler's own answer to its own caller carries what the handler put in it: by design.
    const told = await fetch(hook("teller"), { method: "POST", body: "{}" });
    expect(told.headers.get("x-canary")).toBe(secret);
    expect(await told.text()).toBe(`told ${secret}`);

    const sessions = await until("every session to end", async () => {
      const { sessions } = (await api("/sessions?limit=100")) as {
        sessions: { id: string; state: string; trigger_name: string }[];
      };
      return (
        sessions.length === 6 &&
        sessions.every((s) => !["created", "running"].includes(s.state)) &&
        sessions
      );
    });
    const byName = Object.fromEntries(sessions.map((s) => [s.trigger_name, s]));
    expect(byName.printer!.state).toBe("completed");
    expect(byName.raiser!.state).toBe("error");
    expect(byName.durable_passer!.state).toBe("completed");
    // Redaction, not absence, is what the next checks see: the prints are there, masked.
    const { prints } = await api(`/sessions/${byName.printer!.id}/prints`);
    expect((prints as { text: string }[]).map((p) => p.text)).toContain("the secret is ********");

    for (const s of sessions) {
      await api(`/sessions/${s.id}`);
      await api(`/sessions/${s.id}/log`);
      await api(`/sessions/${s.id}/prints`);
      await cli(["session", "log", s.id]);
      await cli(["session", "prints", s.id]);
    }
    const { events } = await api("/events?limit=100");
    for (const e of events as { id: string }[]) await api(`/events/${e.id}`);
    for (const path of [
      "/projects",
      "/deployments",
      "/envs",
      "/envs/canary/vars",
      "/openapi.json",
    ]) {
      await api(path);
    }
    // The web UI, signed in with the token: every page a viewer can open.
    const signIn = await fetch(`${url}/ui/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: TOKEN, next: "/ui/sessions" }),
    });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    const page = async (path: string) => {
      const res = await fetch(`${url}/ui${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      seen.push([`UI ${path}`, await res.text()]);
    };
    await page("/sessions");
    await page("/projects");
    await page("/projects/canary");
    for (const t of triggers as { name: string }[])
      await page(`/projects/canary/triggers/${t.name}`);
    for (const s of sessions) await page(`/sessions/${s.id}`);
    for (const args of [
      ["session", "list"],
      ["var", "list", "--env", "canary"],
      ["project", "list"],
      ["trigger", "list"],
      ["env", "list"],
    ]) {
      await cli(args);
    }

    const metrics = await fetch(`${url}/metrics`, { headers: auth });
    expect(metrics.status).toBe(200);
    seen.push(["GET /metrics", await metrics.text()]);

    service.kill("SIGTERM"); // the service sends the spans it still holds as it stops
    const ended = await service;
    service = null;
    seen.push(["service output", String(ended.all ?? "")]);
    // The log was JSON, and the spans came: the checks below looked at real output.
    expect(String(ended.stderr)).toMatch(/^\{"time":/m);
    const raiserSpan = otlp!.spans.find(
      (s) => s.name === "session" && s.attributes["hookline.trigger"] === "raiser",
    );
    expect(raiserSpan?.status.message).toBe("RuntimeError: failed with ********");
    expect(otlp!.spans.some((s) => s.name.startsWith("activity "))).toBe(true);
    seen.push(["exported spans", otlp!.raw.join("\n")]);
    expect(ended.all).not.toContain(TOKEN); // the API token is never logged either

    const leaks: string[] = [];
    for (const [where, text] of seen) {
      for (const form of forms(secret)) if (text.includes(form)) leaks.push(`${where}: ${form}`);
    }
    const stored = files(dataHome).filter((f) => !f.includes(`${join(dataHome, "venv")}/`));
    expect(stored.length).toBeGreaterThan(3);
    for (const file of stored) {
      const bytes = readFileSync(file);
      for (const form of forms(secret)) if (bytes.includes(form)) leaks.push(`${file}: ${form}`);
    }
    expect(leaks).toEqual([]);
  }, 180_000);
});
