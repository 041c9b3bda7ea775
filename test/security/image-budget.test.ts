import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { insertTask } from "../factories";
import { eventually, pngBytes, uploadFile } from "../files/helpers";
import { call, expectStatus, newAccount } from "../helpers";
import { pdfText } from "../pdf";

/** CRC-32 of PNG chunks (ISO/IEC 15948 §5.5, the polynomial of ISO 3309). */
function crc32(bytes: Uint8Array, crc = 0xffffffff): number {
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return crc;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  const typed = new TextEncoder().encode(type);
  out.set(typed, 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, (crc32(out.subarray(4, 8 + data.length)) ^ 0xffffffff) >>> 0);
  return out;
}

/**
 * A real, valid grayscale PNG of `side` × `side` black pixels: tiny on disk (its rows deflate to
 * almost nothing) and `side`² bytes once decoded: the decompression bomb of the finding.
 */
async function hugeBlackPng(side: number): Promise<Uint8Array> {
  const row = new Uint8Array(side + 1); // filter byte 0, then the row's pixels
  let left = side;
  const raw = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left-- > 0) controller.enqueue(row);
      else controller.close();
    },
  });
  const idat = new Uint8Array(
    await new Response(raw.pipeThrough(new CompressionStream("deflate"))).arrayBuffer(),
  );
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, side);
  v.setUint32(4, side);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grayscale
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const parts = [signature, chunk("IHDR", ihdr), chunk("IDAT", idat), chunk("IEND", new Uint8Array())];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("images past the pixel budget are never decoded", () => {
  it("a POD PDF names an 8000 × 8000 PNG instead of decoding it, and still embeds the small photo", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "active", assigneeId: acc.admin.userId });
    const bomb = await hugeBlackPng(8000);
    expect(bomb.length).toBeLessThan(300_000);
    const docs: string[] = [];
    for (const [name, bytes] of [
      ["bomb.png", bomb],
      ["door.png", await pngBytes(320, 240)],
    ] as const) {
      const fu = await uploadFile(acc.admin.token, name, "image/png", bytes);
      const doc = await call("/documents/", {
        token: acc.admin.token,
        body: { account: acc.account.url, task: task.url, file_upload: fu.url },
      });
      expectStatus(doc, 201);
      expect(doc.body.mimetype).toBe("image/png");
      docs.push(doc.body.id);
    }
    // The small one gets its thumbnail; the bomb is skipped by the thumbnailer (same budget).
    await eventually(
      async () => (await call(`/documents/${docs[1]}/`, { token: acc.admin.token })).body.thumbnail,
    );
    expect((await call(`/documents/${docs[0]}/`, { token: acc.admin.token })).body.thumbnail).toBeNull();
    const done = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: `b-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "complete",
      },
    });
    expect(done.body.state).toBe("accepted");
    const res = await exports.default.fetch(
      new Request(`https://api.test/tasks/${task.id}/pod/?format=pdf`, {
        headers: { Authorization: `Bearer ${acc.admin.token}` },
      }),
    );
    expect(res.status).toBe(200);
    const text = await pdfText(new Uint8Array(await res.arrayBuffer()));
    expect(text).not.toMatch(/\/Width 8000/);
    expect(text).toMatch(/\/Width 200/);
  });
});
