import { appPrivateKey, PRIVATE_KEY_VAR } from "../connections/github-app.ts";
import type { JournalStep, ProjectDoc, SessionLogEntry } from "../model/records.ts";
import { MASK, type SecretBox } from "../secrets.ts";

/** Secret values shorter than this are not masked in prints: too likely to match other text. */
const MIN_REDACTED = 4;

/**
 * A session's environment (vars, secrets opened), the redaction of its secret values (`mask`
 * adds one handed out later, so its final error is masked as its prints are), and `appKey`: the GitHub App private key of a github connection, which the service signs the
 * session's JWTs with (`<connection>__private_key` is withheld from the environment, as every
 * `<connection>__private_client_secret` is: `withheldVars`).
 * @example const { env, redact } = sessionEnv(doc, secrets); redact("token=s3cret") // "token=********"
 */
export function sessionEnv(doc: ProjectDoc, secrets: SecretBox) {
  // The project's name, for what the SDK says (`cli connection authorize <project>/<connection>`);
  // a project var of that name, set below, overrides it.
  const env: Record<string, string> = { HOOKLINE_PROJECT: doc.project.name };
  const values: string[] = [];
  const held = withheldVars(doc);
  const withheld = new Map<string, string>();
  for (const v of doc.vars) {
    const value = v.secret ? openOrSay(secrets, v.value, `secret var ${v.name}`) : v.value;
    if (held.has(v.name)) withheld.set(v.name, value);
    else env[v.name] = value;
    if ((v.secret || held.has(v.name)) && value.length >= MIN_REDACTED) values.push(value);
  }
  // Only a github connection's JWTs are signed: another's `auth_type` names no App of ours.
  const appKey = (connection: string) =>
    !held.has(`${connection}__${PRIVATE_KEY_VAR}`)
      ? undefined
      : appPrivateKey((name) =>
          name === PRIVATE_KEY_VAR
            ? withheld.get(`${connection}__${name}`) || undefined
            : env[`${connection}__${name}`] || undefined,
        );
  // As in AutoKitteh, a program may read which connection it holds.
  for (const c of doc.connections ?? []) env[`${c.name}__connection_id`] = c.id;
  // Longest first, so a secret that contains another is masked whole.
  values.sort((a, b) => b.length - a.length);
  const redact = (text: string) => values.reduce((t, s) => t.replaceAll(s, MASK), text);
  /** A secret handed to the session after it started (a token refresh_oauth made): masked too. */
  const mask = (secret: string) => {
    if (secret.length < MIN_REDACTED || values.includes(secret)) return;
    values.push(secret);
    values.sort((a, b) => b.length - a.length);
  };
  return { env, redact, mask, appKey };
}

/**
 * The vars that stay in the service, whatever their source: a github connection's App private key
 * (the service signs its JWTs) and a connection's own OAuth client secret (the service refreshes
 * its tokens). A session gets tokens, never what mints them; but for a `daemonApp` connection
 * (Microsoft's application permissions) the session is the client, and gets its secret. An auth0
 * connection's app is its `client_id` / `client_secret`: that secret is held too.
 */
function withheldVars(doc: ProjectDoc): Set<string> {
  const held = new Set<string>();
  const plain = new Map(doc.vars.filter((v) => !v.secret).map((v) => [v.name, v.value]));
  for (const c of doc.connections ?? []) {
    if (plain.get(`${c.name}__auth_type`) !== "daemonApp") {
      held.add(`${c.name}__private_client_secret`);
    }
    // Auth0's own app goes without `private_` (AutoKitteh's names): its secret is held as well.
    if (c.integration === "auth0") held.add(`${c.name}__client_secret`);
    if (c.integration === "github") held.add(`${c.name}__${PRIVATE_KEY_VAR}`);
  }
  return held;
}

/** Opens a sealed value, or throws an error that says what could not be read, and why. */
function openOrSay(box: SecretBox, sealed: string, what: string): string {
  try {
    return box.open(sealed);
  } catch (e) {
    throw new Error(
      `${what} cannot be read: ${(e as Error).message} (sealed with another SVC_SECRET_KEY, or damaged)`,
    );
  }
}

/** What marks a journal field sealed with the service's key (older journals are plain). */
const SEALED = "sealed:";

function seal(box: SecretBox, value: string | undefined): string | undefined {
  return value === undefined ? undefined : SEALED + box.seal(value);
}

