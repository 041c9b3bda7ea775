import type { DispatchClient } from "./api";

/** One message of the event stream (contract §25). */
export type StreamEvent = { id: string; type: string; created_at: string; data: any };

export type StreamStatus = "connecting" | "live" | "reconnecting";

/**
 * The account's event stream (contract §25) that survives network loss: each connection takes a
 * fresh single-use ticket and asks for what came after the last event it delivered (`?after=`),
 * so nothing is lost; ids already delivered are dropped, so nothing is doubled (the server may
 * send a late commit's older id after a newer one, hence a set and not one high-water mark).
 */
export function openStream(
  client: DispatchClient,
  handlers: { onEvent: (e: StreamEvent) => void; onStatus: (s: StreamStatus) => void; types?: string[] },
) {
  let closed = false;
  let socket: WebSocket | null = null;
  let last: string | null = null;
  const seen = new Set<string>();
  const order: string[] = [];
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const remember = (id: string) => {
    seen.add(id);
    order.push(id);
    // Bounded memory: a replay never reaches further back than the events window.
    if (order.length > 5000) seen.delete(order.shift()!);
  };

  async function connect() {
    if (closed) return;
    const t = await client.POST("/events/stream_tickets/").catch(() => null);
    if (closed) return;
    if (!t?.data) return retry();
    const url = new URL(t.data.url);
    if (last) url.searchParams.set("after", last);
    if (handlers.types) url.searchParams.set("types", handlers.types.join(","));
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      attempt = 0;
      handlers.onStatus("live");
    };
    ws.onmessage = (m) => {
      if (m.data === "pong") return;
      const e = JSON.parse(m.data) as StreamEvent;
      if (seen.has(e.id)) return;
      remember(e.id);
      last = e.id;
      handlers.onEvent(e);
    };
    ws.onclose = () => {
      if (socket === ws) socket = null;
      retry();
    };
  }

  function retry() {
    if (closed) return;
    handlers.onStatus("reconnecting");
    // Quick first retries (a blip), then up to 10 s apart.
    const wait = Math.min(10_000, 250 * 2 ** attempt++);
    timer = setTimeout(connect, wait);
  }

  handlers.onStatus("connecting");
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      socket?.close();
    },
    /** For tests and the bench: drops the connection as a network loss would. */
    drop() {
      socket?.close();
    },
  };
}
