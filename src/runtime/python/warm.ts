import { createHash } from "node:crypto";
import type { SessionSpec } from "../runtime.ts";
import { ForkServer } from "./fork-server.ts";
import { serverEnv } from "./serve-process.ts";

/** A var that turns deployment-warm imports off for a project (`"0"` or `"false"`). */
export const WARM_OPT_OUT = "HOOKLINE_WARM_IMPORT";

export interface WarmOptions {
  /** Warm deployments kept at once; the least recently used is retired past it. 0: none. */
  max: number;
  /** A warm deployment unused this long is retired. */
  idleMs: number;
  /** More `serve` arguments of every warm server (the session limits). */
  args?: string[];
}

interface Warm {
  projectId: string;
  server: ForkServer;
  /** Settles (never rejects) once the server is ready or has failed. */
  started: Promise<void>;
  ready: boolean;
  failed: boolean;
  lastUsed: number;
}

/** `handlers.py` → `handlers`, `pkg/mod.py` → `pkg.mod` (as the runner names modules). */
export function entryModule(entry: string): string {
  const file = entry.slice(0, entry.lastIndexOf(":"));
  const parts = file.slice(0, -3).split("/");
  if (parts.length > 1 && parts.at(-1) === "__init__") parts.pop();
  return parts.join(".");
}

/** A project may turn warm imports off with a var. */
function optedOut(env: Record<string, string>): boolean {
  const value = env[WARM_OPT_OUT]?.toLowerCase();
  return value === "0" || value === "false";
}

/** One key per deployment build and vars: a var or secret change makes a new one. */
export function warmKey(spec: Pick<SessionSpec, "buildId" | "env">): string {
  // TRACEPARENT differs per session (tracing on); the child sets it, the import never sees it.
  const env = Object.entries(spec.env)
    .filter(([k]) => k !== "TRACEPARENT")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = createHash("sha256").update(JSON.stringify(env)).digest("hex").slice(0, 16);
  return `${spec.buildId}:${hash}`;
}

/**
 * Deployment-warm fork servers: per active deployment (build and vars), a fork server that has
 * imported the project's entry module with the vars in its environment, so a session's child
 * skips both the fork of a cold server's child and the import. The first session of a
 * deployment runs cold and starts its warm server; a new build or new vars of a project retire
 * the project's older warm servers (their running sessions finish); idle ones are retired.
 * @example const warm = new WarmDeployments({ max: 8, idleMs: 600_000 });
 * const server = warm.serverFor(python, spec, "/data/builds/bld_1") ?? coldServer;
 */
export class WarmDeployments {
  readonly #options: WarmOptions;
  readonly #warm = new Map<string, Warm>();
  readonly #retired = new Set<ForkServer>();
  #sweeper: NodeJS.Timeout | null = null;
  #disposed = false;

  constructor(options: WarmOptions) {
    this.#options = options;
  }

  /** Warm deployments kept now (starting or ready). */
  get size(): number {
    return this.#warm.size;
  }

  /** Processes the warm servers made ahead for their next sessions. */
  get spares(): number {
    let n = 0;
    for (const w of this.#warm.values()) n += w.server.spares();
    return n;
  }

  /**
   * The ready warm server of this session's deployment, or null: the session then runs on the
   * cold server, and a warm one is started for the next when there is none yet. Resumed durable
   * sessions and projects that opt out always run cold.
   */
  serverFor(python: string, spec: SessionSpec, projectDir: string): ForkServer | null {
    if (this.#disposed || this.#options.max <= 0 || spec.journal.length > 0) return null;
    if (optedOut(spec.env)) return null;
    const key = warmKey(spec);
    const warm = this.#warm.get(key);
    if (warm) {
      warm.lastUsed = Date.now();
      return warm.ready ? warm.server : null;
    }
    this.#begin(key, python, spec, entryModule(spec.entry), projectDir);
    return null;
  }

  /** Whether this session's deployment has a warm server, ready or starting (one that failed: no). */
  has(spec: SessionSpec): boolean {
    const warm = this.#warm.get(warmKey(spec));
    return warm !== undefined && !warm.failed;
  }

  /**
   * Starts the warm server of a deployment before its first session (an instance getting
   * ready, a deploy made elsewhere), importing the modules of all its `entries`; resolves once
   * it is ready or has failed (its sessions then run cold, as without one).
   * @example await warm.prime(python, { projectId, buildId, env, entries: ["handlers.py:on"] }, dir);
   */
  async prime(
    python: string,
    d: Pick<SessionSpec, "projectId" | "buildId" | "env"> & { entries: string[] },
    projectDir: string,
  ): Promise<void> {
    if (this.#disposed || this.#options.max <= 0 || optedOut(d.env) || !d.entries.length) return;
    const key = warmKey(d);
    const modules = [...new Set(d.entries.map(entryModule))].join(",");
    const warm = this.#warm.get(key) ?? this.#begin(key, python, d, modules, projectDir);
    warm.lastUsed = Date.now();
    await warm.started;
  }

  /** The warm server of `spec` died or refused: forget it, so the next session starts another. */
  forget(server: ForkServer): void {
    for (const [key, warm] of this.#warm) {
      if (warm.server === server) {
        this.#warm.delete(key);
        void server.dispose();
      }
    }
  }

  #begin(
    key: string,
    python: string,
    spec: Pick<SessionSpec, "projectId" | "env">,
    modules: string,
    projectDir: string,
  ): Warm {
    for (const [other, warm] of this.#warm) {
      // A newer deployment or new vars of the same project: the old server takes no more.
      if (warm.projectId === spec.projectId) this.#retire(other, warm);
    }
    while (this.#warm.size >= this.#options.max) {
      const [oldest, warm] = [...this.#warm].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0]!;
      this.#retire(oldest, warm);
    }
    const server = new ForkServer(python, {
      env: { ...serverEnv(process.env), ...spec.env, TRACEPARENT: undefined },
      args: ["--warm-dir", projectDir, "--warm-modules", modules, ...(this.#options.args ?? [])],
    });
    const warm: Warm = {
      projectId: spec.projectId,
      server,
      started: Promise.resolve(),
      ready: false,
      failed: false,
      lastUsed: Date.now(),
    };
    this.#warm.set(key, warm);
    warm.started = server.start().then(
      () => {
        warm.ready = true;
      },
      () => {
        // The import fails or the server cannot start: sessions run cold and report the
        // import's error themselves, as without warm servers. Kept, so it is not retried.
        warm.failed = true;
        void server.dispose();
      },
    );
    this.#sweep();
    return warm;
  }

  #retire(key: string, warm: Warm) {
    this.#warm.delete(key);
    this.#retired.add(warm.server);
    void warm.server.retire();
  }

  #sweep() {
    if (this.#sweeper) return;
    const every = Math.max(1000, Math.min(60_000, this.#options.idleMs / 2));
    this.#sweeper = setInterval(() => {
      const now = Date.now();
      for (const [key, warm] of this.#warm) {
        if (now - warm.lastUsed > this.#options.idleMs) this.#retire(key, warm);
      }
      for (const server of this.#retired) {
        if (server.pid !== undefined) continue;
        // Exited once its last session ended: remove its socket folder.
        this.#retired.delete(server);
        void server.dispose();
      }
    }, every);
    this.#sweeper.unref();
  }

  /** Ends every warm server, retired ones included, with their sessions. Idempotent. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    const servers = [...[...this.#warm.values()].map((w) => w.server), ...this.#retired];
    this.#warm.clear();
    this.#retired.clear();
    await Promise.all(servers.map((s) => s.dispose()));
  }
}
