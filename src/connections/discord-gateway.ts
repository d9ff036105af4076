import WebSocket from "ws";

/**
 * The intents a bot's gateway asks for: every one Discord has (AutoKitteh's `IntentsAll`),
 * including the privileged members, presences and message content.
 */
export const DISCORD_INTENTS = 3276799;

/** The REST base a connection's `base_url` overrides (discord.py's `Route.BASE`). */
export const DISCORD_API_URL = "https://discord.com/api/v10";

/** Close codes after which Discord refuses any new session with the same token or intents. */
const FATAL = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

const OP = { dispatch: 0, heartbeat: 1, identify: 2, resume: 6, reconnect: 7, invalid: 9 } as const;

export interface GatewayOptions {
  token: string;
  /** The gateway's WebSocket URL (from `GET <base_url>/gateway/bot`), asked at each new session. */
  url: () => Promise<string>;
  /** A dispatch: its event name (`MESSAGE_CREATE`), its data and its sequence number. */
  onDispatch: (name: string, data: unknown, seq: number) => void;
  log: (line: string) => void;
  /** The first reconnection's wait, doubled after each failed one up to 60 s (default 1 s). */
  backoffMs?: number;
}

interface Frame {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

/**
 * One bot's connection to Discord's gateway: hello → identify (token, intents); heartbeats at
 * the interval hello gives (the first after a random part of it), each needing its ACK before
 * the next (else the socket is dropped); a dropped socket resumed with the session id and the
 * last sequence at READY's `resume_gateway_url`, a refused resume (opcode 9, false) identified
 * anew; opcode 7 reconnects. Reconnections wait longer after each failure. A dispatch whose
 * sequence was already seen is not handed on twice.
 * @example const g = new DiscordGateway({ token, url, onDispatch, log }); g.start(); await g.stop();
 */
export class DiscordGateway {
  #o: GatewayOptions;
  #ws: WebSocket | null = null;
  #session: { id: string; resumeUrl: string } | null = null;
  #seq: number | null = null;
  #acked = true;
  #beat: NodeJS.Timeout | null = null;
  #retry: NodeJS.Timeout | null = null;
  #failures = 0;
  /** The session was invalidated (opcode 9): the next attempt waits 1 to 5 backoffs. */
  #invalid = false;
  #stopped = false;
  /** The bot's own user id, from READY. */
  botId = "";

  constructor(opts: GatewayOptions) {
    this.#o = opts;
  }

