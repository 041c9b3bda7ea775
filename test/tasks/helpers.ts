import { type CallOptions, call, expectStatus, type Reply, type TestAccount } from "../helpers";

/**
 * `call`, waiting out the per-token rate limit (20/s, contract §10) instead of failing: the
 * list tests make more requests per second than a client is allowed to.
 */
export async function api(path: string, opts: CallOptions = {}): Promise<Reply> {
  for (let attempt = 0; ; attempt++) {
    const r = await call(path, opts);
    if (r.status !== 429 || attempt >= 10) return r;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.headers.get("Retry-After") ?? 1)));
  }
}

/** The interface's creation sample (§4.4): account, category, address, contact, window, description. */
export function sampleTask(acc: TestAccount, overrides: Record<string, unknown> = {}) {
  return {
    account: acc.account.url,
    category: "drop_off",
    address: { raw_address: "Viru väljak 4, Tallinn, Estonia" },
    contact: { name: "Mari Maasikas", phones: ["+3725550000"], emails: ["mari@example.com"] },
    complete_after: "2030-06-01T09:00:00Z",
    complete_before: "2030-06-01T17:00:00Z",
    description: "Leave at the front desk",
    ...overrides,
  };
}

export async function createTask(
  acc: TestAccount,
  overrides: Record<string, unknown> = {},
  token = acc.admin.token,
) {
  const r = await api("/tasks/", { token, body: sampleTask(acc, overrides) });
  expectStatus(r, 201);
  return r.body;
}

/** Every item of a list, following `next` links. */
export async function listAll(path: string, token: string): Promise<any[]> {
  const out: any[] = [];
  let url: string | null = path;
  while (url) {
    const r = await api(url, { token });
    expectStatus(r, 200);
    out.push(...r.body.results);
    url = r.body.next;
  }
  return out;
}

export const ids = (items: { id: string }[]) => items.map((t) => t.id);
