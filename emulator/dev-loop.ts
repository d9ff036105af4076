import { dirname } from "node:path";
import { deployProject } from "../src/cli/deploy.ts";
import { ExitError, type Io } from "../src/cli/io.ts";
import type { DeployedTrigger, DeployResult } from "../src/wire/deploy-result.ts";
import { FolderWatcher, type SerialRunner, serialRunner } from "./watch.ts";

/**
 * The lines `up --deploy` prints for triggers: each one's full webhook URL.
 * @example webhookLines("http://127.0.0.1:9980", [{ name: "hook", webhook_path: "/webhooks/f16…" }])
 * // ['webhook "hook": http://127.0.0.1:9980/webhooks/f16…']
 */
export function webhookLines(
  url: string,
  triggers: Pick<DeployedTrigger, "name" | "webhook_path">[],
): string[] {
  return triggers.map((t) => `webhook "${t.name}": ${url}${t.webhook_path}`);
}

/**
 * Lines in a box drawn around them, so that the webhook URLs, printed last at a start, cannot be
 * missed among the lines before them. Each line keeps its text: `│ <line><pad> │`.
 * @example box(['webhook "hook": http://…']) // ["╭──…──╮", '│ webhook "hook": http://… │', "╰──…──╯"]
 */
export function box(lines: string[]): string[] {
  if (lines.length === 0) return [];
  const width = Math.max(...lines.map((l) => l.length));
  return [
    `╭${"─".repeat(width + 2)}╮`,
    ...lines.map((l) => `│ ${l.padEnd(width)} │`),
    `╰${"─".repeat(width + 2)}╯`,
  ];
}

export interface DevLoopOptions {
  io: Io;
  /** The manifest, absolute; its folder is the project folder that is uploaded and watched. */
  manifest: string;
  /** The service the deploys go to (SVC_URL, SVC_API_TOKEN). */
  env: NodeJS.ProcessEnv;
  /** The service's URL, for the webhook lines. */
  url: string;
  debounceMs?: number;
}

/** At most this many changed paths are named in the "changed:" line. */
const NAMED_PATHS = 5;

function changedLine(paths: string[]): string {
  const named = paths.slice(0, NAMED_PATHS).join(", ");
  const more = paths.length > NAMED_PATHS ? ` and ${paths.length - NAMED_PATHS} more` : "";
  return `changed: ${named}${more}; redeploying`;
}

/**
 * `up --watch`: deploys the project, then redeploys it whenever a file of its folder (as a deploy
 * would upload it) or its manifest is saved. One deploy at a time; a change during a deploy
 * queues one more. A failed deploy prints its errors and changes nothing, so the last good
 * deployment keeps serving.
 * @example const loop = await DevLoop.start({ io, manifest, env, url }); …; loop.dispose();
 */
export class DevLoop {
  readonly #opts: DevLoopOptions;
  readonly #runner: SerialRunner;
  #watcher: FolderWatcher | undefined;
  #changed = new Set<string>();
  #last: DeployResult | null = null;
  #disposed = false;

  private constructor(opts: DevLoopOptions) {
    this.#opts = opts;
    this.#runner = serialRunner(
      () => this.#deploy(),
      (e) => opts.io.err(`error: ${(e as Error).message}`),
    );
  }

  /** Watches the project folder, then deploys it once; resolves after that first deploy. */
  static async start(opts: DevLoopOptions): Promise<DevLoop> {
    const loop = new DevLoop(opts);
    const root = dirname(opts.manifest);
    // Watching first: a save during the first deploy queues the next one.
    loop.#watcher = await FolderWatcher.start({
      root,
      debounceMs: opts.debounceMs,
      onChange: (paths) => loop.#onChange(paths),
      onError: (e) => opts.io.err(`watch: ${e.message}`),
    });
    // Said before the first deploy, so that its webhook URLs are the last lines of the start.
    opts.io.err(`watching ${root} for changes`);
    loop.#runner.request();
    await loop.#runner.idle();
    return loop;
  }

  /** Stops watching; a deploy under way finishes, its output dropped. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#watcher?.dispose();
  }

  #onChange(paths: string[]): void {
    if (this.#disposed) return;
    for (const p of paths) this.#changed.add(p);
    this.#runner.request();
  }

  async #deploy(): Promise<void> {
    const { io, manifest, env, url } = this.#opts;
    if (this.#disposed) return;
    const paths = [...this.#changed].sort();
    this.#changed.clear();
    if (paths.length > 0) io.err(changedLine(paths));
    const before = this.#last;
    try {
      const result = await deployProject(io, { manifest }, env);
      if (this.#disposed) return;
      // The first deploy names every webhook; later ones only the triggers they created.
      const created = new Set(
        result.exec.filter((s) => s.op === "create_trigger").map((s) => s.id),
      );
      const shown = before ? result.triggers.filter((t) => created.has(t.id)) : result.triggers;
      for (const line of box(webhookLines(url, shown))) io.out(line);
      this.#last = result;
    } catch (e) {
      if (this.#disposed) return; // stopping: the service is going away under the deploy
      // A bad manifest already printed its `file:line:` lines; other failures have one message.
      if (!(e instanceof ExitError)) io.err(`error: ${(e as Error).message}`);
      io.err(
        before
          ? `deploy failed; deployment ${before.deployment_id} keeps serving. Fix and save to try again.`
          : "deploy failed; nothing changed. Fix and save to try again.",
      );
    }
  }
}
