/**
 * The machinery of the OpenAPI walk (walk.test.ts): one client that sends a request by
 * operationId, checks the answer against the document (contract.ts), records it as an example
 * (recorder.ts), and keeps account of which operations, statuses and request examples the walk
 * covered.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { createApp } from "../../src/app";
import { type ExampleName, exampleEntries, REQUEST_EXAMPLES } from "../../src/http/openapi-examples";
import { BASE } from "../helpers";
import {
  type Answer,
  checkAnswer,
  checkRequestBody,
  type Doc,
  type Lookup,
  type Operation,
  operationsOf,
  prepare,
} from "./contract";
import { Recorder } from "./recorder";

export type Sent = Answer & { body: any; url: string };

export type Request = {
  /** The operationId. */
  op: string;
  /** A token, or none (anonymous). */
  token?: string | null;
  path?: Record<string, string>;
  /** The raw query string (without `?`). */
  query?: string;
  headers?: Record<string, string>;
  /** A JSON body (sent as is: real ids). */
  body?: unknown;
  /** Send the request example with this summary ("" for an unnamed one), ids made real. */
  example?: string;
  /**
   * The example as sent, changed: for values the service checks against its clock (a position's
   * `time` may be at most 5 minutes ahead and no older than the retention window), which the
   * document's day (2030-06-03) cannot be when the walk runs.
   */
  now?: (example: any) => unknown;
  /** A non-JSON body (multipart, form-encoded). */
  raw?: BodyInit;
  /** The status expected. */
  expect: number;
  /** The summary to record the answer under as an example; false: not an example. */
  record?: string | false;
  /** Deployment settings for this one request (the Worker's fetch with another env). */
  env?: Partial<Env>;
  /** A full URL to call instead of the operation's path (a `file` or `public_url` the API gave). */
  url?: string;
  /** The example name of the object answered (its `id`), or of several, before it is recorded. */
  name?: ExampleName | ((body: any) => [ExampleName, string][]);
};

/** Recorded answers: operationId → status → media type → summary → value. */
export type Recorded = Record<string, Record<string, Record<string, Record<string, unknown>>>>;

const TEXT_LIMIT = 24_000;

export class Walk {
  /** The document as checked (without its examples) and its schemas, dereferenced. */
  readonly doc: Doc;
  readonly lookup: Lookup;
  readonly byId = new Map<string, Operation>();
  readonly problems: string[] = [];
  /** `operationId status` of every answer. */
  readonly covered = new Set<string>();
  /** `operationId\u0000summary` of every request example sent, in the order sent. */
  readonly examplesSent: string[] = [];
  readonly recorded: Recorded = {};
  readonly rec = new Recorder(BASE, crypto.randomUUID().slice(0, 8));

  constructor(served: Doc) {
    ({ doc: this.doc, lookup: this.lookup } = prepare(served));
    for (const o of operationsOf(this.doc)) this.byId.set(o.op.operationId, o);
  }

  /** The request examples of the document, in document order: `operationId\u0000summary`. */
  documentedExamples(): string[] {
    return operationsOf(this.doc).flatMap((o) =>
      exampleEntries(REQUEST_EXAMPLES[o.op.operationId]).map(
        ([summary]) => `${o.op.operationId}\u0000${summary}`,
      ),
    );
  }

  example(op: string, summary: string): unknown {
    const entry = exampleEntries(REQUEST_EXAMPLES[op]).find(([s]) => s === summary);
    if (!entry) throw new Error(`${op} has no request example "${summary}"`);
    return this.rec.toReal(entry[1]);
  }

