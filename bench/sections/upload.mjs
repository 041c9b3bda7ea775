// Section 6: a 100 MiB upload through the storage endpoint: peak RSS growth of the service's
// runtime, beside the floor's for the raw body piped into R2.
import { randomBytes } from "node:crypto";
import { log, peakGrowth } from "../lib/harness.mjs";

const SIZE = 100 * 1024 * 1024;

export const upload = {
  n: 6,
  name: "upload",
  ids: [
    "upload.100mib.rss_growth_mib",
    "upload.100mib.first_rss_growth_mib",
    "upload.floor.put_rss_growth_mib",
    "upload.floor.pipeline_rss_growth_mib",
  ],
  async run({ api, report, small, svc, floor, settings }) {
    const chunk = randomBytes(1024 * 1024);
    const blob = () =>
      new Blob(
        Array.from({ length: SIZE / chunk.length }, () => chunk),
        { type: "application/octet-stream" },
      );
    const floorPids = floor.pids();
    const floorUp = await peakGrowth(floorPids, () =>
      fetch(`${floor.url}/upload`, {
        method: "POST",
        body: blob(),
        headers: { "Content-Length": String(SIZE) },
      }),
    );
    await peakGrowth(floorPids, () => fetch(`${floor.url}/upload-parts`, { method: "POST", body: blob() }));
    const pipelineForm = new FormData();
    pipelineForm.append("key", "x");
    pipelineForm.append("file", blob(), "big.bin");
    const floorPipeline = await peakGrowth(floorPids, () =>
      fetch(`${floor.url}/upload-form`, { method: "POST", body: pipelineForm }),
    );
    for (const f of [floorUp, floorPipeline])
      if (f.result.status >= 300) throw new Error(`floor upload: ${f.result.status}`);
    // The service uploads BENCH_UPLOADS times (default 5): the first upload in a process also
    // pays the one-time growth of the heap (the floor's first upload shows the same, its later
    // ones grow far less). The figure is the median of the later ones (GC timing makes single
    // samples noisy): what a running deployment sees. The first is reported beside it.
    const uploadOnce = async () => {
      const up = await api("/file_uploads/", {
        token: small.token,
        body: { file_name: "big.bin", file_type: "application/octet-stream", source: "integration" },
      });
      if (up.status !== 201) throw new Error(`POST /file_uploads/: ${up.status} ${up.text.slice(0, 300)}`);
      const form = new FormData();
      for (const [k, v] of Object.entries(up.body.s3_signature.fields)) form.append(k, v);
      form.append("file", blob(), "big.bin");
      const t0 = performance.now();
      const r = await peakGrowth(svc.pids(), () =>
        fetch(up.body.s3_signature.url, { method: "POST", body: form }),
      );
      if (r.result.status >= 300)
        throw new Error(`upload: ${r.result.status} ${(await r.result.text()).slice(0, 300)}`);
      return { growthMiB: r.growthMiB, seconds: (performance.now() - t0) / 1000 };
    };
    const first = await uploadOnce();
    const later = [];
    for (let n = 1; n < settings.uploads; n++) later.push(await uploadOnce());
    const growths = later.map((u) => u.growthMiB).sort((x, y) => x - y);
    const median =
      growths.length % 2
        ? growths[(growths.length - 1) / 2]
        : (growths[growths.length / 2 - 1] + growths[growths.length / 2]) / 2;
    log(
      "upload growth MiB:",
      `first ${first.growthMiB.toFixed(1)} (${first.seconds.toFixed(1)} s); then ${growths.map((g) => g.toFixed(1)).join(", ")}; median ${median.toFixed(1)};`,
      `floor: put ${floorUp.growthMiB.toFixed(1)}, endpoint pipeline ${floorPipeline.growthMiB.toFixed(1)}`,
    );
    report.figure("upload.100mib.rss_growth_mib", median, {
      label: `100 MiB upload: peak memory growth of the runtime (median of uploads 2..${settings.uploads})`,
      unit: "MiB",
      target: "< 64",
    });
    report.diagnostic("upload.100mib.first_rss_growth_mib", first.growthMiB, {
      unit: "MiB",
      label: "the same, first upload in a fresh process",
    });
    report.diagnostic("upload.floor.put_rss_growth_mib", floorUp.growthMiB, {
      unit: "MiB",
      label: "floor, first upload in its process: body piped into R2",
    });
    report.diagnostic("upload.floor.pipeline_rss_growth_mib", floorPipeline.growthMiB, {
      unit: "MiB",
      label: "floor: the endpoint's pipeline alone (third upload)",
    });
  },
};
