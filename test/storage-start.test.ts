import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { startEmulator } from "../emulator/start.ts";
import { resolveSettings } from "../src/config.ts";
import { newId } from "../src/ids.ts";
import { deployFolder } from "./support/process.ts";
import { repoRoot, testPython } from "./support/python.ts";
import { sessionRecord } from "./support/records.ts";

/**
 * A data home written by the fs driver (the default before LMDB) keeps working: the next start
 * without SVC_STORAGE detects it, uses it with the fs driver, says so in one line, and makes no
 * LMDB store beside it.
 */
describe("a data home written by the fs driver", () => {
  const dataHome = mkdtempSync(join(tmpdir(), "hookline-fshome-"));
  afterAll(() => rmSync(dataHome, { recursive: true, force: true }));

  it("is detected and used as it is, with a notice", async () => {
    const python = await testPython();
    const flags = {
      mode: "dev" as const,
      port: 0,
      dataHome,
      configHome: join(dataHome, "config"),
      workerPython: python,
    };
    const fsUrl = `fs:${join(dataHome, "store")}`;
    const first = await startEmulator(resolveSettings({ ...flags, storage: fsUrl }, {}), {
      log: () => {},
    });
    const res = await deployFolder(first.url, join(import.meta.dirname, "fixtures", "cli-v1"));
    expect(res.status).toBe(200);
    const before = (await (await fetch(`${first.url}/api/v1/projects`)).json()) as {
      projects: { id: string; name: string }[];
    };
    await first.close();
    // A session indexed as the fs driver wrote it before states were part of the index key,
    // in a store of the format before the one that rewrites such entries (3).
    writeFileSync(join(dataHome, "store", "meta", "format-version"), "2");
    const project = before.projects[0]!;
    const old = sessionRecord({ id: newId("ses"), project_id: project.id, state: "completed" });
    mkdirSync(join(dataHome, "store", "session-index", project.id), { recursive: true });
    mkdirSync(join(dataHome, "store", "sessions"), { recursive: true });
    writeFileSync(join(dataHome, "store", "session-index", project.id, old.id), "completed");
    writeFileSync(join(dataHome, "store", "sessions", old.id), JSON.stringify(old));

    const settings = resolveSettings(flags, {});
    expect(settings.storage).toBe(fsUrl);
    const lines: string[] = [];
    const again = await startEmulator(settings, { log: (l) => lines.push(l) });
    try {
      const notices = lines.filter((l) => l.includes("fs (detected existing data)"));
      expect(notices).toHaveLength(1);
      expect(notices[0]).toContain(join(dataHome, "store"));
      const { projects } = (await (await fetch(`${again.url}/api/v1/projects`)).json()) as {
        projects: { name: string }[];
      };
      expect(projects.length).toBe(1);
      expect(lines.some((l) => l.includes("storage: format 2 upgraded to 3"))).toBe(true);
      const listed = (await (
        await fetch(`${again.url}/api/v1/sessions?project=${project.name}&state=completed`)
      ).json()) as { sessions: { id: string }[] };
      expect(listed.sessions.map((x) => x.id)).toEqual([old.id]);
      expect(existsSync(join(dataHome, "db"))).toBe(false);
    } finally {
      await again.close();
    }
  }, 120_000);
});

describe("a storage URL the service does not support", () => {
  it("is refused at start with one error line naming the supported ones", async () => {
    const home = mkdtempSync(join(tmpdir(), "hookline-badstore-"));
    try {
      for (const url of ["mysql://u@127.0.0.1/db", "foo:bar"]) {
        const r = await execa("node", [join(repoRoot, "bin/cli.mjs"), "up", "--port", "0"], {
          env: { XDG_DATA_HOME: home, XDG_CONFIG_HOME: home, SVC_STORAGE: url },
          reject: false,
          timeout: 30_000,
        });
        expect(r.exitCode).toBe(1);
        expect(r.stderr.trim().split("\n")).toEqual([
          `error: SVC_STORAGE: unsupported storage "${url}"; supported: lmdb:<dir>[?sync=normal|meta|full], fs:<dir>, memory:, redis://…, postgres://…`,
        ]);
      }
      // Nothing was made: no folder named after the URL, no store.
      expect(existsSync(join(home, "hookline", "db"))).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});
