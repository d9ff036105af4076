import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { HooklineError } from "../errors.ts";
import { lingerThenClose } from "../routes/linger.ts";
import { httpStatus, toProblem } from "../routes/problem.ts";

/** Headers of one hop, not passed on (RFC 9110 §7.6.1), and `Expect` (this hop answered it). */
const HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);

/** Connections kept open to the host; past it a request waits for one (Node's agent queues). */
const MAX_SOCKETS = 256;

/** `[name, value, name, value, …]` without the headers of one hop (and what `Connection` names). */
function passOn(raw: string[], drop: Set<string> = HOP): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === "connection")
      for (const n of raw[i + 1]!.split(",")) named.add(n.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!drop.has(name) && !named.has(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** A problem+json answer of the front itself (the host could not be reached). */
function answerProblem(res: ServerResponse, err: HooklineError): void {
  const body = JSON.stringify(toProblem(err));
  res.writeHead(httpStatus(err.code), {
    "content-type": "application/problem+json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * Passes a request on to the session host's own server (a Unix socket only this process knows)
 * and its answer back, both bodies streamed as they come: the host's routes see the request as
 * the client sent it (method, path, headers, a body that stalls where the client's stalls), and
 * the client gets the host's status, headers and body, a stream (SSE) included. A host that
 * closes the connection after its answer (`Connection: close`) has this one closed too, once the
 * client has sent its body (read and dropped, bounded, as the host does: closing on a client
 * still sending resets the connection before it reads the answer); a client that goes away has
 * its request to the host ended.
 * @example const proxy = hostProxy("/run/hookline/host.sock"); server.on("request", proxy.forward);
 */
export function hostProxy(socketPath: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, maxFreeSockets: 64 });
  const forward = (req: IncomingMessage, res: ServerResponse, body?: Uint8Array): void => {
    const up = http.request({
      socketPath,
      agent,
      method: req.method,
      path: req.url,
      headers: passOn(req.rawHeaders),
      setHost: false,
    });
    let answered = false;
    up.on("response", (back) => {
      answered = true;
      const close = /\bclose\b/i.test(String(back.headers.connection ?? ""));
      const headers = passOn(back.rawHeaders, new Set([...HOP, "transfer-encoding"]));
      if (close) {
        headers.push("Connection", "close");
        // The host answered before the body was all sent (a 404, a 413): Node would close this
        // socket with the client still writing, and the kernel reset it before the answer is read.
        if (!req.readableEnded) lingerThenClose(req);
      }
      res.writeHead(back.statusCode ?? 502, back.statusMessage, headers);
      back.pipe(res);
      back.on("error", () => res.destroy());
    });
    up.on("error", () => {
      // Once answered, the answer's own stream says whether it came whole (`back`'s error);
      // the host may close its end before the client's body is all sent (a 413, a 408).
      if (answered || res.headersSent) return;
      const err = new HooklineError("bad_gateway", "the service's session host did not answer");
      answerProblem(res, err);
    });
    // The client went away before its answer was whole: the host's side ends too (an SSE
    // stream's watcher is let go).
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    if (body) up.end(body);
    else req.pipe(up);
  };
  return { forward, dispose: () => agent.destroy() };
}
