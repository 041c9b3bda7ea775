import { exports } from "cloudflare:workers";
import { call, expectStatus } from "../helpers";

/** The live stream (contract §25) as a test client sees it. */
export type Message = { id: string; type: string; created_at: string; data: any };

export type Stream = {
  status: number;
  body: any;
  ws: WebSocket;
  messages: Message[];
  until: (ok: () => boolean, what: string, ms?: number) => Promise<void>;
  closed: () => { code: number; reason: string } | null;
};

/** A stream as a test client sees it: the messages so far, waits, and how it closed. */
export async function open(url: string): Promise<Stream> {
  const res = await exports.default.fetch(
    new Request(url.replace(/^ws/, "http"), { headers: { Upgrade: "websocket" } }),
  );
  if (res.status !== 101) return { status: res.status, body: await res.json() } as Stream;
  const ws = res.webSocket!;
  ws.accept();
  const messages: Message[] = [];
  let closed: { code: number; reason: string } | null = null;
  ws.addEventListener("message", (m) => {
    if (m.data !== "pong") messages.push(JSON.parse(m.data as string));
  });
  ws.addEventListener("close", (c) => {
    closed = { code: c.code, reason: c.reason };
  });
  const until = async (ok: () => boolean, what: string, ms = 5000) => {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end)
        throw new Error(`stream: no ${what}; got ${JSON.stringify(messages.map((m) => m.type))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { status: 101, body: null, ws, messages, until, closed: () => closed };
}

export async function ticket(token: string, query = "") {
  const r = await call("/events/stream_tickets/", { method: "POST", token });
  expectStatus(r, 201);
  return `${r.body.url}${query}`;
}
