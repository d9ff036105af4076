/** How often a long first-start step says it is still going. */
export const PROGRESS_EVERY_MS = 5000;

/**
 * A duration as a person reads it: seconds below a minute, else minutes and seconds.
 * @example elapsed(4_200) // "4 s"; elapsed(65_000) // "1m05s"
 */
export function elapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/**
 * Runs `work`, saying `<what>: <time> so far (once; later starts reuse it)` every
 * {@link PROGRESS_EVERY_MS} while it lasts, so a first start is never silent for long.
 * @example await ticking(say, "creating the Python environment", execa(python, ["-m", "venv", dir]));
 */
export async function ticking<T>(
  say: (line: string) => void,
  what: string,
  work: Promise<T>,
  everyMs = PROGRESS_EVERY_MS,
): Promise<T> {
  const started = Date.now();
  const timer = setInterval(
    () => say(`${what}: ${elapsed(Date.now() - started)} so far (once; later starts reuse it)`),
    everyMs,
  );
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/**
 * A URL's password (and user) left out, for lines that name a package index.
 * @example redactUrls("https://me:tok@mirror.example/simple") // "https://****@mirror.example/simple"
 */
export function redactUrls(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, "$1****@");
}
