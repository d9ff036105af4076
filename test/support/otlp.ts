import { createServer, type Server } from "node:http";

/** One span as an OTLP/HTTP JSON export carries it (ids in hex), attributes made plain. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

function plain(attrs: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attrs ?? []) {
    out[key] =
      value.stringValue ??
      value.boolValue ??
      value.doubleValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined);
  }
  return out;
}

/**
 * An OTLP/HTTP receiver on loopback (`POST /v1/traces`, JSON encoding): what the service's
 * exporter sends, kept as received (`raw`, for the secret canary) and as spans.
 * @example const otlp = await startOtlpReceiver(); env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const raw: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      if (!String(req.headers["content-type"]).includes("json")) {
        res.writeHead(415).end();
        return;
      }
      const text = Buffer.concat(chunks).toString("utf8");
      raw.push(text);
      const body = JSON.parse(text) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: { spans?: Record<string, unknown>[] }[];
        }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = plain(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: String(s.parentSpanId ?? ""),
              name: String(s.name),
              kind: Number(s.kind),
              startNs: BigInt(String(s.startTimeUnixNano)),
              endNs: BigInt(String(s.endTimeUnixNano)),
              attributes: plain(s.attributes as KeyValue[]),
              links: ((s.links as { traceId: string; spanId: string }[]) ?? []).map((l) => ({
                traceId: l.traceId,
                spanId: l.spanId,
              })),
              status: (s.status as ReceivedSpan["status"]) ?? {},
              resource,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    raw,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
