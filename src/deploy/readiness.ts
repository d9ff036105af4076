import type { Logger } from "../log.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { SecretBox } from "../secrets.ts";
import { sessionEnv } from "../sessions/session-env.ts";
import type { Stores } from "../storage/records.ts";

export interface ReadinessOptions {
  stores: Stores;
  runtime: Runtime;
  secrets: SecretBox;
  log: Logger;
}

/**
 * Whether this instance can take sessions without building anything first, for `/readyz`.
 * @example const ready = createReadiness({ stores, runtime, secrets, log }); void ready.start();
 */
export interface Readiness {
  /** Null when ready; else why not, in a few words. */
  reason(): string | null;
  /**
   * Prepares the Python environment and every active deployment; the instance is ready once
   * that is done. A failure of the environment leaves it not ready, and the next `reason()`
   * tries again; a deployment that fails to prepare is logged and does not hold readiness
   * (its sessions report the cause). Idempotent while a start is under way.
   */
  start(): Promise<void>;
  /**
   * A deploy or var change of a project, made here or announced by another instance: prepares
   * its active deployment in the background. Readiness does not drop meanwhile (a router would
   * otherwise drain every instance at each deploy); its sessions wait for the same work.
   */
  project(projectId: string): void;
  /** Resolves once no preparation is under way. */
  idle(): Promise<void>;
}

/** Projects prepared at once after changes. */
const MAX_PENDING = 64;

export function createReadiness(opts: ReadinessOptions): Readiness {
  const { stores, runtime, log } = opts;
  let state: "new" | "starting" | "ready" | "failed" = runtime.prepareEnvironment ? "new" : "ready";
  let failure = "";
  let starting: Promise<void> | null = null;
  const running = new Set<Promise<void>>();
  /** Projects being prepared; `again`: changed meanwhile, prepare once more after. */
  const preparing = new Map<string, { again: boolean }>();

  const track = (work: Promise<void>) => {
    running.add(work);
    void work.finally(() => running.delete(work));
    return work;
  };

  function start(): Promise<void> {
    if (state === "ready" || !runtime.prepareEnvironment) return Promise.resolve();
    starting ??= track(
      (async () => {
        state = "starting";
        try {
          await runtime.prepareEnvironment!();
          const projects = await stores.projects.list();
          const active = projects.filter((p) => p.project.active_deployment_id);
          await Promise.all(active.map((p) => prepareLogged(opts, p.project.id)));
          state = "ready";
        } catch (e) {
          state = "failed";
          failure = `not ready: ${e instanceof Error ? e.message : e}`;
          log.error(failure);
        }
      })().finally(() => {
        starting = null;
      }),
    );
    return starting;
  }

  return {
    reason() {
      if (state === "ready") return null;
      if (state === "failed") {
        void start(); // the cause may be fixed by now
        return failure;
      }
      return "preparing the Python environment and the active deployments";
    },
    start,
    project(projectId) {
      if (!runtime.prepare) return;
      const current = preparing.get(projectId);
      if (current) {
        current.again = true;
        return;
      }
      // Past the bound a deployment is not prepared ahead: its first session prepares it.
      if (preparing.size >= MAX_PENDING) return;
      const entry = { again: false };
      preparing.set(projectId, entry);
      void track(
        (async () => {
          do {
            entry.again = false;
            // Reads the project when it runs: the latest active deployment is the one prepared.
            await prepareLogged(opts, projectId);
          } while (entry.again);
          preparing.delete(projectId);
        })(),
      );
    },
    async idle() {
      while (running.size) await Promise.all([...running]);
    },
  };
}

/** Prepares a project's active deployment (its build, environment and entry points), if any. */
async function prepareProject(opts: ReadinessOptions, projectId: string): Promise<void> {
  const { stores, runtime } = opts;
  if (!runtime.prepare) return;
  const doc = await stores.projects.get(projectId);
  const deploymentId = doc?.project.active_deployment_id;
  if (!doc || !deploymentId) return;
  const deployment = await stores.deployments.get(deploymentId);
  const build = deployment && (await stores.builds.get(deployment.build_id));
  if (!build) return;
  const entries = doc.triggers.flatMap((t) => (t.call ? [t.call] : []));
  const { env } = sessionEnv(doc, opts.secrets);
  await runtime.prepare({
    projectId,
    build: { id: build.id, files: build.files },
    env,
    entries,
  });
}

/** A deployment that fails to prepare is logged: it does not hold readiness. */
async function prepareLogged(opts: ReadinessOptions, projectId: string): Promise<void> {
  try {
    await prepareProject(opts, projectId);
  } catch (e) {
    opts.log.warn(`project ${projectId}: not prepared: ${e instanceof Error ? e.message : e}`);
  }
}
