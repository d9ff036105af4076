import { HooklineError } from "../../errors.ts";
import type { BuildFiles, SessionEnd } from "../../model/records.ts";
import type { PrepareSpec, Runtime, SessionHost, SessionRun, SessionSpec } from "../runtime.ts";
import { checkBuild, materializeBuild } from "./builds.ts";
import { describeExit, limitArgs, NO_LIMITS, type SessionLimits } from "./exits.ts";
import { ForkServer } from "./fork-server.ts";
import { installRequirements } from "./pip.ts";
import { SessionChannel } from "./session-channel.ts";
import { Slots } from "./slots.ts";
import { WarmDeployments, type WarmOptions } from "./warm.ts";

export interface PythonRuntimeOptions {
  /** Data home: builds are materialized under `<dataHome>/builds/<id>`. */
  dataHome: string;
  /**
   * The Python executable sessions run on, resolved at the first deploy or session (the host
   * decides: `SVC_WORKER_PYTHON` checked as it is, or the emulator's venv). A failure is retried
   * at the next call: the user may have fixed it.
   */
  python: () => Promise<string>;
  /** Sessions whose Python process runs at once; more wait in FIFO order. Default 32. */
  maxSessions?: number;
  /** Sessions that may wait for a slot; past that a session ends in `error` at once. Default 1000. */
  maxWaiting?: number;
  /** Progress of slow steps (pip): one line a call. */
  onProgress?: (line: string) => void;
  /** Extra `pip install` arguments for requirements.txt (an index URL, say). */
  pipArgs?: string[];
  /** Grace between `stop` and SIGKILL. Default 2000 ms. */
  stopGraceMs?: number;
  /** Resource limits of each session's process (see ./exits.ts). Default: none. */
  limits?: SessionLimits;
  /** Deployment-warm fork servers (see ./warm.ts). Default: 8 kept, retired after 10 idle minutes. */
  warm?: Partial<WarmOptions>;
}

/** Builds remembered as installed; an older one forgotten is installed again if it comes back. */
const MAX_INSTALLED = 64;

export type PythonRuntime = Runtime & {
  /** The Python executable sessions run on, resolved once. */
  python(): Promise<string>;
  /** What `/metrics` shows: sessions running and waiting, the limits, warm servers, spares. */
  gauges(): {
    running: number;
    waiting: number;
    maxRunning: number;
    maxWaiting: number;
    warmServers: number;
    spareProcesses: number;
  };
};

/**
 * The emulator's `Runtime`: Python processes forked from a warm fork server, one per session.
 * @example
 * const runtime = createPythonRuntime({ dataHome, python: async () => "/usr/bin/python3" });
 * const run = runtime.run(spec, build, host); const end = await run.done;
 */
