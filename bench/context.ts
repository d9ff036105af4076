import type { LoadResult, LoadSpec } from "./load/generator.ts";
import type { LoadClient } from "./load/remote.ts";
import type { Service } from "./service.ts";
import type { Row } from "./table.ts";

/** What every phase gets: the one load client, our service, the Python sessions run on. */
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
  /** Everything measured, by phase, for the JSON file. */
  data: Record<string, unknown>;
}

export const JSON_BODY = JSON.stringify({ n: 1, message: "hello" });
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
