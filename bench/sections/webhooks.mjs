// Section 7: 1,000 webhook events (two batches of 500 commands) delivered to a local receiver.
import http from "node:http";
import { log } from "../lib/harness.mjs";

const EVENTS = 1000;

export const webhooks = {
  n: 7,
  name: "webhooks",
  ids: ["webhooks.1000.seconds", "webhooks.1000.delivered"],
  async run({ api, report, small, svc, taskIds }) {
    const ids = new Set();
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        ids.add(req.headers["webhook-id"]);
        res.writeHead(204).end();
      });
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    try {
      const wh = await api("/webhooks/", {
        token: small.token,
        body: { url: `http://127.0.0.1:${server.address().port}/hook`, events: ["task_command.accepted"] },
      });
      if (wh.status !== 201) throw new Error(`POST /webhooks/: ${wh.status} ${wh.text.slice(0, 300)}`);
      const t0 = performance.now();
      for (let b = 0; b < EVENTS / 500; b++) {
        const body = Array.from({ length: 500 }, (_, k) => ({
          task: `${svc.url}/tasks/${taskIds[k % 100]}/`,
          external_id: `wh-${b}-${k}-${Math.random()}`,
          time: new Date().toISOString(),
          action: "update",
          task_data: { position: k },
        }));
        const r = await api("/task_commands/", { token: small.token, body });
        if (r.status !== 201) throw new Error(`POST /task_commands/: ${r.status} ${r.text.slice(0, 300)}`);
      }
      const deadline = Date.now() + 180_000;
      while (ids.size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const s = (performance.now() - t0) / 1000;
      log("webhooks", ids.size, s);
      report.figure("webhooks.1000.seconds", s, {
        label: "1,000 webhook events delivered to a local receiver: seconds until the last",
        unit: "s",
        target: "all delivered",
        met: ids.size >= EVENTS,
      });
      report.diagnostic("webhooks.1000.delivered", ids.size, {
        unit: "events",
        label: "webhook events received",
      });
    } finally {
      server.close();
    }
  },
};
