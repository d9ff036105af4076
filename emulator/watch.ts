import { type FSWatcher, watch } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { isSkippedName } from "../src/cli/files.ts";

// The dev loop's file watcher (`cli up --watch`, `cli dev`). It watches each folder of the project
// itself rather than with `fs.watch(root, { recursive: true })`: on Linux Node's recursive mode
// puts an inotify watch on every folder underneath, `.venv` and `node_modules` included, which a
// deploy never uploads; it skips what a deploy skips (`isSkippedName`).

/** The most folders one watcher watches: every watch costs a file descriptor (an inotify watch). */
export const MAX_WATCHED_DIRS = 2000;
/** The most changed paths kept for one call of `onChange`; more are counted, not listed. */
const MAX_PATHS = 100;

export interface WatchOptions {
  /** The project folder. */
  root: string;
  /** Called `debounceMs` after the last change of a burst, with the changed paths (relative, `/`). */
  onChange: (paths: string[]) => void;
  debounceMs?: number;
  /** A folder could not be watched (it is reported once; the others keep being watched). */
  onError?: (error: Error) => void;
}

/**
 * Watches a project folder and its subfolders (but skipped ones) and reports each burst of saved
 * changes once, `debounceMs` (150) after the last. Start with {@link FolderWatcher.start}.
 * @example const w = await FolderWatcher.start({ root: "demo", onChange: (p) => redeploy(p) });
 * await w.dispose();
 */
export class FolderWatcher {
  readonly #root: string;
  readonly #onChange: (paths: string[]) => void;
  readonly #onError: (error: Error) => void;
  readonly #debounceMs: number;
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #changed = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #disposed = false;
  #warnedFull = false;

  private constructor(opts: WatchOptions) {
    this.#root = opts.root;
    this.#onChange = opts.onChange;
    this.#onError = opts.onError ?? (() => {});
    this.#debounceMs = opts.debounceMs ?? 150;
  }

  /** Starts watching; resolves once every folder present now is watched. */
  static async start(opts: WatchOptions): Promise<FolderWatcher> {
    const watcher = new FolderWatcher(opts);
    await watcher.#add(opts.root);
    return watcher;
  }

  /** Stops watching; pending changes are dropped. Safe to call more than once. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    clearTimeout(this.#timer);
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }

  async #add(dir: string): Promise<void> {
    if (this.#disposed || this.#watchers.has(dir)) return;
    if (this.#watchers.size >= MAX_WATCHED_DIRS) {
      if (!this.#warnedFull) {
        this.#warnedFull = true;
        this.#onError(
          new Error(`more than ${MAX_WATCHED_DIRS} folders: changes under ${dir} are not watched`),
        );
      }
      return;
    }
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: true }, (_event, name) => this.#event(dir, name?.toString()));
    } catch (e) {
      this.#onError(new Error(`cannot watch ${dir}: ${(e as Error).message}`));
      return;
    }
    // A folder deleted under us ends its watch with an error on some kernels: drop it quietly.
    w.on("error", () => this.#drop(dir));
    this.#watchers.set(dir, w);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory() && !isSkippedName(entry.name)) await this.#add(join(dir, entry.name));
    }
  }

  #drop(dir: string): void {
    for (const [path, w] of this.#watchers) {
      if (path === dir || path.startsWith(dir + sep)) {
        w.close();
        this.#watchers.delete(path);
      }
    }
  }

  #event(dir: string, name: string | undefined): void {
    if (this.#disposed) return;
    if (name !== undefined && isSkippedName(name)) return;
    const path = name === undefined ? dir : join(dir, name);
    if (name !== undefined) {
      // A folder that appeared is watched from now on; one that went is forgotten.
      void stat(path).then(
        (info) => {
          if (info.isDirectory()) void this.#add(path);
        },
        () => this.#drop(path),
      );
    }
    if (this.#changed.size < MAX_PATHS) {
      this.#changed.add(relative(this.#root, path).split(sep).join("/") || ".");
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#flush(), this.#debounceMs);
  }

  #flush(): void {
    if (this.#disposed) return;
    const paths = [...this.#changed].sort();
    this.#changed.clear();
    this.#onChange(paths);
  }
}

/** Runs a task on request, one run at a time. */
export interface SerialRunner {
  /** Run the task now, or once more after the run under way: requests during a run coalesce. */
  request(): void;
  /** Resolves when no run is under way or queued. */
  idle(): Promise<void>;
}

/**
 * One run at a time: a request during a run queues exactly one more, however many arrive.
 * `task` must not throw (it reports its own failures); a rejection is handed to `onError`.
 * @example const redeploy = serialRunner(() => deployOnce()); redeploy.request();
 */
export function serialRunner(
  task: () => Promise<void>,
  onError: (e: unknown) => void = () => {},
): SerialRunner {
  let running: Promise<void> | null = null;
  let queued = false;
  const loop = async () => {
    do {
      queued = false;
      await task().catch(onError);
    } while (queued);
    running = null;
  };
  return {
    request() {
      if (running) queued = true;
      else running = loop();
    },
    async idle() {
      while (running) await running;
    },
  };
}
