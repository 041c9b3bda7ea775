import { describe, expect, it } from "vitest";
import { HEADROOM, pacer, policyQuota, RETRIES, retryAfterMs } from "../../web/shared/pace";

/**
 * The pages' request pacing (web/shared/pace.ts): a burst stays under the token's rate limit
 * (contract §10), writes go before waiting reads, and a 429 waits its Retry-After and is sent
 * again. A fake server records when each request reached it.
 */

type Seen = { at: number; method: string; url: string; body: string };

function server(answer: (r: Request, n: number) => Response = () => new Response("{}")) {
  const seen: Seen[] = [];
  const send = async (r: Request) => {
    seen.push({ at: performance.now(), method: r.method, url: r.url, body: await r.text() });
    return answer(r, seen.length);
  };
  return { seen, send };
}

const get = (path: string) => new Request(`https://api.test${path}`);
const post = (path: string, body: unknown) =>
  new Request(`https://api.test${path}`, { method: "POST", body: JSON.stringify(body) });

/** The most requests that reached the server within any window of `ms`. */
function busiest(seen: Seen[], ms: number): number {
  let most = 0;
  for (const s of seen) most = Math.max(most, seen.filter((t) => t.at >= s.at && t.at < s.at + ms).length);
  return most;
}

describe("request pacing", () => {
  it("spreads a burst so that no window holds more than the quota less the headroom", async () => {
    const { seen, send } = server();
    const p = pacer(send, { quota: 5, windowMs: 200 });
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => p.fetch(get(`/documents/?n=${i}`))),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(seen).toHaveLength(12);
    expect(busiest(seen, 200)).toBe(5 - HEADROOM);
    // 12 at 3 a window: the last goes in the fourth window, not later.
    expect(performance.now() - started).toBeGreaterThanOrEqual(600);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("sends a write before the reads that wait, and writes in their order", async () => {
    const { seen, send } = server();
    const p = pacer(send, { quota: 3, windowMs: 150 });
    const reads = Array.from({ length: 5 }, (_, i) => p.fetch(get(`/form_responses/?n=${i}`)));
    const writes = [
      p.fetch(post("/task_commands/batch/", { n: 1 })),
      p.fetch(post("/task_commands/batch/", { n: 2 })),
    ];
    await Promise.all([...reads, ...writes]);
    // The first read went at once (room for 1 a window); the two writes next, in order.
    expect(seen.map((s) => s.method)).toEqual(["GET", "POST", "POST", "GET", "GET", "GET", "GET"]);
    expect(seen.filter((s) => s.method === "POST").map((s) => JSON.parse(s.body).n)).toEqual([1, 2]);
  });

  it("follows the quota the server states, and waits out a 429's Retry-After before sending again", async () => {
    let throttled = 0;
    const { seen, send } = server((_r, n) => {
      if (n === 2) {
        throttled++;
        return new Response('{"detail":"Request was throttled."}', {
          status: 429,
          headers: { "Retry-After": "1", "RateLimit-Policy": '"default";q=40;w=1' },
        });
      }
      return new Response("{}", { headers: { "RateLimit-Policy": '"default";q=40;w=1' } });
    });
    const p = pacer(send, { quota: 20 });
    await p.fetch(get("/tasks/"));
    expect(p.quota).toBe(40);
    const answer = await p.fetch(post("/task_commands/", { external_id: "x" }));
    expect(answer.status).toBe(200);
    expect(throttled).toBe(1);
    // The same command, body and all, sent again after the second the server asked for.
    expect(seen[2].body).toBe(seen[1].body);
    expect(seen[2].at - seen[1].at).toBeGreaterThanOrEqual(1000);
  });

  it("gives a 429 back when the server keeps refusing", async () => {
    const { seen, send } = server(() => new Response("{}", { status: 429, headers: { "Retry-After": "0" } }));
    const p = pacer(send);
    const answer = await p.fetch(get("/tasks/"));
    expect(answer.status).toBe(429);
    expect(seen).toHaveLength(RETRIES + 1);
  });

  it("reads Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3), and the policy's quota", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(null)).toBe(1000);
    const now = Date.parse("2026-11-29T12:00:00Z");
    expect(retryAfterMs("Sun, 29 Nov 2026 12:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("soon")).toBe(1000);
    expect(policyQuota('"default";q=20;w=1')).toBe(20);
    expect(policyQuota(null)).toBeNull();
    expect(policyQuota('"default";w=1')).toBeNull();
  });
});
