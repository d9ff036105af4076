import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useEmulator } from "./support/emulator.ts";

/**
 * Golden session cases: each folder under test/golden holds a project (manifest.yaml and its
 * handlers) and `case.txt`, whose `== section` blocks give the request to send and what must
 * come of it: response (sync), state, prints, error (each line a substring), traceback (its last
 * lines), activities.
 */
const ROOT = join(import.meta.dirname, "golden");

interface Case {
  request: { method: string; suffix: string; headers: Record<string, string>; body: string };
  sections: Record<string, string[]>;
}

function parseCase(text: string): Case {
  const sections: Record<string, string[]> = {};
  let current: string[] | null = null;
  for (const line of text.replace(/\n$/, "").split("\n")) {
    const head = /^== (\w+)$/.exec(line);
    if (head) sections[head[1]!] = current = [];
    else current?.push(line);
  }
  const req = sections.request ?? ["POST"];
  const [method = "POST", suffix = ""] = req[0]!.split(" ");
  const blank = req.indexOf("");
  const headerLines = req.slice(1, blank === -1 ? undefined : blank);
  return {
    request: {
      method,
      suffix,
      headers: Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
      ),
      body: blank === -1 ? "" : req.slice(blank + 1).join("\n"),
    },
    sections,
  };
}

describe("golden session cases", () => {
  const emu = useEmulator();
  for (const name of readdirSync(ROOT).sort()) {
    it(name, async () => {
      const dir = join(ROOT, name);
      const { request, sections } = parseCase(readFileSync(join(dir, "case.txt"), "utf8"));
      const urls = await emu.deploy(dir);
      const res = await fetch(urls.hook + request.suffix, {
        method: request.method,
        headers: request.headers,
        body: request.method === "GET" ? undefined : request.body,
      });
      let sessionId: string;
      if (sections.response) {
        const [status, ...body] = sections.response;
        expect({ status: res.status, body: await res.text() }).toEqual({
          status: Number(status),
          body: body.join("\n"),
        });
        sessionId = await latestSession(emu.api);
      } else {
        expect(res.status).toBe(202);
        sessionId = ((await res.json()) as { session_id: string }).session_id;
      }
      const record = await emu.ended(sessionId);
      if (sections.state) expect(record.state, record.error?.message).toBe(sections.state[0]);
      if (sections.prints) expect(await emu.prints(sessionId)).toEqual(sections.prints);
      for (const part of sections.error ?? []) expect(record.error?.message).toContain(part);
      // The traceback's last lines, as Python prints them (the session log shows them so).
      if (sections.traceback) {
        const lines = (record.error?.traceback ?? "").trimEnd().split("\n");
        expect(lines.slice(-sections.traceback.length)).toEqual(sections.traceback);
      }
      if (sections.activities) {
        const { entries } = await emu.api<{ entries: { kind: string; function?: string }[] }>(
          `/sessions/${sessionId}/log`,
        );
        const activities = entries.filter((e) => e.kind === "activity").map((e) => e.function);
        expect(activities).toEqual(sections.activities);
      }
    });
  }
});

async function latestSession(api: ReturnType<typeof useEmulator>["api"]): Promise<string> {
  const { sessions } = await api<{ sessions: { id: string }[] }>("/sessions?limit=1");
  return sessions[0]!.id;
}
