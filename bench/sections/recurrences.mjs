// Section 11: recurrences (contract §20). BENCH_RECURRENCES daily recurrences (1,000) created
// through the API, then the cron handler (GET /__scheduled, wrangler dev --test-scheduled) run
// until every occurrence within the 7-day horizon exists: 7 tasks each, made through the same
// code as POST /tasks/. One cron run stops taking work after 20 s, so it is triggered again every
// few seconds, overlapping runs included (each occurrence is still made once).
import { inLanes, log, makeAccount, taskBody, timed } from "../lib/harness.mjs";

const DAYS = 7;

export const recurrences = {
  n: 11,
  name: "recurrences",
  ids: [
    "recurrences.daily.tasks",
    "recurrences.daily.tasks_per_second",
    "recurrences.daily.seconds",
    "recurrences.daily.cpu_ms_per_task",
  ],
  async run({ api, report, svc, settings }) {
    const acc = await makeAccount(api, "recurrences");
    const count = settings.recurrences;
    // Tomorrow 00:00 UTC: occurrences on the next 7 days all fall within now + 7 days.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    let created = 0;
    const made = await timed([], () =>
      inLanes(20, count, async () => {
        const r = await api("/recurrences/", {
          token: acc.token,
          body: {
            rule: "FREQ=DAILY",
            start: `${tomorrow}T00:00:00`,
            timezone: "UTC",
            kind: "task",
            template: { account: acc.account.url, ...taskBody(created) },
          },
        });
        if (r.status === 201) created++;
        else log("recurrence", r.status, r.text.slice(0, 200));
      }),
    );
    log("recurrences created", created, `${(made.ms / 1000).toFixed(1)} s`);
    if (created !== count) throw new Error(`recurrences: ${created} of ${count} created`);
    const expected = created * DAYS;
    const countTasks = async () => {
      let n = 0;
      for (let url = "/tasks/?page_size=500"; url; ) {
        const page = await api(url, { token: acc.token });
        n += page.body?.results?.length ?? 0;
        url = page.body?.next ? page.body.next.replace(/^https?:\/\/[^/]+/, "") : null;
      }
      return n;
    };
    const deadline = Date.now() + 900_000;
    const {
      result: tasks,
      ms,
      cpu,
    } = await timed(svc.pids(), async () => {
      let n = 0;
      while (n < expected && Date.now() < deadline) {
        await fetch(`${svc.url}/__scheduled?cron=*+*+*+*+*`);
        await new Promise((r) => setTimeout(r, 5000));
        n = await countTasks();
        log("occurrences made", n, "of", expected);
      }
      return n;
    });
    report.figure("recurrences.daily.tasks", tasks, {
      label: `materialize ${count} daily recurrences × ${DAYS} days: all occurrences, once`,
      unit: "tasks",
      target: `= ${expected}`,
    });
    report.diagnostic("recurrences.daily.tasks_per_second", tasks / (ms / 1000), {
      unit: "task/s",
      label: "occurrences made per second (cron, wall clock)",
    });
    report.diagnostic("recurrences.daily.seconds", ms / 1000, {
      unit: "s",
      label: "time until the last occurrence",
    });
    report.diagnostic("recurrences.daily.cpu_ms_per_task", cpu / Math.max(1, tasks), {
      unit: "ms",
      label: "runtime CPU per occurrence made",
    });
  },
};
