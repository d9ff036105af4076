import type { Context } from "hono";

/** A host as a router forwards it: a name or an address, with an optional port; nothing else. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The first value of a header a chain of proxies appended to (`a, b` → `a`). */
const first = (value: string | undefined) => value?.split(",")[0]?.trim() || undefined;

/** `proto` and `host` of the first element of an RFC 7239 `Forwarded` header. */
function forwardedPair(header: string | undefined): { proto?: string; host?: string } {
  const element = first(header);
  if (!element) return {};
  const out: { proto?: string; host?: string } = {};
  for (const pair of element.split(";")) {
    const [k, v] = pair.split("=", 2).map((s) => s.trim());
    const value = v?.replace(/^"(.*)"$/, "$1");
    if (k?.toLowerCase() === "proto" && value) out.proto = value;
    if (k?.toLowerCase() === "host" && value) out.host = value;
  }
  return out;
}

/**
 * The origin a client reached the service at: the scheme and host the router in front forwarded
 * (`Forwarded: proto=…;host=…`, else `X-Forwarded-Proto` / `X-Forwarded-Host`, the first of each
 * when proxies chained), else the request's own. A value that is not an http(s) scheme or a plain
 * host is ignored. For URLs shown to that client (the UI's webhook URLs) and OAuth callbacks when
 * `SVC_PUBLIC_URL` is not set; sessions, which have no request, use `SVC_PUBLIC_URL`.
 * @example requestOrigin(c) // "https://hooks.example.com" behind a TLS router that says so
 */
export function requestOrigin(c: Context): string {
  const own = new URL(c.req.url);
  const fwd = forwardedPair(c.req.header("forwarded"));
  const proto = (fwd.proto ?? first(c.req.header("x-forwarded-proto")))?.toLowerCase();
  const host = fwd.host ?? first(c.req.header("x-forwarded-host"));
  const scheme = proto === "http" || proto === "https" ? proto : own.protocol.slice(0, -1);
  return `${scheme}://${host && HOST.test(host) ? host : own.host}`;
}
