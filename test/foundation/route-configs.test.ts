import { describe, expect, it } from "vitest";
import { createTaskRoute, retrieveTaskRoute } from "../../src/api/tasks";
import type { ResponseOf } from "../../src/http/openapi";
import { call, expectStatus, newAccount } from "../helpers";

/** Routes are exported configs: a client (here a test) takes paths and answer types from them. */
describe("exported route configs", () => {
  it("give the path and the typed answer of an operation", async () => {
    const acc = await newAccount();
    expect([createTaskRoute.method, createTaskRoute.path]).toEqual(["post", "/tasks/"]);
    const created = await call(createTaskRoute.path, {
      token: acc.admin.token,
      body: { account: acc.account.url, category: "drop_off", address: { raw_address: "Tallinn" } },
    });
    expectStatus(created, 201);
    const task: ResponseOf<typeof createTaskRoute, 201> = created.body;
    const read = await call(retrieveTaskRoute.path.replace("{id}", task.id), { token: acc.admin.token });
    expectStatus(read, 200);
    const again: ResponseOf<typeof retrieveTaskRoute> = read.body;
    expect(again.url).toBe(task.url);
    expect(again.state).toBe("unassigned");
  });
});
