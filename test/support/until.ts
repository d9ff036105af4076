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
