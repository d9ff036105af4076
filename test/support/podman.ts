import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { repoRoot } from "./python.ts";

/**
 * The image under test, built and run with Debian's podman, with the flags this kind of sandbox
 * needs (docs/operations.md#the-container):
 * - `--runtime runc`: crun refuses to start containers under hybrid cgroups (v1 with a v2 mount);
 * - `--ulimit nofile=…,nproc=…`: podman raises both rlimits past what the sandbox lets a
 *   process set, and runc then fails with "error setting rlimit type 7" (or 6);
 * - `--network host`: the only network here is loopback; the service listens on `SVC_PORT`.
 * `--format docker` at build keeps the HEALTHCHECK (the OCI format has no field for it).
 */
export const RUN_FLAGS = [
  "--runtime",
  "runc",
  "--ulimit",
  "nofile=16384:16384",
  "--ulimit",
  "nproc=16384:16384",
  "--network",
  "host",
];
export const BUILD_FLAGS = ["--format", "docker", ...RUN_FLAGS];

/**
 * The tag the suites build the checkout's Dockerfile into: one per checkout, so that suites of
 * two worktrees on one machine never run each other's image.
 */
export const IMAGE = `localhost/hookline:test-${createHash("sha256").update(repoRoot).digest("hex").slice(0, 8)}`;

/** Whether podman is on PATH. */
export async function havePodman(): Promise<boolean> {
  const r = await execa("podman", ["--version"], { reject: false });
  return r.exitCode === 0;
}

/**
 * The suites' gate, as the browser suites have one: CI (or HOOKLINE_CONTAINER_TESTS=required)
 * fails without podman; elsewhere the suite is skipped with one loud line.
 * @example const run = await containerTestsRun("container image"); describe.runIf(run)(…)
 */
export async function containerTestsRun(suite: string): Promise<boolean> {
  const required = Boolean(process.env.CI) || process.env.HOOKLINE_CONTAINER_TESTS === "required";
  if (await havePodman()) return true;
  const why = `podman is missing: install it with "apt-get install -y podman runc debootstrap"`;
  if (required) throw new Error(`the ${suite} tests must run here, but ${why}`);
  console.warn(`\n*** SKIPPING the ${suite} tests: ${why} ***\n`);
  return false;
}

/**
 * Builds the checkout's Dockerfile into {@link IMAGE}, making the base image first when no
 * registry has it (.ci/base-image). Suites that build at the same time take turns (flock): the
 * second finds every layer cached. Resolves to the build's wall time in ms.
 */
export async function buildImage(
  extra: string[] = [],
  tag = IMAGE,
  dockerfile = "Dockerfile",
): Promise<number> {
  const lock = ["flock", join(tmpdir(), "hookline-image-build.lock")];
  const base = await execa(lock[0]!, [lock[1]!, join(repoRoot, ".ci/base-image")], {
    all: true,
    reject: false,
  });
  if (base.exitCode !== 0) throw new Error(`.ci/base-image failed:\n${base.all}`);
  const started = Date.now();
  const args = [lock[1]!, "podman", "build", ...BUILD_FLAGS, "-f", dockerfile, "-t", tag];
  const r = await execa(lock[0]!, [...args, ...extra, "."], {
    cwd: repoRoot,
    all: true,
    reject: false,
  });
  if (r.exitCode !== 0) throw new Error(`podman build failed:\n${String(r.all).slice(-4000)}`);
  return Date.now() - started;
}

export interface Container {
  name: string;
  url: string;
  /** The container's output so far (stdout and stderr). */
  logs(): Promise<string>;
  /** Resolves to the exit code once the container has exited. */
  wait(): Promise<number>;
  /** `podman healthcheck run`: resolves to its exit code (0: healthy). */
  healthcheck(): Promise<number>;
  /** `podman kill --signal <sig>`. */
  signal(sig: string): Promise<void>;
  /** Removes the container, running or not; idempotent. */
  dispose(): Promise<void>;
}

/**
 * Runs `image` detached, on the host's network at `port`, with `env` and `volumes`
 * (`["name:/data"]`); not removed on exit, so that its logs and exit code can be read.
 */
export async function runContainer(o: {
  name: string;
  port: number;
  env?: Record<string, string>;
  volumes?: string[];
  image?: string;
}): Promise<Container> {
  const env = { SVC_PORT: String(o.port), SVC_PREINSTALL: "off", ...o.env };
  const args = ["run", "-d", "--name", o.name, ...RUN_FLAGS];
  for (const [k, v] of Object.entries(env)) args.push("-e", `${k}=${v}`);
  for (const v of o.volumes ?? []) args.push("-v", v);
  await execa("podman", ["rm", "-f", "-v", o.name], { reject: false });
  await execa("podman", [...args, o.image ?? IMAGE]);
  let disposed = false;
  return {
    name: o.name,
    url: `http://127.0.0.1:${o.port}`,
    logs: async () => (await execa("podman", ["logs", o.name], { all: true, reject: false })).all,
    wait: async () => Number((await execa("podman", ["wait", o.name])).stdout.trim()),
    healthcheck: async () =>
      (await execa("podman", ["healthcheck", "run", o.name], { reject: false })).exitCode ?? 1,
    signal: async (sig) => void (await execa("podman", ["kill", "--signal", sig, o.name])),
    dispose: async () => {
      if (disposed) return;
      disposed = true;
      await execa("podman", ["rm", "-f", "-v", "-t", "0", o.name], { reject: false });
    },
  };
}

/** Image facts read with `podman image inspect`: size in bytes, user, healthcheck. */
export async function inspectImage(image = IMAGE): Promise<{
  size: number;
  user: string;
  healthcheck: string[] | null;
}> {
  const { stdout } = await execa("podman", ["image", "inspect", image]);
  const [info] = JSON.parse(stdout) as {
    Size: number;
    Config: { User?: string };
    Healthcheck?: { Test?: string[] };
  }[];
  return {
    size: info!.Size,
    user: info!.Config.User ?? "",
    healthcheck: info!.Healthcheck?.Test ?? null,
  };
}

/** Runs `cmd` in a throwaway container of `image` (no entry point of the service). */
export async function runIn(cmd: string[], image = IMAGE): Promise<string> {
  const args = ["run", "--rm", "--no-healthcheck", ...RUN_FLAGS, image, ...cmd];
  return (await execa("podman", args)).stdout;
}

/**
 * Resolves to the ms from `since` until `<url>/readyz` answers 200; throws with the container's
 * output as soon as it has exited (a service that cannot start), or past `ms`.
 */
export async function waitReady(c: Container, since: number, ms = 60_000): Promise<number> {
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    if ((await fetch(`${c.url}/readyz`).catch(() => null))?.status === 200) {
      return Date.now() - since;
    }
    await new Promise((r) => setTimeout(r, 20));
    // `podman inspect` costs a CPU-tenth of a second: ask every half second, not every poll.
    if (i % 25 !== 24) continue;
    const state = await execa("podman", ["inspect", "-f", "{{.State.Running}}", c.name], {
      reject: false,
    });
    if (state.stdout.trim() === "false") {
      throw new Error(`container ${c.name} exited before it was ready:\n${await c.logs()}`);
    }
  }
  throw new Error(`container ${c.name} not ready within ${ms} ms:\n${await c.logs()}`);
}
