import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Emulator } from "../emulator/start.ts";
import { dropPostgresTestTables, fleetStores, warnIfNoFleet } from "./support/postgres.ts";
import { testPython } from "./support/python.ts";
import { startQuietEmulator } from "./support/quiet-emulator.ts";

/**
 * A project's requirements.txt is really pip-installed: on the instance that deploys (the
 * deploy's check) and on another instance that runs its sessions (prepared there, never
 * checked). Each instance makes its own venv in its data home, as `cli up` does; the one
 * requirement is a wheel made here, named by its path, so no index is needed and nothing else
 * could have put the package there.
 */
process.env.SVC_SECRET_KEY = "00".repeat(32);
const shared = warnIfNoFleet("the second instance of the requirements.txt test");
const { storage, redisUrl } = fleetStores();
afterAll(dropPostgresTestTables);
const PACKAGE = "hookline_probe";
const VALUE = randomBytes(8).toString("hex");

/** A pure-Python wheel of one module whose VALUE is `value`, written with the standard library. */
const MAKE_WHEEL = `
import base64, hashlib, sys, zipfile
out, name, value = sys.argv[1:4]
dist = f"{name}-1.0.dist-info"
files = {
    f"{name}/__init__.py": f"VALUE = {value!r}\\n",
    f"{dist}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n",
    f"{dist}/WHEEL": "Wheel-Version: 1.0\\nGenerator: hookline-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
def digest(text):
    raw = hashlib.sha256(text.encode()).digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
record = "".join(f"{p},{digest(t)},{len(t.encode())}\\n" for p, t in files.items()) + f"{dist}/RECORD,,\\n"
with zipfile.ZipFile(out, "w") as z:
    for p, t in {**files, f"{dist}/RECORD": record}.items():
        z.writestr(p, t)
`;

const manifest = (project: string) => `version: v2
project:
  name: ${project}
triggers:
  - name: probe
    type: webhook
    call: handlers.py:probe
    is_sync: true
`;
/** A handler that answers the VALUE of module `pkg`, imported when the session runs. */
const handler = (pkg: string) => `import workflow_sdk


def probe(event):
    import ${pkg}

    workflow_sdk.http_outcome(200, ${pkg}.VALUE)
`;

const b64 = (s: string) => Buffer.from(s).toString("base64");

async function whenReady(url: string): Promise<void> {
  for (let i = 0; i < 1800; i++) {
    if ((await fetch(`${url}/readyz`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never became ready`);
}

/** What the deployed trigger answers on `url`'s instance (its last sync request). */
async function answer(url: string, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url + path, { method: "POST" });
  return { status: res.status, text: await res.text() };
}

describe("a project's requirements.txt", () => {
  const started: { emulator: Emulator; dataHome: string }[] = [];
  const wheelDir = mkdtempSync(join(tmpdir(), "hookline-wheel-"));
  const wheel = join(wheelDir, `${PACKAGE}-1.0-py3-none-any.whl`);

  beforeAll(async () => {
    const python = await testPython();
    await execa(python, ["-c", MAKE_WHEEL, wheel, PACKAGE, VALUE]);
    // workerPython unset: each instance builds a venv in its own data home.
    const flags = {
      storage,
      redisUrl,
      leaseMs: 1500,
      workerPython: undefined,
      syncTimeoutMs: 20_000,
    };
    const count = shared ? 2 : 1;
    for (let i = 0; i < count; i++) {
      started.push(await startQuietEmulator(python, flags, "hookline-req-"));
    }
    for (const s of started) await whenReady(s.emulator.url);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(started.map((s) => s.emulator.close()));
    for (const s of started) rmSync(s.dataHome, { recursive: true, force: true });
    rmSync(wheelDir, { recursive: true, force: true });
  }, 60_000);

  /** Whether the instance's own venv imports `module`. */
  const imports = async (dataHome: string, module = PACKAGE) =>
    (
      await execa(join(dataHome, "venv", "bin", "python"), ["-c", `import ${module}`], {
        reject: false,
      })
    ).exitCode === 0;

  /** Deploys project `name` on `url` with these requirements; the path of its webhook. */
  async function deploy(url: string, name: string, pkg: string, requirements: string) {
    const res = await fetch(`${url}/api/v1/deploy`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        manifest: manifest(name),
        manifest_file: "manifest.yaml",
        files: { "handlers.py": b64(handler(pkg)), "requirements.txt": b64(requirements) },
      }),
    });
    expect(res.status).toBe(200);
    const { triggers } = (await (await fetch(`${url}/api/v1/triggers?project=${name}`)).json()) as {
      triggers: { webhook_path: string }[];
    };
    return triggers[0]!.webhook_path;
  }

  it("is installed by the deploy on its instance, and by every other instance before it runs a session", async () => {
    for (const s of started) {
      expect(await imports(s.dataHome, "workflow_sdk")).toBe(true);
      expect(await imports(s.dataHome)).toBe(false);
    }
    const [a, b] = started;
    const path = await deploy(a!.emulator.url, "needs_probe", PACKAGE, `${wheel}\n`);
    expect(
      await imports(a!.dataHome),
      "the deploy pip-installed requirements.txt into its instance's venv",
    ).toBe(true);
    expect(await answer(a!.emulator.url, path), "a session imports the package").toEqual({
      status: 200,
      text: VALUE,
    });
    if (!b) return;
    // B never checked the build: it installs the requirements before its first session.
    await whenReady(b.emulator.url);
    expect(await imports(b.dataHome), "B has not installed before a session asks").toBe(false);
    expect(
      await answer(b.emulator.url, path),
      "B pip-installed requirements.txt before its first session of the build",
    ).toEqual({ status: 200, text: VALUE });
    expect(await imports(b.dataHome), "B's venv has the package").toBe(true);
  }, 180_000);

  it("leaves out the lines naming the service's own SDK on every instance, not only at the deploy's check", async () => {
    const [a, b] = started;
    const pkg = `${PACKAGE}_own`;
    const own = join(wheelDir, `${pkg}-1.0-py3-none-any.whl`);
    await execa(join(a!.dataHome, "venv", "bin", "python"), ["-c", MAKE_WHEEL, own, pkg, VALUE]);
    // A version no index has: pip would fail wherever this line reached it.
    const path = await deploy(a!.emulator.url, "own_sdk", pkg, `workflow_sdk==99.0.0\n${own}\n`);
    expect(await imports(a!.dataHome, pkg), "the deploy installed the other line").toBe(true);
    expect(await answer(a!.emulator.url, path), "a session imports it").toEqual({
      status: 200,
      text: VALUE,
    });
    if (!b) return;
    await whenReady(b.emulator.url);
    expect(
      await answer(b.emulator.url, path),
      "B installed the other line before its session",
    ).toEqual({ status: 200, text: VALUE });
    expect(await imports(b.dataHome, pkg)).toBe(true);
  }, 180_000);
});
