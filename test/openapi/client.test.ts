/**
 * Issue 26's third-party check: the typed client generated from /openapi.json alone
 * (clients/typescript, openapi-typescript + openapi-fetch) runs a small program against the
 * service: a task, a batch of commands, an uploaded file read back, a metafield filter.
 */
import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { dispatchExample } from "../../clients/typescript/example";
import { createDispatchClient } from "../../clients/typescript/index";
import { BASE, defineMetafields, newAccount } from "../helpers";

it("runs a program written against the generated client, without casts", async () => {
  const acc = await newAccount();
  await defineMetafields(acc, "tasks", { door_code: "string" });
  const api = createDispatchClient({
    baseUrl: BASE,
    token: acc.admin.token,
    fetch: (request) => exports.default.fetch(request),
  });
  const out = await dispatchExample(api, acc.account.url);
  expect(out.task.state).toBe("unassigned");
  expect(out.commands.map((c) => [c.action, c.state])).toEqual([
    ["update", "accepted"],
    ["cancel", "accepted"],
  ]);
  expect(out.text).toBe("Two parcels, signed for.\n");
  expect(out.contentType).toMatch(/^text\/plain/);
  // The deepObject filter reached the service as metafields[door_code]=4711 (any other spelling: 400).
  expect(out.filteredCount).toBe(1);
});
