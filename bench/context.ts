import type { LoadResult, LoadSpec } from "./load/generator.ts";
import type { LoadClient } from "./load/remote.ts";
import type { Service } from "./service.ts";
import type { Row } from "./table.ts";

/** What every phase gets: the one load client, the service under test, its sessions' Python. */
export interface Bench {
  client: LoadClient;
  svc: Service;
  python: string;
  /** Progress lines (stderr). */
  log(line: string): void;
  /** Runs one load phase and records its result under `name` in the JSON output. */
  load(name: string, spec: LoadSpec): Promise<LoadResult>;
  rows: Row[];
  /** Lines for "what the time goes to", printed under the table. */
  notes: string[];
  /** The main figures by service label ("default storage", "memory storage"), compared after. */
  figures: Record<string, Partial<MainFigures>>;
  /** The floors of those figures, measured once in this run (bare Hono, ThreadingHTTPServer, fork). */
  floors: Partial<MainFigures>;
  /** Everything measured, by phase, for the JSON file. */
  data: Record<string, unknown>;
}

/** The rows measured on every service configuration, for the side-by-side comparison. */
export interface MainFigures {
  acceptP50: number;
  acceptRps: number;
  sessionsRate: number;
  syncP50: number;
  syncP99: number;
  syncRps: number;
}

export const JSON_BODY = JSON.stringify({ n: 1, message: "hello" });
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
