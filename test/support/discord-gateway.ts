import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

interface Frame {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

/** One gateway session the stand-in keeps: every dispatch it made, in sequence. */
interface GatewaySession {
  id: string;
  sent: Frame[];
  socket: WebSocket | null;
}

/**
 * A stand-in for Discord on loopback, one port for both: `GET /api/v10/gateway/bot` (the bot's
 * token in `Authorization: Bot …`) answers the gateway's URL, and the gateway speaks the
 * protocol a bot's client needs: hello with a heartbeat interval, identify → READY, heartbeat →
 * ACK (unless `ack` is off), resume → the dispatches after the sequence the client names, then
 * RESUMED (opcode 9 when the session is unknown). A dispatch made while the bot's socket is down
 * is kept for its resume, as Discord's are. Everything the clients sent is recorded.
 * @example const discord = await standInDiscord("bot-token"); discord.api // base_url
 */
export class StandInDiscord {
  readonly token: string;
  url = "";
  /** What the bot's clients sent, in order (identify, resume and heartbeat frames). */
  readonly received: Frame[] = [];
  /** Gateway URL reads (`GET /gateway/bot`). */
  urlReads = 0;
  /** Whether heartbeats get their ACK. */
  ack = true;
  heartbeatMs = 45_000;
  /** READY's `resume_gateway_url` (default: this gateway). */
  resumeUrl = "";
  readonly #server: Server;
  readonly #wss: WebSocketServer;
  readonly #sessions = new Map<string, GatewaySession>();
  #current: GatewaySession | null = null;
  #made = 0;

  constructor(token: string) {
    this.token = token;
    this.#server = createServer((req, res) => {
      const ok = req.headers.authorization === `Bot ${token}`;
      if (req.url !== "/api/v10/gateway/bot" || !ok) {
        res.writeHead(ok ? 404 : 401, { "content-type": "application/json" });
        return res.end(JSON.stringify({ message: ok ? "404: Not Found" : "401: Unauthorized" }));
      }
      this.urlReads++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ url: this.url.replace("http", "ws"), shards: 1 }));
    });
    this.#wss = new WebSocketServer({ server: this.#server });
    this.#wss.on("connection", (ws) => this.#connected(ws));
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** The REST base a connection's `base_url` names. */
  get api(): string {
    return `${this.url}/api/v10`;
  }

  /** Sockets open now. */
  get open(): number {
    return this.#wss.clients.size;
  }

  /** Identify frames received: new sessions. */
  get identifies(): Frame[] {
    return this.received.filter((f) => f.op === 2);
  }

  get resumes(): Frame[] {
    return this.received.filter((f) => f.op === 6);
  }

  #connected(ws: WebSocket): void {
    const send = (f: Frame) => ws.send(JSON.stringify(f));
    send({ op: 10, d: { heartbeat_interval: this.heartbeatMs } });
    ws.on("message", (raw) => {
      const f = JSON.parse(raw.toString()) as Frame;
      this.received.push(f);
      if (f.op === 1 && this.ack) send({ op: 11 });
      if (f.op === 2) this.#identified(ws, f);
      if (f.op === 6) this.#resumed(ws, f);
    });
    ws.on("close", () => {
      for (const s of this.#sessions.values()) if (s.socket === ws) s.socket = null;
    });
  }

  #identified(ws: WebSocket, f: Frame): void {
    const d = f.d as { token?: string };
    if (d.token !== this.token) {
      ws.close(4004, "Authentication failed.");
      return;
    }
    const session: GatewaySession = { id: `sess-${++this.#made}`, sent: [], socket: ws };
    this.#sessions.set(session.id, session);
    this.#current = session;
    const ready = {
      v: 10,
      user: { id: "4242", username: "hookbot", bot: true },
      session_id: session.id,
      resume_gateway_url: this.resumeUrl || this.url.replace("http", "ws"),
    };
    this.#send(session, "READY", ready);
  }

  #resumed(ws: WebSocket, f: Frame): void {
    const d = f.d as { token?: string; session_id?: string; seq?: number };
    const session = this.#sessions.get(d.session_id ?? "");
    if (!session || d.token !== this.token)
      return void ws.send(JSON.stringify({ op: 9, d: false }));
    session.socket = ws;
    this.#current = session;
    for (const frame of session.sent)
      if ((frame.s ?? 0) > (d.seq ?? 0)) ws.send(JSON.stringify(frame));
    this.#send(session, "RESUMED", {});
  }

  #send(session: GatewaySession, t: string, d: unknown): void {
    const frame = { op: 0, t, s: session.sent.length + 1, d };
    session.sent.push(frame);
    session.socket?.send(JSON.stringify(frame));
  }

  /** A dispatch of the current session: sent now, or kept for its resume while it is down. */
  dispatch(t: string, d: unknown): void {
    if (!this.#current) throw new Error("no gateway session yet");
    this.#send(this.#current, t, d);
  }

  /** The current socket cut without a close frame (the network dropped it). */
  drop(): void {
    this.#current?.socket?.terminate();
  }

  /** Opcode `op` (7: reconnect, 9: invalid session) with `d` on the current socket. */
  say(op: number, d: unknown = null): void {
    this.#current?.socket?.send(JSON.stringify({ op, d }));
  }

  /** Forgets every session: a resume is refused (opcode 9) and the client must identify anew. */
  forgetSessions(): void {
    this.#sessions.clear();
  }

  async close(): Promise<void> {
    for (const ws of this.#wss.clients) ws.terminate();
    await new Promise((r) => this.#wss.close(r));
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }
}

/** A stand-in Discord for `token`, listening. */
export async function standInDiscord(token: string): Promise<StandInDiscord> {
  const discord = new StandInDiscord(token);
  await discord.listen();
  return discord;
}
