import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { createStorageFromUrl } from "../src/storage/driver.ts";
import { createStores } from "../src/storage/records.ts";
import { defaultStorageUrl } from "../src/storage-url.ts";
import { deployFolder, freePort, waitHealthy } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { until } from "./support/until.ts";

/**
 * The whole service is SIGKILLed mid-session (with its fork server and Python children, as one
 * process group) and started again on the same data home: the durable session resumes from its
 * journal, the non-durable one ends in error ("interrupted").
 */

const FIXTURE = join(import.meta.dirname, "fixtures", "durable");

describe("a service killed mid-session", () => {
  const home = mkdtempSync(join(tmpdir(), "hookline-restart-"));
  const work = mkdtempSync(join(tmpdir(), "hookline-restart-work-"));
  let service: ResultPromise | null = null;
  afterAll(async () => {
    if (service?.pid) process.kill(service.pid, "SIGTERM");
    await service?.catch(() => {});
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  async function start(port: number, python: string): Promise<string> {
    service = execa(
      "node",
      [join(repoRoot, "bin/cli.mjs"), "up", "--mode", "dev", "--port", String(port)],
      {
        env: {
          XDG_DATA_HOME: join(home, "data"),
          XDG_CONFIG_HOME: join(home, "config"),
          SVC_WORKER_PYTHON: python,
        },
        detached: true, // its own process group, so one kill reaches every child
        reject: false,
      },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 30_000);
    return url;
  }

  /** Until the service's store holds both running records, 2 journal steps and the print. */
  async function onDisk(durableId: string, plainId: string): Promise<void> {
    const stores = createStores(
      // The store the service chose in its data home (LMDB on a new one).
      createStorageFromUrl(defaultStorageUrl(join(home, "data", "hookline"))),
    );
    try {
      await until("the sessions to reach the disk", async () => {
        try {
          const [d, p] = await Promise.all([
            stores.sessions.get(durableId),
            stores.sessions.get(plainId),
          ]);
          const steps = await stores.journals.list(durableId);
          const log = await stores.logs.get(durableId);
          return (
            d?.state === "running" &&
            p?.state === "running" &&
            steps.length >= 2 &&
            log.some((e) => e.kind === "print" && e.text === "first print")
          );
        } catch {
          return false; // a file read while it was being written
        }
      });
    } finally {
      await stores.dispose();
    }
  }

  it("resumes the durable session and interrupts the other", async () => {
    const python = await testPython();
    const port = await freePort();
    let url = await start(port, python);
    const api = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${url}/api/v1${path}`, {
        ...init,
        headers: { "content-type": "application/json" },
      });
      return res.json() as Promise<Record<string, unknown>>;
    };
    expect((await deployFolder(url, FIXTURE)).status).toBe(200);
    await api("/envs/durable_rules/vars/WORKDIR", {
      method: "PUT",
      body: JSON.stringify({ value: work }),
    });
    const { triggers } = (await api("/triggers?project=durable_rules")) as {
      triggers: { name: string; webhook_path: string }[];
    };
    const path = (name: string) => triggers.find((t) => t.name === name)!.webhook_path;

    const durable = (await (await fetch(url + path("steps"), { method: "POST" })).json()) as {
      session_id: string;
    };
    await until("the durable session's pid", () => existsSync(join(work, "pid")));
    writeFileSync(join(work, "pid"), "");
    const plain = (await (await fetch(url + path("plain_steps"), { method: "POST" })).json()) as {
      session_id: string;
    };
    await until("the plain session's pid", () => readFileSync(join(work, "pid"), "utf8"));
    // The journal and the logs are written behind: wait until the disk holds what the restarted
    // service needs (a fixed pause was too short on a busy machine).
    await onDisk(durable.session_id, plain.session_id);

    process.kill(-service!.pid!, "SIGKILL");
    await service;
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("one\none\n");

    url = await start(port, python);
    writeFileSync(join(work, "go"), "");
    const ended = async (id: string) =>
      until(`session ${id} to end`, async () => {
        const { session } = (await api(`/sessions/${id}`)) as { session: { state: string } };
        return ["completed", "error", "stopped"].includes(session.state) && session;
      });
    const d = (await ended(durable.session_id)) as { state: string };
    expect(d.state).toBe("completed");
    const p = (await ended(plain.session_id)) as { state: string; error: { message: string } };
    expect(p.state).toBe("error");
    expect(p.error.message).toBe("interrupted");
    // "one" ran once per session before the crash; only the durable session went on to "two".
    expect(readFileSync(join(work, "ran.txt"), "utf8")).toBe("one\none\ntwo\n");
    const { prints } = (await api(`/sessions/${durable.session_id}/prints`)) as {
      prints: { text: string }[];
    };
    expect(prints.map((x) => x.text)).toEqual(["first print", "done: ONE TWO"]);
  }, 120_000);
});
