/**
 * Serialises work per key within this process: the deploys of one project, the var changes of
 * one environment. Each key's queue is dropped once it drains, so memory follows live keys only.
 * @example const locks = keyedLock(); await locks.run("demo", () => deploy());
 */
export function keyedLock() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
      const prev = tails.get(key) ?? Promise.resolve();
      const result = prev.then(fn, fn);
      const tail = result.catch(() => {});
      tails.set(key, tail);
      try {
        return await result;
      } finally {
        if (tails.get(key) === tail) tails.delete(key);
      }
    },
  };
}

export type KeyedLock = ReturnType<typeof keyedLock>;

/**
 * Runs work one piece after another, in the order given; a piece that fails is reported to
 * `onError` and the next one runs. `idle()` resolves once nothing is queued or running (work
 * queued meanwhile included). The keepers of connections' registrations serialise their looks
 * at projects with it.
 * @example const q = serialQueue((e) => log.error("jira webhooks", e)); void q.run(() => look());
 */
export function serialQueue(onError: (e: unknown) => void) {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    /** Runs `work` after what is queued; resolves or rejects as it does. */
    run<T>(work: () => Promise<T>): Promise<T> {
      const run = tail.then(work);
      tail = run.catch(onError);
      return run;
    },
    async idle(): Promise<void> {
      for (let t = tail; ; t = tail) {
        await t;
        if (t === tail) return;
      }
    },
  };
}
