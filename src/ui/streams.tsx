import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { HooklineError } from "../errors.ts";
import { matches } from "../storage/session-scan.ts";
import type { Range, SessionQuery, SessionRecord, UiData, WatchedSessionChange } from "./data.ts";
import { OverviewBody } from "./views/overview.tsx";
import { SessionEndSection, SessionStatus } from "./views/session.tsx";
import { spanOf } from "./views/session-links.tsx";
import { SessionRow } from "./views/sessions.tsx";
import { EntryItem, InFlightItem, inFlightId } from "./views/timeline.tsx";

/** Rows waiting for a slow client; past it the oldest is dropped (the page is still right on reload). */
const MAX_PENDING = 1000;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 25_000;

/** Live streams served at once in this process; past it a new one gets 503 (pages still read). */
export const MAX_STREAMS = 500;
let open = 0;

/**
 * A JSX element as its HTML text (hono/jsx escaped every user string in it).
 * @example await html(<SessionRow rec={rec} />) // "<tr id=\"row-ses_…\">…"
 */
export const html = async (el: unknown): Promise<string> => String(await el);

/**
 * Runs `pump` over an SSE stream: `wait()` resolves when `wake()` is called or the client goes.
 * Ends when `pump` returns.
 */
function eventStream(
  c: Context,
  setup: (wake: () => void) => () => void,
  pump: (
    write: (event: string, data: unknown) => Promise<void>,
    closed: () => boolean,
    wait: () => Promise<void>,
  ) => Promise<void>,
) {
  if (open >= MAX_STREAMS) {
    throw new HooklineError("unavailable", "too many live views are open; reload later");
  }
  open++;
  return streamSSE(c, async (stream) => {
    let closed = false;
    let wakeUp: (() => void) | null = null;
    const wake = () => wakeUp?.();
    let stop = () => {};
    let ping: NodeJS.Timeout | undefined;
    stream.onAbort(() => {
      closed = true;
      wake();
    });
    try {
      stop = setup(wake);
      // Something at once, so the browser sees the stream open (headers flush with a first write).
      await stream.write(": open\n\n");
      ping = setInterval(() => void stream.write(": keepalive\n\n"), KEEPALIVE_MS);
      await pump(
        (event, data) => stream.writeSSE({ event, data: JSON.stringify(data) }),
        () => closed,
        () =>
          new Promise<void>((r) => {
            wakeUp = r;
          }),
      );
    } finally {
      open--;
      clearInterval(ping);
      stop();
    }
  });
}

/**
 * `row` events: a session of the list that started or changed, as its table row.
 * @example app.get("/sessions/stream", (c) => sessionListStream(c, data, {}))
 */
export function sessionListStream(c: Context, data: UiData, q: SessionQuery) {
  const pending = new Map<string, SessionRecord>();
  return eventStream(
    c,
    (wake) =>
      data.watchSessions((rec) => {
        if (!matches(q, rec)) return;
        pending.delete(rec.id);
        pending.set(rec.id, rec);
        if (pending.size > MAX_PENDING) pending.delete(pending.keys().next().value!);
        wake();
      }),
    async (write, closed, wait) => {
      for (;;) {
        while (!closed() && pending.size) {
          const [id, rec] = pending.entries().next().value!;
          pending.delete(id);
          const text = `Session ${rec.id} of ${rec.project_name}: ${rec.state}`;
          await write("row", { id, html: await html(<SessionRow rec={rec} />), text });
        }
        if (closed()) return;
        await wait();
      }
    },
  );
}

/**
 * `entry` events (a timeline item, the status), then one `end` event, for one session.
 * @example app.get("/sessions/:id/stream", (c) => sessionStream(c, data, c.req.param("id"), 0))
 */
export function sessionStream(c: Context, data: UiData, id: string, from: number) {
  const queue: WatchedSessionChange[] = [];
  return eventStream(
    c,
    (wake) =>
      data.watchSession(id, from, (change) => {
        queue.push(change);
        wake();
      }),
    async (write, closed, wait) => {
      for (;;) {
        while (!closed() && queue.length) {
          const change = queue.shift()!;
          const status = await html(<SessionStatus rec={change.record} />);
          if (change.kind === "entry" && change.entry.kind === "outcome") {
            // A synchronous session answers mid-run: show the outcome now, not at the end.
            const detail = await data.session(id);
            const end = await html(
              <SessionEndSection rec={change.record} log={detail?.log ?? []} />,
            );
            const item = await html(<EntryItem e={change.entry} />);
            await write("entry", { status, html: item, end });
            continue;
          }
          if (change.kind === "started") {
            // Its row in flight, its bar growing up to now, until the entry that ends it.
            const span = spanOf(change.record, []);
            await write("entry", {
              status,
              html: await html(<InFlightItem a={change.activity} span={span} />),
            });
            continue;
          }
          if (change.kind === "entry") {
            // Its waterfall bar within the session so far (running: up to now).
            const span = spanOf(change.record, [change.entry]);
            await write("entry", {
              status,
              html: await html(<EntryItem e={change.entry} span={span} />),
              // The rows in flight this entry ended: it takes their place.
              ...(change.ended && { gone: change.ended.map(inFlightId) }),
            });
            continue;
          }
          const detail = await data.session(id);
          const end = await html(<SessionEndSection rec={change.record} log={detail?.log ?? []} />);
          await write("end", { status, end, text: `Session ended: ${change.record.state}` });
          return;
        }
        if (closed()) return;
        await wait();
      }
    },
  );
}

/** How often the overview is sent again without a change seen here (other instances' counts). */
const OVERVIEW_EVERY_MS = 15_000;
/** Changes seen within this are sent as one new overview. */
const OVERVIEW_SETTLE_MS = 1000;

/**
 * `overview` events: the overview's body again, a second after sessions changed here, and
 * every 15 s for what other instances counted.
 * @example app.get("/overview/stream", (c) => overviewStream(c, data, "day"))
 */
export function overviewStream(c: Context, data: UiData, range: Range) {
  let changed = false;
  let timer: NodeJS.Timeout | undefined;
  return eventStream(
    c,
    (wake) => {
      const every = setInterval(() => {
        changed = true;
        wake();
      }, OVERVIEW_EVERY_MS);
      const unwatch = data.watchSessions(() => {
        if (timer) return;
        timer = setTimeout(() => {
          timer = undefined;
          changed = true;
          wake();
        }, OVERVIEW_SETTLE_MS);
      });
      return () => {
        clearInterval(every);
        clearTimeout(timer);
        unwatch();
      };
    },
    async (write, closed, wait) => {
      for (;;) {
        if (changed) {
          changed = false;
          const o = await data.overview(range);
          await write("overview", { html: await html(<OverviewBody o={o} />) });
        }
        if (closed()) return;
        await wait();
      }
    },
  );
}
