// Section 10: exports and imports (contract §21). BENCH_EXPORT_TASKS tasks (100,000) exported as
// CSV: rows/s, and the runtime's memory growth from the first progress report at 10,000 rows or
// more to the end (the export must not grow with its size); then BENCH_IMPORT_ORDERS orders
// (10,000) × 2 tasks imported from one CSV.
import { log, makeAccount, rssOf, seedTasks } from "../lib/harness.mjs";

export const exportsImports = {
  n: 10,
  name: "exports",
  ids: [
    "export.tasks.rows_per_second",
    "export.tasks.rss_growth_mib",
    "import.orders.rows_per_second",
    "import.orders.seconds",
  ],
  async run({ api, report, svc, settings }) {
    const exportTasks = settings.exportTasks;
    const acc = await makeAccount(api, "exports");
    const s0 = performance.now();
    await seedTasks(api, acc, exportTasks);
    log(`export: seeded ${exportTasks} tasks in ${((performance.now() - s0) / 1000).toFixed(1)} s`);
    const pids = svc.pids();
    const poll = async (url, onSample) => {
      for (;;) {
        const r = await api(url.replace(svc.url, ""), { token: acc.token });
        onSample(r.body);
        if (r.body?.state === "completed" || r.body?.state === "failed") return r.body;
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    const t0 = performance.now();
    const started = await api("/task_exports/", { token: acc.token, body: { account: acc.account.url } });
    if (started.status !== 202) throw new Error(`export: ${started.status} ${started.text.slice(0, 300)}`);
    // The baseline is taken at the first progress report of 10,000 rows or more (the first step
    // commits 20,000); with fewer tasks, at the first report with any rows.
    const threshold = Math.min(10_000, Math.max(1, Math.floor(exportTasks / 2)));
    let base = null;
    let peak = 0;
    const timer = setInterval(() => {
      if (base !== null) peak = Math.max(peak, rssOf(pids));
    }, 20);
    const done = await poll(started.body.url, (b) => {
      if (base === null && (b?.row_count ?? 0) >= threshold) {
        base = rssOf(pids);
        peak = base;
      }
    }).finally(() => clearInterval(timer));
    const exportSeconds = (performance.now() - t0) / 1000;
    let lines = 0;
    if (done?.file) {
      const text = await (await fetch(done.file)).text();
      lines = text.split("\r\n").length - 2; // the header and the empty string after the last CRLF
    }
    log(
      "export",
      done?.state,
      done?.row_count,
      "rows,",
      lines,
      "in the file,",
      exportSeconds.toFixed(1),
      "s",
    );
    if (done?.state !== "completed" || lines !== exportTasks)
      throw new Error(`export: ${done?.state}, ${lines} rows in the file of ${exportTasks}`);
    report.figure("export.tasks.rows_per_second", exportTasks / exportSeconds, {
      label: `export ${exportTasks} tasks as CSV: rows/s`,
      unit: "rows/s",
      target: "reference",
    });
    report.figure("export.tasks.rss_growth_mib", base === null ? Number.NaN : (peak - base) / 1024, {
      label: `export: runtime memory growth from ${threshold} rows to the end`,
      unit: "MiB",
      target: "< 32",
    });

    // Orders of 2 tasks: one CSV (points given, so nothing is geocoded).
    const orders = settings.importOrders;
    const header =
      "order.external_id,order.reference,category,description,address.raw_address,address.latitude,address.longitude,contact.name";
    const rows = [header];
    for (let i = 0; i < orders; i++) {
      rows.push(
        `O-${i},Ref ${i},pick_up,pick ${i},Warehouse ${i % 50},59.4${i % 10},24.7${i % 10},Sender ${i}`,
      );
      rows.push(`O-${i},Ref ${i},drop_off,drop ${i},Street ${i},59.3${i % 10},24.6${i % 10},Recipient ${i}`);
    }
    const csv = `${rows.join("\r\n")}\r\n`;
    const up = await api("/file_uploads/", {
      token: acc.token,
      body: { file_name: "orders.csv", file_type: "text/csv", source: "integration" },
    });
    if (up.status !== 201) throw new Error(`POST /file_uploads/: ${up.status} ${up.text.slice(0, 300)}`);
    const form = new FormData();
    for (const [k, v] of Object.entries(up.body.s3_signature.fields)) form.append(k, v);
    form.append("file", new Blob([csv], { type: "text/csv" }), "orders.csv");
    await fetch(up.body.s3_signature.url, { method: "POST", body: form });
    const i0 = performance.now();
    const imp = await api("/imports/", { token: acc.token, body: { kind: "orders", file: up.body.url } });
    if (imp.status !== 202) throw new Error(`import: ${imp.status} ${imp.text.slice(0, 300)}`);
    const result = await poll(imp.body.url, () => {});
    const importSeconds = (performance.now() - i0) / 1000;
    log(
      "import",
      result?.state,
      result?.created,
      "orders,",
      result?.failed,
      "failed,",
      importSeconds.toFixed(1),
      "s",
    );
    if (result?.state !== "completed" || result.created !== orders || result.failed !== 0)
      throw new Error(
        `import: ${result?.state}, ${result?.created} of ${orders} created, ${result?.failed} failed`,
      );
    report.figure("import.orders.rows_per_second", (2 * orders) / importSeconds, {
      label: `import ${orders} orders × 2 tasks: rows/s`,
      unit: "rows/s",
      target: "reference",
    });
    report.figure("import.orders.seconds", importSeconds, {
      label: "import: time to the last row applied",
      unit: "s",
      target: "reference",
    });
  },
};