function open(box: SecretBox, value: string | undefined, what: string): string | undefined {
  return value?.startsWith(SEALED) ? openOrSay(box, value.slice(SEALED.length), what) : value;
}

/**
 * A journal step as stored: an activity's result and error (pickles of whatever it returned or
 * raised, a secret included) are sealed with the secret key, so no stored byte holds them plain.
 * @example openStep(box, sealStep(box, step)) // equal to step
 */
export function sealStep(box: SecretBox, step: JournalStep): JournalStep {
  if (step.kind !== "activity") return step;
  const out = { ...step };
  if (step.result !== undefined) out.result = seal(box, step.result);
  if (step.error !== undefined) out.error = seal(box, step.error);
  if (step.parts) out.parts = sealParts(box, step.parts);
  return out;
}

/**
 * A value kept apart, sealed part by part and never joined (docs/durability.md), in place: each
 * plain part is dropped as its sealed one is made, so a 20 MB value is not held twice over
 * (the message's, the step's and the journal's parts are this one array).
 */
function sealParts(box: SecretBox, parts: string[]): string[] {
  for (let i = 0; i < parts.length; i++) {
    if (!parts[i]!.startsWith(SEALED)) parts[i] = SEALED + box.seal(parts[i]!);
  }
  return parts;
}

/**
 * The parts of step `seq`'s value kept apart, as stored (sealed), opened for a replay.
 * @example openParts(box, 3, await stores.journals.parts(id, 3, step.apart.parts))
 */
export function openParts(box: SecretBox, seq: number, parts: string[]): string[] {
  return parts.map((p) => open(box, p, `the journal's step ${seq}`)!);
}

/**
 * A stored journal step as the session replays it (plain steps of older journals pass as they are).
 * @example const steps = (await stores.journals.list(id)).map((s) => openStep(box, s));
 */
export function openStep(box: SecretBox, step: JournalStep): JournalStep {
  if (step.kind !== "activity") return step;
  // Parts of a value kept apart (a re-run's copy) stay in storage: read when a replay asks.
  const { parts: _, ...out } = step;
  const what = `the journal's step ${step.seq}`;
  if (step.result !== undefined) out.result = open(box, step.result, what);
  if (step.error !== undefined) out.error = open(box, step.error, what);
  return out;
}

/**
 * A stored journal as the session replays it; a step that is not a step (damaged JSON, which the
 * store hands back as text) or that does not open fails the session with an error naming it,
 * never a replay of garbage.
 * @example const steps = openSteps(box, await stores.journals.list(id));
 */
export function openSteps(box: SecretBox, steps: unknown[]): JournalStep[] {
  return steps.map((step, i) => {
    const s = step as JournalStep | null;
    if (typeof s !== "object" || s === null || typeof s.seq !== "number" || !s.kind) {
      throw new Error(`the journal's step ${i + 1} cannot be read: it is not a journal step`);
    }
    return openStep(box, s);
  });
}

/**
 * An outcome's log entry with secret values masked in its header values and (text) body: the
 * handler's own caller got them as sent; the log, the API and storage do not.
 * @example redactEntry(entry, (t) => t.replaceAll("s3cret", "********"))
 */
export function redactEntry(
  entry: SessionLogEntry,
  redact: (text: string) => string,
): SessionLogEntry {
  if (entry.kind !== "outcome") return entry;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry.headers)) headers[name] = redact(String(value));
  let body = entry.body;
  if (body !== null) {
    const bytes = Buffer.from(body, "base64");
    const text = bytes.toString("utf8");
    // A text body is masked; a binary one (not valid UTF-8) is kept out of the log altogether.
    body = Buffer.from(text, "utf8").equals(bytes)
      ? Buffer.from(redact(text), "utf8").toString("base64")
      : redact(text) === text
        ? body
        : null;
  }
  return { ...entry, headers, body };
}

/**
 * The subscription source a name means in a project, `<project_id>:<name>`: a trigger's, a
 * connection's (ingest publishes its events so), and for a trigger of a connection, the
 * connection's (its events are the connection's); null when the name is none of them.
 * @example sourceKey(doc, "github_conn") // "prj_…:github_conn"
 */
export function sourceKey(doc: ProjectDoc, name: string): string | null {
  const trigger = doc.triggers.find((t) => t.name === name);
  if (trigger?.type === "connection" && trigger.connection) {
    return `${doc.project.id}:${trigger.connection}`;
  }
  if (trigger || doc.connections?.some((c) => c.name === name)) return `${doc.project.id}:${name}`;
  return null;
}
