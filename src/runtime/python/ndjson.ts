/**
 * Newline-delimited JSON framing for a session socket. Lines are split on `\n` as bytes, so a
 * multi-byte character cut across two chunks is decoded whole. A line longer than `maxBytes`
 * is never buffered past that size: the splitter reports an overflow and drops its input.
 */
export class LineSplitter {
  readonly #maxBytes: number;
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: () => void;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #broken = false;

  constructor(maxBytes: number, onLine: (line: string) => void, onOverflow: () => void) {
    this.#maxBytes = maxBytes;
    this.#onLine = onLine;
    this.#onOverflow = onOverflow;
  }

  /** Feeds bytes; calls `onLine` for each complete line (without its newline). */
  push(chunk: Buffer): void {
    let start = 0;
    while (!this.#broken) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.#pendingBytes + (end - start) > this.#maxBytes) {
        this.#broken = true;
        this.#pending = [];
        this.#onOverflow();
        return;
      }
      if (nl === -1) {
        if (end > start) {
          this.#pending.push(chunk.subarray(start));
          this.#pendingBytes += end - start;
        }
        return;
      }
      const piece = chunk.subarray(start, nl);
      const line =
        this.#pending.length === 0
          ? piece.toString("utf8")
          : Buffer.concat([...this.#pending, piece]).toString("utf8");
      this.#pending = [];
      this.#pendingBytes = 0;
      start = nl + 1;
      if (line.trim() !== "") this.#onLine(line);
    }
  }

  /** Bytes received after the last newline (a message cut short by EOF). */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }
}

/** One message as a line. */
export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
