/**
 * Contract checks generated from the OpenAPI document: for any answer of the service, the
 * operation it belongs to (by method and path template), whether its status is documented, its
 * media type is one the document lists, its body validates against the documented schema (JSON
 * Schema 2020-12, with @cfworker/json-schema, which validates without `eval` and so runs in
 * workerd), and every header the document marks `required` is there.
 */
import { dereference, type Schema, validate } from "@cfworker/json-schema";

export type Doc = Record<string, any>;
export type Operation = { method: string; path: string; op: any };

const METHODS = ["get", "put", "post", "delete", "patch"];

/** Every operation, in document order. */
export function operationsOf(doc: Doc): Operation[] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })),
  );
}

/** `#/components/<kind>/<name>` objects, resolved. */
export function resolve(doc: Doc, node: any): any {
  let n = node;
  while (n?.$ref) {
    const [, , kind, name] = n.$ref.split("/");
    n = doc.components[kind][name];
  }
  return n;
}

const templateRe = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`);

/**
 * The documented operation a request lands on. Where several templates match (`/users/me/` and
 * `/users/{id}/`), the one with more literal segments wins, as OpenAPI 3.1 §4.8.2 says a
 * concrete path matches before a templated one.
 */
export function findOperation(doc: Doc, method: string, pathname: string): Operation | null {
  const candidates = operationsOf(doc).filter(
    (o) => o.method === method.toLowerCase() && templateRe(o.path).test(pathname),
  );
  const literal = (p: string) => p.split("/").filter((s) => s && !s.startsWith("{")).length;
  candidates.sort((a, b) => literal(b.path) - literal(a.path));
  return candidates[0] ?? null;
}

export type Lookup = ReturnType<typeof dereference>;

/**
 * The document to check answers with: without its examples (data, not schemas: an example's
 * `id` would read as a draft-4 schema id), dereferenced once, so that any schema inside it
 * validates with its `$ref`s.
 */
export function prepare(doc: Doc): { doc: Doc; lookup: Lookup } {
  const checked = withoutExamples(doc);
  return { doc: checked, lookup: dereference(checked as Schema) };
}

/** The document without `example`/`examples` members; schemas are the same objects' copies. */
export function withoutExamples(node: any): any {
  if (Array.isArray(node)) return node.map(withoutExamples);
  if (!node || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== "example" && k !== "examples")
      .map(([k, v]) => [k, withoutExamples(v)]),
  );
}

export function validateValue(lookup: Lookup, schema: any, value: unknown, where: string): string[] {
  const result = validate(value, schema, "2020-12", lookup, false);
  if (result.valid) return [];
  // The deepest errors say what is wrong; the outer ones only that something below failed.
  const errors = result.errors.filter(
    (e) => !/^(Property|Items|Array|oneOf|anyOf|allOf|A subschema)/.test(e.error),
  );
  return (errors.length ? errors : result.errors)
    .slice(0, 8)
    .map((e) => `${where}: ${e.instanceLocation} ${e.error} (${e.keywordLocation})`);
}

export type Answer = { status: number; headers: Headers; text: string; body: unknown };

const mediaOf = (contentType: string | null) => (contentType ?? "").split(";")[0].trim().toLowerCase();

/** The documented media type an answer's Content-Type falls under (`*\/*`, `text/*` included). */
export function matchMediaType(content: Record<string, unknown>, contentType: string | null): string | null {
  const actual = mediaOf(contentType);
  const declared = Object.keys(content);
  return (
    declared.find((d) => d === actual) ??
    declared.find((d) => d.endsWith("/*") && actual.startsWith(d.slice(0, -1))) ??
    declared.find((d) => d === "*/*") ??
    null
  );
}

/**
 * What is wrong with an answer, judged by the document alone (an empty list: nothing). The
 * operation is found from the method and the request's path.
 */
export function checkAnswer(
  doc: Doc,
  lookup: Lookup,
  method: string,
  pathname: string,
  answer: Answer,
): { problems: string[]; operation: Operation | null; mediaType: string | null } {
  const operation = findOperation(doc, method, pathname);
  const at = `${method.toUpperCase()} ${pathname} → ${answer.status}`;
  if (!operation)
    return { problems: [`${at}: no such operation in the document`], operation, mediaType: null };
  const documented =
    operation.op.responses[String(answer.status)] ?? operation.op.responses[`${String(answer.status)[0]}XX`];
  if (!documented) {
    return {
      problems: [
        `${at}: status not documented for ${operation.op.operationId} (${answer.text.slice(0, 300)})`,
      ],
      operation,
      mediaType: null,
    };
  }
  const response = resolve(doc, documented);
  const problems: string[] = [];
  for (const [name, h] of Object.entries<any>(response.headers ?? {})) {
    const header = resolve(doc, h);
    if (header.required && !answer.headers.has(name)) problems.push(`${at}: required header ${name} missing`);
  }
  const content = response.content as Record<string, any> | undefined;
  if (!content || Object.keys(content).length === 0) {
    if (answer.text !== "") problems.push(`${at}: a body where the document declares none`);
    return { problems, operation, mediaType: null };
  }
  const mediaType = matchMediaType(content, answer.headers.get("Content-Type"));
  if (!mediaType) {
    problems.push(
      `${at}: Content-Type ${answer.headers.get("Content-Type")} is none of ${Object.keys(content).join(", ")}`,
    );
    return { problems, operation, mediaType };
  }
  const schema = content[mediaType].schema;
  if (schema && /json$/.test(mediaType)) {
    let value: unknown;
    try {
      value = JSON.parse(answer.text);
    } catch {
      problems.push(`${at}: the body is not JSON`);
      return { problems, operation, mediaType };
    }
    problems.push(...validateValue(lookup, schema, value, at));
  }
  return { problems, operation, mediaType };
}

/** A JSON request body checked against the operation's documented request body. */
export function checkRequestBody(lookup: Lookup, operation: Operation, body: unknown): string[] {
  const schema = operation.op.requestBody?.content?.["application/json"]?.schema;
  if (!schema) return [`${operation.op.operationId}: no JSON request body documented`];
  return validateValue(lookup, schema, body, `${operation.op.operationId} request body`);
}