export function createPythonRuntime(options: PythonRuntimeOptions): PythonRuntime {
  const { dataHome } = options;
  const maxRunning = options.maxSessions ?? 32;
  const maxWaiting = options.maxWaiting ?? 1000;
  const slots = new Slots(maxRunning, maxWaiting);
  const runs = new Set<SessionRun>();
  let resolving: Promise<string> | null = null;
  let server: ForkServer | null = null;
  const limits = options.limits ?? NO_LIMITS;
  const serveArgs = limitArgs(limits);
  const warm = new WarmDeployments({ max: 8, idleMs: 600_000, args: serveArgs, ...options.warm });
  let pipQueue: Promise<unknown> = Promise.resolve();
  const builds = new Map<string, Promise<string>>();
  let disposed: Promise<void> | null = null;

  const python = (): Promise<string> => {
    resolving ??= options.python().catch((e: unknown) => {
      resolving = null; // the next call tries again: the user may have fixed it
      throw e;
    });
    return resolving;
  };

  const forkServer = async (): Promise<ForkServer> => {
    const exe = await python();
    // The environment may take a while to build: no server may start after dispose.
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    server ??= new ForkServer(exe, { args: serveArgs });
    return server;
  };

  /** Materializes a build and installs its requirements.txt into this instance's environment. */
  async function install(build: BuildFiles): Promise<string> {
    const exe = await python();
    const dir = await materializeBuild(dataHome, build);
    const requirements = build.files["requirements.txt"];
    if (requirements !== undefined) {
      const text = Buffer.from(requirements, "base64").toString("utf8");
      // One pip at a time per environment: two deploys must not install into it at once.
      const install = pipQueue.then(() =>
        installRequirements(exe, text, {
          pipArgs: options.pipArgs,
          onProgress: options.onProgress,
        }),
      );
      pipQueue = install.catch(() => {});
      await install;
    }
    return dir;
  }

  /**
   * A build's folder once it is installed here, done once per build: a deploy made on another
   * instance installed its requirements there, not into this instance's environment.
   */
  function installed(build: BuildFiles): Promise<string> {
    let done = builds.get(build.id);
    if (!done) {
      done = install(build);
      done.catch(() => builds.delete(build.id)); // retried by the next session or prepare
      if (builds.size >= MAX_INSTALLED) builds.delete(builds.keys().next().value!);
      builds.set(build.id, done);
    }
    return done;
  }

  async function check(build: BuildFiles, calls: string[]): Promise<void> {
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    const dir = await install(build);
    await checkBuild(await python(), dir, calls);
    builds.set(build.id, Promise.resolve(dir));
  }

  async function prepareEnvironment(): Promise<void> {
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    await (await forkServer()).start();
  }

  async function prepare(d: PrepareSpec): Promise<void> {
    if (disposed) throw new HooklineError("unavailable", "the Python runtime is shut down");
    const [dir] = await Promise.all([installed(d.build), prepareEnvironment()]);
    const spec = { projectId: d.projectId, buildId: d.build.id, env: d.env, entries: d.entries };
    await warm.prime(await python(), spec, dir);
  }

  function run(spec: SessionSpec, build: BuildFiles, host: SessionHost): SessionRun {
    const abort = new AbortController();
    let channel: SessionChannel | null = null;
    const done = (async (): Promise<SessionEnd> => {
      if (disposed) return { state: "error", message: "the Python runtime is shut down" };
      let release: (() => void) | null = null;
      try {
        release = await slots.acquire(abort.signal);
        const [dir, cold] = await Promise.all([installed(build), forkServer()]);
        if (abort.signal.aborted) return { state: "stopped" };
        for (let attempt = 0; ; attempt++) {
          const { socket, from } = await connect(cold, spec, dir);
          if (abort.signal.aborted) {
            socket.destroy(); // the child sees EOF before `start` and exits
            return { state: "stopped" };
          }
          let reported = false;
          channel = new SessionChannel(socket, spec, dir, host, {
            stopGraceMs: options.stopGraceMs,
            announceStart: attempt === 0,
            // The socket's close may come just before the server's report of the exit.
            exitEnd: async (pid) => {
              const exit = await from.exitOf(pid, 1000);
              reported = exit !== null;
              return exit && describeExit(pid, exit, limits);
            },
          });
          const end = await channel.done;
          // A process made ahead that died with its server (a warm server killed, say) before it
          // said a word: no server reported its exit, and the session never began, so it begins
          // again on a live server (the next process made ahead may be a spare of the same dead
          // server: a few tries). A process that dies by itself is reported by its server.
          const diedWithServer = end.state === "crashed" && !channel.heard && !reported;
          if (!diedWithServer || attempt >= 2 || abort.signal.aborted) return end;
          if (from !== cold) warm.forget(from);
        }
      } catch (e) {
        if (abort.signal.aborted) return { state: "stopped" };
        return { state: "error", message: e instanceof Error ? e.message : String(e) };
      } finally {
        release?.();
      }
    })();
    const session: SessionRun = {
      done,
      async stop() {
        abort.abort(new HooklineError("unavailable", "stopped"));
        await channel?.stop();
        await done;
      },
    };
    runs.add(session);
    void done.finally(() => runs.delete(session));
    return session;
  }

  /** A child of the deployment's warm server when it is ready, else of the cold server. */
  async function connect(cold: ForkServer, spec: SessionSpec, dir: string) {
    const hot = warm.serverFor(await python(), spec, dir);
    if (hot) {
      try {
        return { socket: await hot.connect(), from: hot };
      } catch {
        warm.forget(hot); // it died: this session runs cold, the next starts a new one
      }
    }
    return { socket: await cold.connect(), from: cold };
  }

  function dispose(): Promise<void> {
    disposed ??= (async () => {
      await Promise.all([...runs].map((r) => r.stop()));
      await Promise.all([warm.dispose(), server?.dispose()]);
    })();
    return disposed;
  }

  const gauges = () => ({
    ...{ running: slots.running, waiting: slots.waiting, maxRunning, maxWaiting },
    ...{ warmServers: warm.size, spareProcesses: (server?.spares() ?? 0) + warm.spares },
  });
  return { python, check, run, prepareEnvironment, prepare, dispose, gauges };
}
