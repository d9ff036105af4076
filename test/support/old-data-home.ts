import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { execa } from "execa";
import { repoRoot } from "./python.ts";

/**
 * A data home written by an older release (or, with `release`, by this one): the commit is checked out (git archive, so the
 * repository's worktrees are untouched) under `.cache/` (git-ignored), built, given a venv with
 * its own `workflow_sdk`, and run as `cli up` to leave what test/fixtures/upgrade deploys: a
 * durable session parked in next_event (its journal holding a sealed activity result and a
 * subscription), a store value and a secret var. test/fixtures/make-old-data-home.ts runs it
 * from the command line.
 */

/** main before store formats were versioned: what it writes is format 1. */
export const FORMAT_1_COMMIT = "e122539d29855f41d4e535c531cb39e5a2382088";
/** The SVC_SECRET_KEY the old data home is sealed with. */
export const PROBE_KEY = "5b1f0c3e9a7d4e2b8c6a0f1e3d5c7b9a2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c";
/** The secret var TOKEN's value; the handler prints the start of its SHA-256. */
export const PROBE_TOKEN = "old-release-token";

const FIXTURE = join(repoRoot, "test", "fixtures", "upgrade");
const CACHE = join(repoRoot, ".cache", "old-data-home");

/** What the old release left, written to `<home>/probe.json`. */
export interface OldDataHome {
  /** XDG_DATA_HOME and XDG_CONFIG_HOME live under it (`data/`, `config/`). */
  home: string;
  sessionId: string;
  /** The webhook path of the `go` trigger, that wakes the parked session. */
  goPath: string;
  /** SVC_STORAGE it ran with (none: the data home's default, LMDB). */
  storage?: string;
}

/** A port nothing listens on now (test/support/process.ts has one, but it loads vitest). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_")));

/**
 * The old release, built once per commit under `.cache/old-data-home/<commit>/` (node_modules
 * shared with this checkout when the lock files match, else `npm ci`), with a venv of its own.
 * @example const dir = await oldBuild(FORMAT_1_COMMIT); // dir/bin/cli.mjs, dir/.venv/bin/python
 */