  async send(r: Request): Promise<Sent> {
    const operation = this.byId.get(r.op);
    if (!operation) throw new Error(`No operation ${r.op} in the document`);
    let path = operation.path;
    for (const [k, v] of Object.entries(r.path ?? {})) path = path.replace(`{${k}}`, encodeURIComponent(v));
    if (!r.url && path.includes("{")) throw new Error(`${r.op}: path parameters missing in ${path}`);
    const url = r.url ?? `${BASE}${path}${r.query ? `?${r.query}` : ""}`;
    const headers: Record<string, string> = { ...r.headers };
    if (r.token) headers.Authorization = `Bearer ${r.token}`;
    // Anonymous calls are limited per client address: one address per walk.
    headers["CF-Connecting-IP"] ??= "198.51.100.7";
    let body: BodyInit | undefined = r.raw;
    let json = r.body;
    if (r.example !== undefined) {
      json = this.example(r.op, r.example);
      if (r.now) json = r.now(json);
      this.examplesSent.push(`${r.op}\u0000${r.example}`);
      const documented = Object.keys(operation.op.responses).filter((s) => /^2/.test(s));
      if (!documented.includes(String(r.expect)))
        this.problems.push(
          `${r.op}: its example expects ${r.expect}, not a documented success (${documented})`,
        );
    }
    if (json !== undefined) {
      body = JSON.stringify(json);
      headers["Content-Type"] ??= "application/json";
      for (const p of checkRequestBody(this.lookup, operation, json)) this.problems.push(p);
    }
    const request = new Request(url, { method: operation.method.toUpperCase(), headers, body });
    let res: Response;
    if (r.env) {
      const ctx = createExecutionContext();
      res = await createApp().fetch(request, { ...env, ...r.env } as Env, ctx);
      await waitOnExecutionContext(ctx);
    } else {
      res = await exports.default.fetch(request);
    }
    // A WebSocket answer (101): taken and closed at once, the walk only checks the upgrade.
    if (res.webSocket) {
      res.webSocket.accept();
      res.webSocket.close(1000, "walk");
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    const answer: Sent = { status: res.status, headers: res.headers, text, body: parsed, url };
    if (res.status !== r.expect) {
      throw new Error(
        `${r.op}${r.example ? ` ("${r.example}")` : ""}: HTTP ${res.status}, expected ${r.expect}: ${text.slice(0, 1500)}`,
      );
    }
    if (typeof r.name === "string") this.rec.name(r.name, (parsed as { id: string }).id);
    else if (r.name) for (const [n, id] of r.name(parsed)) this.rec.name(n, id);
    const pathname = new URL(url).pathname;
    const checked = checkAnswer(this.doc, this.lookup, operation.method, pathname, answer);
    this.problems.push(...checked.problems);
    if (checked.operation?.op.operationId !== r.op) {
      this.problems.push(`${r.op}: ${pathname} is documented as ${checked.operation?.op.operationId}`);
    }
    this.covered.add(`${r.op} ${res.status}`);
    const summary = r.record === undefined ? (r.example ?? "") : r.record;
    if (summary !== false && res.status < 300 && checked.mediaType)
      this.keep(r.op, res.status, checked.mediaType, summary, answer, bytes);
    return answer;
  }

  /** Keeps the first answer of each summary, as the document will show it. */
  private keep(
    op: string,
    status: number,
    mediaType: string,
    summary: string,
    answer: Sent,
    bytes: Uint8Array,
  ) {
    this.recorded[op] ??= {};
    this.recorded[op][status] ??= {};
    this.recorded[op][status][mediaType] ??= {};
    const bySummary = this.recorded[op][status][mediaType];
    if (summary in bySummary) return;
    const pathIds = new URL(answer.url).pathname.match(/[0-9a-f]{8}-[0-9a-f-]{27}/g) ?? [];
    if (/json/.test(mediaType)) {
      bySummary[summary] = this.rec.toFake(answer.body, pathIds);
      return;
    }
    // Text the reader can read (HTML pages, CSV, a text file); images and PDFs are not shown.
    const binary =
      bytes.some((b) => b === 0) ||
      /^(image|application\/pdf)/.test(answer.headers.get("Content-Type") ?? "");
    if (binary) return;
    if (answer.text.length > TEXT_LIMIT)
      throw new Error(`${op}: a ${answer.text.length}-character answer is too long for an example`);
    bySummary[summary] = this.rec.toFake(answer.text, pathIds);
  }
}
