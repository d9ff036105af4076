import { HooklineError } from "../../errors.ts";
import type { BuildFiles } from "../../model/records.ts";
import type {
  PrepareSpec,
  Runtime,
  RuntimeGauges,
  SessionHost,
  SessionRun,
  SessionSpec,
} from "../runtime.ts";
import { checkBuild } from "./builds.ts";
import { limitArgs, NO_LIMITS, type ProcessLimits } from "./exits.ts";
import { ForkServer } from "./fork-server.ts";
import { createInstaller } from "./installer.ts";
import type { PipOptions } from "./pip.ts";
import { type ReuseOptions, ReusePool } from "./reuse.ts";
import { type RuntimeParts, runSession } from "./session-run.ts";
import { Slots } from "./slots.ts";
import { WarmDeployments, type WarmOptions, warmKey } from "./warm.ts";

export interface PythonRuntimeOptions {
  /** Data home: builds are materialized under `<dataHome>/builds/<id>`. */
  dataHome: string;
  /**
   * The Python executable sessions run on, resolved at the first deploy or session (the host
   * decides: `SVC_WORKER_PYTHON` checked as it is, or the emulator's venv). A failure is retried
   * at the next call: the user may have fixed it.
   */
  python: () => Promise<string>;
  /** How many sessions run at once, and how many may wait for a slot. */
  slots?: SlotLimits;
  /** How a build's requirements.txt is installed: extra `pip install` arguments, its progress. */
  pip?: PipOptions;
  /** Grace between `stop` and SIGKILL. Default 2000 ms. */
  stopGraceMs?: number;
  /** Resource limits of each session's process (see ./exits.ts). Default: none. */
  limits?: ProcessLimits;
  /** Deployment-warm fork servers (see ./warm.ts). Default: 8 kept, retired after 10 idle minutes. */
  warm?: Partial<WarmOptions>;
  /** Processes kept for triggers with `reuse_process: true` (see ./reuse.ts). */
  reuse?: Partial<ReuseOptions>;
}

/** The runtime's slots: sessions on a process at once, and sessions waiting for one. */
export interface SlotLimits {
  /** Sessions whose Python process runs at once; more wait in FIFO order. Default 32. */
  maxRunning?: number;
  /** Sessions that may wait for a slot; past that a session ends in `error` at once. Default 1000. */
  maxWaiting?: number;
  /** Told when every slot is taken, and when one is free again (the front door admits by it). */
  onFull?: (full: boolean) => void;
}

export type PythonRuntime = Runtime & {
  /** The Python executable sessions run on, resolved once. */
  python(): Promise<string>;
  /**
   * What `/metrics` shows: sessions running and waiting, the limits, warm servers, spares, idle
   * reused processes, and the sessions of `reuse_process` triggers by the process they ran on.
   */
  gauges(): RuntimeGauges;
};

/**
 * The emulator's `Runtime`: Python processes forked from a warm fork server, one per session.
 * @example
 * const runtime = createPythonRuntime({ dataHome, python: async () => "/usr/bin/python3" });
 * const run = runtime.run(spec, build, host); const end = await run.done;
 */
export function createPythonRuntime(options: PythonRuntimeOptions): PythonRuntime {
  const { dataHome } = options;
  const { maxRunning = 32, maxWaiting = 1000, onFull } = options.slots ?? {};
  const slots = new Slots(maxRunning, maxWaiting, Date.now, onFull);
  const runs = new Set<SessionRun>();
  const limits = options.limits ?? NO_LIMITS;
  const serveArgs = limitArgs(limits);
  const warm = new WarmDeployments({ max: 8, idleMs: 600_000, args: serveArgs, ...options.warm });
  const reuse = new ReusePool({ maxIdle: maxRunning, maxIdleTotal: maxRunning, ...options.reuse });
  let disposed: Promise<void> | null = null;

  const env = coldEnvironment(options.python, serveArgs, () => disposed !== null);
  const { python, forkServer } = env;
  const installer = createInstaller({ dataHome, python, ...options.pip });

  async function check(build: BuildFiles, calls: string[]): Promise<void> {
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    const dir = await installer.install(build);
    await checkBuild(await python(), dir, calls);
    installer.remember(build.id, dir);
  }

  async function prepareEnvironment(): Promise<void> {
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    await (await forkServer()).start();
  }

  async function prepare(d: PrepareSpec): Promise<void> {
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    const [dir] = await Promise.all([installer.installed(d.build), prepareEnvironment()]);
    const spec = { projectId: d.projectId, buildId: d.build.id, env: d.env, entries: d.entries };
    reuse.replaced(d.projectId, warmKey(spec)); // a new deployment: new processes
    await warm.prime(await python(), spec, dir);
  }

  const runtimeParts: RuntimeParts = {
    disposed: () => disposed !== null,
    slots,
    ready: (build) => Promise.all([installer.installed(build), forkServer()]),
    warm,
    reuse,
    python,
    limits,
    stopGraceMs: options.stopGraceMs,
  };
  function run(spec: SessionSpec, build: BuildFiles, host: SessionHost): SessionRun {
    const session = runSession(runtimeParts, spec, build, host);
    runs.add(session);
    void session.done.finally(() => runs.delete(session));
    return session;
  }

  function dispose(): Promise<void> {
    disposed ??= (async () => {
      await Promise.all([...runs].map((r) => r.stop()));
      reuse.dispose();
      await Promise.all([warm.dispose(), env.server()?.dispose()]);
    })();
    return disposed;
  }

  const gauges = () => ({
    ...{ running: slots.running, waiting: slots.waiting, maxRunning, maxWaiting },
    ...{ warmServers: warm.size, spareProcesses: (env.server()?.spares() ?? 0) + warm.spares },
    ...{ idleReusedProcesses: reuse.size, reuseSessions: reuse.sessions },
  });
  const expectedWaitMs = (held: boolean) => slots.expectedWaitMs(held);
  return { python, check, run, prepareEnvironment, prepare, expectedWaitMs, dispose, gauges };
}

/**
 * This instance's Python environment: its executable, resolved once, and the cold fork server
 * on it, made at the first need and never after the runtime is shut down.
 */
function coldEnvironment(resolve: () => Promise<string>, args: string[], disposed: () => boolean) {
  const python = resolveOnce(resolve);
  let server: ForkServer | null = null;
  const forkServer = async (): Promise<ForkServer> => {
    const exe = await python();
    // The environment may take a while to build: no server may start after dispose.
    if (disposed()) throw new HooklineError("unavailable", "the Python runtime is shut down");
    server ??= new ForkServer(exe, { args });
    return server;
  };
  return { python, forkServer, server: () => server };
}

/** `resolve` called once and its answer kept; a failure is not kept: the next call tries again. */
function resolveOnce(resolve: () => Promise<string>): () => Promise<string> {
  let resolving: Promise<string> | null = null;
  return () => {
    resolving ??= resolve().catch((e: unknown) => {
      resolving = null; // the next call tries again: the user may have fixed it
      throw e;
    });
    return resolving;
  };
}
