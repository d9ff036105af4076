import { closeSync, ftruncateSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { EntryEncoder } from "./accept-log-entry.ts";
import { type BatchDriver, type BatchOp, checkBatch } from "./drivers/lmdb.ts";

/** Entries taken but not landed past which a write waits for its commit again (backpressure). */
export const ACCEPT_LOG_BACKLOG = 1024;
/** A log file past this size is sealed and a new one begun; a sealed file goes once landed. */
const FILE_BYTES = 4 * 1024 * 1024;
/** How long after its batches have all landed a log file is emptied (if none came since). */
const EMPTY_AFTER_MS = 50;

/** The folder of the accept logs beside an LMDB environment's files. */
export const acceptLogDir = (lmdbDir: string) => join(lmdbDir, "accepts");

interface LogFile {
  fd: number;
  name: string;
  bytes: number;
  /** Entries written here whose commit has not landed yet. */
  pending: number;
}

/** What an accept log commits with, and whom it tells when a commit fails. */
export interface AcceptLogOptions {
  /** Commits batches all-or-nothing (LMDB's `batch`); batches taken meanwhile come as one. */
  commit: (ops: BatchOp[]) => Promise<void>;
  /** A commit failed after its batches were logged (and answered for). */
  failed: (err: unknown) => void;
}

/** Batches logged and waiting for the commit that will take them all, and its landing. */
interface Group {
  batches: { ops: BatchOp[]; file: LogFile }[];
  landed: Promise<void>;
  land: () => void;
}

/**
 * The accept log (sync=normal's front door, docs/storage.md "The accept log"): a batch written
 * to a file of the process's own (so in the OS's page cache, as a commit is: a killed process
 * loses nothing written) before its LMDB commit, which then runs off the writer's path; the
 * batches taken in one turn of the event loop go with one `write` at its end, and their takes
 * resolve then. One commit is in flight at a time: the batches taken meanwhile are committed
 * together once it lands (group commit: one transaction, one flush, one wake of LMDB's writer
 * for a burst's batches). A file holds only batches whose commit has not landed: emptied, or
 * removed once sealed, when none is left. A commit that fails leaves its batches in the file and
 * calls `failed` (the service stops; the next start replays the file). Past
 * `ACCEPT_LOG_BACKLOG` batches in flight, or if the file cannot be written, a write waits for
 * its commit as it would without the log.
 * @example const log = new AcceptLog(dir, { commit: (ops) => lmdb.batch(ops), failed });
 */
export class AcceptLog {
  readonly #dir: string;
  readonly #o: AcceptLogOptions;
  #file: LogFile | null = null;
  #seq = 0;
  #inFlight = 0;
  #broken = false;
  #emptyTimer: NodeJS.Timeout | null = null;
  readonly #entries = new EntryEncoder();
  /** The batches taken this turn, encoded in `#entries`, and their takes waiting for the write. */
  #queued: { ops: BatchOp[]; done: (logged: Promise<void> | undefined) => void }[] = [];
  #writing: NodeJS.Immediate | null = null;
  /** The batches waiting for the commit in flight to land. */
  #next: Group | null = null;
  #committing = false;
  /** Settles once every batch logged so far has landed. */
  #tail: Promise<void> = Promise.resolve();

  constructor(dir: string, opts: AcceptLogOptions) {
    this.#dir = dir;
    this.#o = opts;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** Batches written here whose commit has not landed. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * `ops` logged and its commit on its way; resolves once logged (else once committed). The
   * batches taken in one turn of the event loop are written with one `write` at its end.
   */
  take(ops: BatchOp[]): Promise<void> {
    const unlanded = this.#inFlight + this.#queued.length;
    if (this.#broken || unlanded >= ACCEPT_LOG_BACKLOG) return this.#commitAfterAll(ops);
    try {
      this.#entries.add(ops);
    } catch {
      return this.#commitAfterAll(ops); // not text (a caller's mistake): the commit says so
    }
    return new Promise((done) => {
      this.#queued.push({ ops, done });
      this.#writing ??= setImmediate(() => this.#writeQueued());
    });
  }

  /** The batches taken this turn written, each then on its way to its commit. */
  #writeQueued(): void {
    if (this.#writing) clearImmediate(this.#writing);
    this.#writing = null;
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    let file: LogFile;
    try {
      file = this.#append(this.#entries.take(), queued.length);
    } catch {
      // A part may have been written (whole entries of it too: replayed after a crash, they
      // are stored though never answered, as at-least-once allows): later ones go to a new file.
      this.#drop();
      // No room for the log: each one's commit is its write, as before the log.
      for (const q of queued) q.done(this.#commitAfterAll(q.ops));
      return;
    }
    for (const q of queued) this.#logged(q.ops, file);
    if (!this.#committing) this.#commitNext();
    for (const q of queued) q.done(undefined);
  }

  /** `ops`, in `file`, joins the batches the next commit takes. */
  #logged(ops: BatchOp[], file: LogFile): void {
    this.#inFlight++;
    if (!this.#next) {
      let land!: () => void;
      const landed = new Promise<void>((r) => {
        land = r;
      });
      this.#next = { batches: [], landed, land };
      const before = this.#tail; // a write past the log may still be on its way
      this.#tail = landed.then(() => before);
    }
    this.#next.batches.push({ ops, file });
  }

  /**
   * Runs `fn` once every batch logged so far has landed: at once when none is in flight (a batch
   * taken in this turn is logged at its end, and its take resolves then).
   */
  after(fn: () => void): void {
    if (this.#inFlight === 0) fn();
    else void this.#tail.then(fn);
  }

  /** Resolves once every batch logged so far has landed. */
  settled(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : this.#tail;
  }

  /** Once all has landed: the files closed and, unless a commit failed, removed. */
  async close(): Promise<void> {
    this.#writeQueued();
    await this.#tail;
    if (this.#emptyTimer) clearTimeout(this.#emptyTimer);
    if (this.#file) this.#seal(this.#file);
    this.#file = null;
  }

  /** The waiting batches committed as one; once it lands, the next group's commit starts. */
  #commitNext(): void {
    const group = this.#next;
    if (!group) return;
    this.#next = null;
    this.#committing = true;
    const ops =
      group.batches.length === 1 ? group.batches[0]!.ops : group.batches.flatMap((b) => b.ops);
    void this.#o.commit(ops).then(
      () => {
        for (const b of group.batches) this.#landed(b.file);
        this.#committed(group);
      },
      (err: unknown) => {
        this.#broken = true; // the batches stay in their files for the next start
        this.#o.failed(err);
        this.#committed(group);
      },
    );
  }

  #committed(group: Group): void {
    this.#committing = false;
    group.land();
    this.#commitNext();
  }

  /** A write past the log: committed once everything before it has landed. */
  #commitAfterAll(ops: BatchOp[]): Promise<void> {
    const done = this.#tail.then(() => this.#o.commit(ops));
    this.#tail = done.catch(() => undefined);
    return done;
  }

  /** `entries` (`count` of them) written to the current file, or a new one past FILE_BYTES. */
  #append(entries: Buffer, count: number): LogFile {
    let file = this.#file;
    if (file && file.bytes + entries.length > FILE_BYTES && file.bytes > 0) {
      if (file.pending === 0) this.#seal(file);
      file = null;
    }
    if (!file) {
      const name = join(this.#dir, `${process.pid}-${Date.now()}-${++this.#seq}.log`);
      file = { fd: openSync(name, "a", 0o600), name, bytes: 0, pending: 0 };
      this.#file = file;
    }
    const wrote = writeSync(file.fd, entries);
    file.bytes += wrote;
    if (wrote !== entries.length)
      throw new Error(`accept log: ${wrote} of ${entries.length} bytes`);
    file.pending += count;
    return file;
  }

  #landed(file: LogFile): void {
    this.#inFlight--;
    file.pending--;
    if (file.pending > 0 || this.#broken) return;
    if (file !== this.#file) {
      this.#seal(file);
      return;
    }
    // Emptied a moment later if still none is in flight: a truncate is a journalled change of
    // the file system, which a burst need not pay for each time its batches catch up.
    this.#emptyTimer ??= setTimeout(() => this.#empty(), EMPTY_AFTER_MS);
    this.#emptyTimer.unref?.();
  }

  #empty(): void {
    this.#emptyTimer = null;
    const file = this.#file;
    if (!file || file.pending > 0 || file.bytes === 0 || this.#broken) return;
    try {
      ftruncateSync(file.fd, 0); // every batch in it landed: the next starts an empty file
      file.bytes = 0;
    } catch {
      // Kept: a replay skips batches that landed, and the file is sealed at its size.
    }
  }

  /** The current file takes no more batches (sealed now if none is in flight in it). */
  #drop(): void {
    const file = this.#file;
    this.#file = null;
    if (file && file.pending === 0) this.#seal(file);
  }

  #seal(file: LogFile): void {
    closeSync(file.fd);
    if (file.pending === 0 && !this.#broken) unlinkSync(file.name);
  }
}

/**
 * `driver` whose writes (batches, and single keys set) go through `log`, which commits them with
 * the driver's `batch`: the front door's store under sync=normal, which writes nothing else.
 * @example const driver = withAcceptLog(lmdb, new AcceptLog(dir, { commit: lmdb.batch, failed }));
 */
export function withAcceptLog(driver: BatchDriver, log: AcceptLog): BatchDriver {
  return {
    ...driver,
    async batch(ops) {
      checkBatch(ops); // a batch LMDB refuses fails here, unlogged, as it would without the log
      await log.take(ops);
    },
    async setItem(key, value) {
      checkBatch([{ key, value }]);
      await log.take([{ key, value }]);
    },
  };
}
