/**
 * Polls `fn` every 50 ms until it gives a value (not undefined, false or null), and returns it;
 * throws naming `what` past `ms`. For waiting on an outside process, never to bound a duration.
 * @example const s = await until("the session", () => stores.sessions.get(id));
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until `done(item)` holds for every item, asking again only of those not done yet; throws
 * naming `what` and how far it got once `stallMs` passes without one more done. A slow machine
 * takes longer and still passes; only one that stopped making progress fails.
 * @example await untilEach("every session to end", ids, async (id) => ended(await get(id)));
 */
export async function untilEach<T>(
  what: string,
  items: readonly T[],
  done: (item: T) => Promise<boolean> | boolean,
  stallMs = 60_000,
): Promise<void> {
  const left = new Set(items);
  let progressAt = Date.now();
  for (;;) {
    for (const item of [...left]) {
      if (await done(item)) {
        left.delete(item);
        progressAt = Date.now();
      }
    }
    if (left.size === 0) return;
    if (Date.now() - progressAt > stallMs) {
      const count = `${items.length - left.size} of ${items.length}`;
      throw new Error(`timed out waiting for ${what}: ${count}, none more in ${stallMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