export async function oldBuild(commit = FORMAT_1_COMMIT, log = (_: string) => {}): Promise<string> {
  const dir = join(CACHE, commit);
  if (existsSync(join(dir, ".built"))) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`checking out ${commit} into ${dir}`);
  await execa({ cwd: repoRoot, shell: true })`git archive ${commit} | tar -x -C ${dir}`;
  const lock = await execa("git", ["show", `${commit}:package-lock.json`], { cwd: repoRoot });
  if (lock.stdout.trim() === readFileSync(join(repoRoot, "package-lock.json"), "utf8").trim()) {
    symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"));
  } else {
    log("its package-lock.json differs: npm ci");
    await execa("npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir });
  }
  log("building it");
  await execa("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: dir });
  log("making its venv");
  await execa("python3", ["-m", "venv", join(dir, ".venv")]);
  await execa(join(dir, ".venv", "bin", "python"), [
    "-m",
    "pip",
    "install",
    "-q",
    "--no-index",
    "--no-build-isolation",
    "--no-deps",
    join(dir, "python-runtime"),
  ]);
  writeFileSync(join(dir, ".built"), new Date().toISOString());
  return dir;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 60_000;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`old release: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs the old release on `home` (made fresh) until the probe session is parked, then stops it
 * with SIGTERM, as an operator would before an upgrade.
 * @example const old = await makeOldDataHome({ home: "/tmp/h" });
 */
export async function makeOldDataHome(opts: {
  home: string;
  storage?: string;
  commit?: string;
  log?: (line: string) => void;
  /** Run this checkout (built) with this Python instead of the old commit. */
  release?: { dir: string; python: string };
  /** Called once the session is parked, while the service still runs. */
  whileRunning?: (env: NodeJS.ProcessEnv) => Promise<void>;
}): Promise<OldDataHome> {
  const log = opts.log ?? (() => {});
  const dir = opts.release?.dir ?? (await oldBuild(opts.commit, log));
  rmSync(opts.home, { recursive: true, force: true });
  mkdirSync(opts.home, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...cleanEnv(),
    XDG_DATA_HOME: join(opts.home, "data"),
    XDG_CONFIG_HOME: join(opts.home, "config"),
    SVC_SECRET_KEY: PROBE_KEY,
    SVC_WORKER_PYTHON: opts.release?.python ?? join(dir, ".venv", "bin", "python"),
    SVC_EVICT_AFTER: "1",
    SVC_URL: url,
    ...(opts.storage ? { SVC_STORAGE: opts.storage } : {}),
  };
  const cli = (args: string[], input?: string) =>
    execa("node", [join(dir, "bin", "cli.mjs"), ...args], { env, extendEnv: false, input });
  const up = spawn(
    "node",
    [join(dir, "bin", "cli.mjs"), "up", "--mode", "dev", "--port", String(port)],
    {
      env,
      detached: true,
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const exited = new Promise<void>((ok) => up.once("exit", () => ok()));
  try {
    await until(
      "the old release to answer /healthz",
      async () => (await fetch(`${url}/healthz`)).ok,
    );
    log("deploying the probe");
    const deployed = await cli(["deploy", "--manifest", join(FIXTURE, "manifest.yaml")]);
    const path = (name: string) =>
      new RegExp(`trigger "${name}" created, webhook path is "([^"]+)"`).exec(deployed.stdout)?.[1];
    const startPath = path("start");
    const goPath = path("go");
    if (!startPath || !goPath)
      throw new Error(`old release: no webhook paths in:\n${deployed.stdout}`);
    await cli(["var", "set", "--secret", "--env", "upgrade_probe", "TOKEN"], PROBE_TOKEN);
    const res = await fetch(`${url}${startPath}`, { method: "POST", body: "start" });
    const { session_id: sessionId } = (await res.json()) as { session_id: string };
    log(`session ${sessionId} started; waiting for it to park`);
    await until("the session to wait for go", async () => {
      const r = await fetch(`${url}/api/v1/sessions/${sessionId}/log`);
      const body = (await r.json()) as { journal?: { kind: string }[] };
      return body.journal?.some((s) => s.kind === "subscribe");
    });
    // SVC_EVICT_AFTER=1: its process is released a second into next_event.
    await new Promise((r) => setTimeout(r, 2500));
    const probe: OldDataHome = { home: opts.home, sessionId, goPath, storage: opts.storage };
    writeFileSync(join(opts.home, "probe.json"), JSON.stringify(probe, null, 2));
    await opts.whileRunning?.(env);
    return probe;
  } finally {
    if (up.exitCode === null && up.signalCode === null) process.kill(-up.pid!, "SIGTERM");
    await exited;
  }
}

/**
 * An LMDB data home of the old release, made once and kept under `.cache/old-data-home/`;
 * each caller gets a fresh copy at `home`.
 * @example const old = await oldLmdbHome("/tmp/upgrade-home");
 */
export async function oldLmdbHome(
  home: string,
  log?: (line: string) => void,
): Promise<OldDataHome> {
  const cached = join(CACHE, `${FORMAT_1_COMMIT}-lmdb-home`);
  if (!existsSync(join(cached, "probe.json"))) {
    await makeOldDataHome({ home: `${cached}.making`, log });
    rmSync(cached, { recursive: true, force: true });
    cpSync(`${cached}.making`, cached, { recursive: true });
    rmSync(`${cached}.making`, { recursive: true, force: true });
  }
  rmSync(home, { recursive: true, force: true });
  cpSync(cached, home, { recursive: true });
  const probe = JSON.parse(readFileSync(join(home, "probe.json"), "utf8")) as OldDataHome;
  return { ...probe, home };
}
