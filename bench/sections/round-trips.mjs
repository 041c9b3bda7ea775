// Section 14: sequential D1 round trips per request (contract §24): a far region pays one per
// sequential D1 call, so this is the count that decides a request's latency there. The service
// says each request's count in `X-D1-Round-Trips` (EXPOSE_D1_ROUND_TRIPS, set for the bench's
// service); each operation is asked three times after one warm-up request of the same token,
// and the largest count is kept (they do not vary, unless a cold object or token costs one more).
import { log, taskBody } from "../lib/harness.mjs";

/** The operations counted, with the contract's target where it names one. */
const TARGETS = {
  task_get: "= 1",
  task_list: "= 1",
  command_single: "= 1",
  task_create: "<= 2",
};
const OPERATIONS = [
  "task_get",
  "task_list",
  "command_single",
  "task_create",
  "task_patch",
  "command_batch10",
  "order_create",
  "events_list",
  "users_list",
  "account_get",
];

export const roundTrips = {
  n: 14,
  name: "round trips",
  ids: OPERATIONS.map((op) => `d1.round_trips.${op}`),
  async run({ api, report, small, taskIds }) {
    const token = small.token;
    const counted = async (what, path, opts = {}) => {
      const r = await api(path, { token, ...opts });
      if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
      const n = Number(r.headers.get("X-D1-Round-Trips"));
      if (!Number.isFinite(n) || r.headers.get("X-D1-Round-Trips") === null)
        throw new Error(`${what}: no X-D1-Round-Trips (EXPOSE_D1_ROUND_TRIPS unset?)`);
      return { n, body: r.body };
    };
    const [t1, t2] = taskIds;
    const task = (await api(`/tasks/${t1}/`, { token })).body;
    const command = (url, i) => ({
      task: url,
      external_id: `rt-${Date.now()}-${i}-${Math.random().toString(36).slice(2)}`,
      time: new Date().toISOString(),
      action: "update",
      task_data: { description: `round trip ${i}` },
    });
    let i = 0;
    const ops = {
      task_get: () => counted("GET /tasks/{id}/", `/tasks/${t2}/`),
      task_list: () => counted("GET /tasks/", "/tasks/?page_size=50"),
      command_single: () =>
        counted("POST /task_commands/", "/task_commands/", { body: command(task.url, i++) }),
      task_create: () =>
        counted("POST /tasks/", "/tasks/", { body: { account: small.account.url, ...taskBody(i++) } }),
      task_patch: () =>
        counted("PATCH /tasks/{id}/", `/tasks/${t2}/`, {
          method: "PATCH",
          body: { description: `p ${i++}` },
        }),
      command_batch10: () =>
        counted("POST /task_commands/ (10)", "/task_commands/", {
          body: Array.from({ length: 10 }, () => command(task.url, i++)),
        }),
      order_create: () =>
        counted("POST /orders/", "/orders/", {
          body: {
            account: small.account.url,
            reference: `rt-${i++}`,
            tasks_data: [taskBody(i), taskBody(i + 1)],
          },
        }),
      events_list: () => counted("GET /events/", "/events/?page_size=50"),
      users_list: () => counted("GET /users/", "/users/"),
      account_get: () => counted("GET /accounts/{id}/", `/accounts/${small.account.id}/`),
    };
    // The token's first request in a Worker instance checks it alone; warm it (and the task's
    // object) first, as a client that is using the service sees it.
    await ops.users_list();
    await ops.command_single();
    for (const op of OPERATIONS) {
      await ops[op]();
      let most = 0;
      for (let k = 0; k < 3; k++) most = Math.max(most, (await ops[op]()).n);
      log(`round trips ${op}: ${most}`);
      const id = `d1.round_trips.${op}`;
      const label = `sequential D1 round trips: ${op.replaceAll("_", " ")}`;
      if (TARGETS[op]) report.figure(id, most, { label, unit: "trips", target: TARGETS[op] });
      else report.diagnostic(id, most, { label, unit: "trips" });
    }
  },
};
