/** The overview at /ui and its live stream; `?range=hour|day|week` (a day by default). */
import type { Context, Hono } from "hono";
import { HooklineError } from "../errors.ts";
import { isRange, type Range } from "../stats/overview.ts";
import type { UiData } from "./data.ts";
import type { UiEnv } from "./page-kit.ts";
import { overviewStream } from "./streams.tsx";
import { OverviewPage } from "./views/overview.tsx";

function rangeOf(c: Context): Range {
  const r = c.req.query("range") || "day";
  if (!isRange(r)) throw new HooklineError("bad_request", "range must be hour, day or week");
  return r;
}

/** @example overviewPages(app, data) // after the cookie check */
export function overviewPages(app: Hono<UiEnv>, data: UiData): void {
  app.get("/", async (c) => {
    const o = await data.overview(rangeOf(c));
    return c.html(<OverviewPage viewer={c.get("viewer")} o={o} />);
  });
  app.get("/overview/stream", (c) => overviewStream(c, data, rangeOf(c)));
}
