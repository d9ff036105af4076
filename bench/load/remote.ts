import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadResult, LoadSpec } from "./generator.ts";

type Reply = { ready: true } | { id: number; result?: LoadResult; error?: string };

/**
 * The one load client, in its own process: the service under test keeps its event loop (and a
 * core) to itself, and every target (ours and each floor) is driven by the same client.
 * @example const client = await LoadClient.start(); const r = await client.run(spec); await client.dispose();
 */
export class LoadClient {
  readonly #child: ChildProcess;
  readonly #pending = new Map<
    number,
    { resolve: (r: LoadResult) => void; reject: (e: Error) => void }
  >();
  #nextId = 0;
  #disposed: Promise<void> | null = null;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on("message", (m: Reply) => {
      if (!("id" in m)) return;
      const waiter = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.result) waiter?.resolve(m.result);
      else waiter?.reject(new Error(`load client: ${m.error}`));
    });
    child.on("exit", (code) => {
      for (const w of this.#pending.values()) w.reject(new Error(`load client exited (${code})`));
      this.#pending.clear();
    });
  }

  static start(): Promise<LoadClient> {
    const child = fork(fileURLToPath(new URL("./client.ts", import.meta.url)), {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new Promise((resolve, reject) => {
      child.once("message", () => resolve(new LoadClient(child)));
      child.once("exit", (code) => reject(new Error(`load client exited (${code}) before ready`)));
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  run(spec: LoadSpec): Promise<LoadResult> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#child.send({ id, spec });
    });
  }

  /** Closes the channel (the client exits) and waits for the exit. Idempotent. */
  dispose(): Promise<void> {
    this.#disposed ??= new Promise<void>((resolve) => {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) return resolve();
      const timer = setTimeout(() => this.#child.kill("SIGKILL"), 3000);
      this.#child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      this.#child.disconnect();
    });
    return this.#disposed;
  }
}