  start(): void {
    void this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    let url: string;
    try {
      url = this.#session?.resumeUrl || (await this.#o.url());
    } catch (e) {
      this.#o.log(`gateway URL not read: ${(e as Error).message}`);
      return this.#later();
    }
    if (this.#stopped) return;
    const ws = new WebSocket(withQuery(url));
    this.#ws = ws;
    ws.on("message", (raw) => this.#frame(ws, raw.toString()));
    ws.on("error", (e) => this.#o.log(`gateway socket: ${e.message}`));
    ws.on("close", (code) => this.#closed(ws, code));
  }

  #frame(ws: WebSocket, text: string): void {
    if (ws !== this.#ws) return;
    let f: Frame;
    try {
      f = JSON.parse(text) as Frame;
    } catch {
      return;
    }
    if (f.op === 10) this.#hello(ws, f.d as { heartbeat_interval: number });
    else if (f.op === 11) this.#acked = true;
    else if (f.op === OP.heartbeat) this.#send(ws, { op: OP.heartbeat, d: this.#seq });
    else if (f.op === OP.reconnect) ws.close(4000, "reconnect asked");
    else if (f.op === OP.invalid) {
      if (f.d !== true) this.#forget();
      this.#invalid = true; // Discord asks for a wait of 1 to 5 s before the next identify
      ws.close(4000, "session invalid");
    } else if (f.op === OP.dispatch) this.#dispatch(f);
  }

  #hello(ws: WebSocket, d: { heartbeat_interval: number }): void {
    const every = Math.max(10, Number(d?.heartbeat_interval) || 41_250);
    this.#acked = true;
    this.#stopBeat();
    const beat = () => {
      if (!this.#acked) {
        this.#o.log("gateway heartbeat not acknowledged: reconnecting");
        return ws.terminate();
      }
      this.#acked = false;
      this.#send(ws, { op: OP.heartbeat, d: this.#seq });
      this.#beat = setTimeout(beat, every);
    };
    this.#beat = setTimeout(beat, every * Math.random());
    const { token } = this.#o;
    if (this.#session && this.#seq !== null) {
      const d = { token, session_id: this.#session.id, seq: this.#seq };
      this.#send(ws, { op: OP.resume, d });
      return;
    }
    const properties = { os: process.platform, browser: "hookline", device: "hookline" };
    this.#send(ws, { op: OP.identify, d: { token, intents: DISCORD_INTENTS, properties } });
  }

  #dispatch(f: Frame): void {
    const seq = typeof f.s === "number" ? f.s : null;
    if (seq !== null && this.#seq !== null && seq <= this.#seq) return;
    if (seq !== null) this.#seq = seq;
    const d = f.d as Record<string, unknown> | null;
    if (f.t === "READY") {
      const user = d?.user as { id?: string } | undefined;
      this.botId = String(user?.id ?? "");
      const resumeUrl = typeof d?.resume_gateway_url === "string" ? d.resume_gateway_url : "";
      this.#session = { id: String(d?.session_id ?? ""), resumeUrl };
      this.#failures = 0;
      this.#o.log("gateway session ready");
      return;
    }
    if (f.t === "RESUMED") {
      this.#failures = 0;
      this.#o.log("gateway session resumed");
      return;
    }
    if (f.t) this.#o.onDispatch(f.t, d, seq ?? 0);
  }

  #closed(ws: WebSocket, code: number): void {
    if (ws !== this.#ws) return;
    this.#ws = null;
    this.#stopBeat();
    if (this.#stopped) return;
    if (FATAL.has(code)) {
      this.#o.log(`gateway closed with ${code} (token or intents refused): not reconnecting`);
      return;
    }
    // Three attempts in a row that never got back to a session: identify anew at the bot's URL.
    if (this.#failures >= 3 && this.#session) this.#forget();
    this.#later();
  }

  /** The next attempt: at once the first time, then backoffMs doubled per failure (≤ 60 s). */
  #later(): void {
    if (this.#stopped) return;
    const base = this.#o.backoffMs ?? 1000;
    let wait = this.#failures === 0 ? 0 : Math.min(60_000, base * 2 ** (this.#failures - 1));
    if (this.#invalid) wait = Math.max(wait, base * (1 + 4 * Math.random()));
    this.#invalid = false;
    this.#failures++;
    this.#retry = setTimeout(() => void this.#connect(), wait);
  }

  #forget(): void {
    this.#session = null;
    this.#seq = null;
  }

  #send(ws: WebSocket, frame: Frame): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
  }

  #stopBeat(): void {
    if (this.#beat) clearTimeout(this.#beat);
    this.#beat = null;
  }

  /** Closes the socket for good (1000: Discord ends the session). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopBeat();
    if (this.#retry) clearTimeout(this.#retry);
    const ws = this.#ws;
    this.#ws = null;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once("close", () => resolve());
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, "stopped");
    });
  }
}

/** The gateway URL with the version and encoding asked (`?v=10&encoding=json`). */
function withQuery(url: string): string {
  const u = new URL(url);
  u.searchParams.set("v", "10");
  u.searchParams.set("encoding", "json");
  return u.toString();
}

/**
 * The gateway's URL for a bot: `GET <api>/gateway/bot` with its token (`Bot <token>`).
 * @example await gatewayUrl("https://discord.com/api/v10", token) // "wss://gateway.discord.gg"
 */
export async function gatewayUrl(api: string, token: string, f = fetch): Promise<string> {
  const res = await f(`${api.replace(/\/+$/, "")}/gateway/bot`, {
    headers: { authorization: `Bot ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`GET /gateway/bot: ${res.status}`);
  const body = (await res.json()) as { url?: unknown };
  if (typeof body.url !== "string") throw new Error("GET /gateway/bot: no url");
  return body.url;
}
