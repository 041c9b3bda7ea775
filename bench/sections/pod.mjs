// Section 9: proof of delivery as PDF for a task with 10 photos of 5 MB each (contract §19): the
// runtime's CPU time and peak memory growth while it renders (thumbnails are embedded).
import { randomBytes } from "node:crypto";
import zlib from "node:zlib";
import { log, makeAccount, peakGrowth, timed } from "../lib/harness.mjs";

/** A 5 MB PNG: 1,300 × 1,300 random RGB pixels, stored uncompressed (PNG, RFC 2083). */
function png() {
  const w = 1300;
  const h = 1300;
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) randomBytes(w * 3).copy(raw, y * (w * 3 + 1) + 1);
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(raw, { level: 0 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export const pod = {
  n: 9,
  name: "pod",
  ids: ["pod.pdf.cpu_ms", "pod.pdf.rss_growth_mib"],
  async run({ api, report, svc }) {
    const acc = await makeAccount(api, "pod");
    const task = await api("/tasks/", {
      token: acc.token,
      body: {
        account: acc.account.url,
        category: "drop_off",
        address: { raw_address: "Tallinn" },
        assignee: acc.user.url,
      },
    });
    if (task.status !== 201) throw new Error(`POST /tasks/: ${task.status} ${task.text.slice(0, 300)}`);
    const docs = [];
    for (let i = 0; i < 10; i++) {
      const up = await api("/file_uploads/", {
        token: acc.token,
        body: { file_name: `photo-${i}.png`, file_type: "image/png", source: "integration" },
      });
      if (up.status !== 201) throw new Error(`POST /file_uploads/: ${up.status} ${up.text.slice(0, 300)}`);
      const form = new FormData();
      for (const [k, v] of Object.entries(up.body.s3_signature.fields)) form.append(k, v);
      form.append("file", new Blob([png()], { type: "image/png" }), `photo-${i}.png`);
      await fetch(up.body.s3_signature.url, { method: "POST", body: form });
      const d = await api("/documents/", {
        token: acc.token,
        body: { account: acc.account.url, task: task.body.url, file_upload: up.body.url },
      });
      if (d.status !== 201) throw new Error(`POST /documents/: ${d.status} ${d.text.slice(0, 300)}`);
      docs.push(d.body.id);
    }
    const deadline = Date.now() + 180_000;
    for (const id of docs) {
      while (
        Date.now() < deadline &&
        !(await api(`/documents/${id}/`, { token: acc.token })).body?.thumbnail
      ) {
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    for (const action of ["activate", "complete"]) {
      await api("/task_commands/", {
        token: acc.token,
        body: {
          task: task.body.url,
          external_id: `pod-${action}-${Math.random()}`,
          time: new Date().toISOString(),
          action,
        },
      });
    }
    const pids = svc.pids();
    const fetchPod = () =>
      fetch(`${svc.url}/tasks/${task.body.id}/pod/?format=pdf`, {
        headers: { Authorization: `Bearer ${acc.token}` },
      });
    await (await fetchPod()).arrayBuffer(); // warm: the first render also loads the PDF library
    const { result, growthMiB } = await peakGrowth(
      pids,
      () =>
        timed(pids, async () => {
          const res = await fetchPod();
          return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
        }),
      5,
    );
    const { result: pdf, cpu, ms } = result;
    log("pod", pdf.status, `${pdf.bytes} bytes`, `${ms.toFixed(0)} ms wall`, `${cpu.toFixed(0)} ms cpu`);
    if (pdf.status !== 200) throw new Error(`GET /tasks/{id}/pod/: ${pdf.status}`);
    report.figure("pod.pdf.cpu_ms", cpu, {
      label: "POD PDF, 10 photos of 5 MB: runtime CPU",
      unit: "ms",
      target: "< 2000",
    });
    report.figure("pod.pdf.rss_growth_mib", growthMiB, {
      label: "POD PDF: peak memory growth while rendering",
      unit: "MiB",
      target: "< 128",
    });
  },
};
