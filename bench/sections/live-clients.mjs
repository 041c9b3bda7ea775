// The live section's stream clients, in a thread of their own (node:worker_threads): a thousand
// sockets' messages are parsed here, so the main thread's timing of the commands is not held up
// behind them. Times are absolute (timeOrigin + now): each thread has its own performance clock.
import { parentPort, workerData } from "node:worker_threads";

const now = () => performance.timeOrigin + performance.now();
const { urls, waitMs } = workerData;
/** external_id → (client index → absolute ms received) */
const received = new Map();
const sockets = [];

async function connect() {
  for (let i = 0; i < urls.length; i += 100) {
    await Promise.all(
      urls.slice(i, i + 100).map(
        (url, k) =>
          new Promise((resolve, reject) => {
            const index = i + k;
            const ws = new WebSocket(url);
            ws.addEventListener("open", () => resolve());
            ws.addEventListener("error", () => reject(new Error(`client ${index} did not connect`)));
            ws.addEventListener("message", (m) => {
              const at = now();
              const id = JSON.parse(m.data).data?.external_id;
              if (!id) return;
              if (!received.has(id)) received.set(id, new Map());
              const got = received.get(id);
              if (!got.has(index)) got.set(index, at);
            });
            sockets.push(ws);
          }),
      ),
    );
  }
}

parentPort.on("message", async (m) => {
  if (m.type === "connect") {
    try {
      await connect();
      parentPort.postMessage({ type: "connected", count: sockets.length });
    } catch (err) {
      parentPort.postMessage({ type: "error", message: String(err) });
    }
  } else if (m.type === "collect") {
    // Every client's receipt of `id`, waiting up to waitMs from the command's answer.
    const end = m.answered + waitMs;
    while ((received.get(m.id)?.size ?? 0) < urls.length && now() < end)
      await new Promise((r) => setTimeout(r, 5));
    const got = received.get(m.id) ?? new Map();
    received.delete(m.id);
    const afterAnswer = [];
    const afterSend = [];
    for (let i = 0; i < urls.length; i++) {
      const at = got.get(i);
      afterAnswer.push(at === undefined ? waitMs : Math.max(0, at - m.answered));
      afterSend.push(at === undefined ? waitMs : at - m.sent);
    }
    parentPort.postMessage({ type: "collected", id: m.id, reached: got.size, afterAnswer, afterSend });
  } else if (m.type === "close") {
    for (const ws of sockets) ws.close(1000);
    parentPort.postMessage({ type: "closed" });
  }
});
