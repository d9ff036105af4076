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
