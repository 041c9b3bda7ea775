import { describe, expect, it } from "vitest";
import { commandOf, nextBatch, nextUploads, outcomes, type QueuedAction } from "../../web/app/outbox";
import { en, FIELD_CATALOGS } from "../../web/app/strings";

/** The field app's pure parts (contract §27): the offline queue's order and outcomes, its strings. */

const action = (seq: number, extra: Partial<QueuedAction> = {}): QueuedAction => ({
  seq,
  externalId: `app-${seq}`,
  task: `https://api.test/tasks/${seq % 3}/`,
  action: "transit",
  time: new Date(1_700_000_000_000 + seq).toISOString(),
  uploads: [],
  state: "waiting",
  ...extra,
});

const file = (attached?: string) => ({
  kind: "signature" as const,
  blob: new Blob(["x"]),
  fileName: "s.png",
  type: "image/png",
  attached,
});

describe("the field app's offline queue", () => {
  it("batches waiting actions in the order made, never past one whose files are not attached", () => {
    const q = [
      action(3),
      action(1),
      action(2, { state: "refused" }),
      action(4, { uploads: [file()] }),
      action(5),
    ];
    expect(nextBatch(q).map((a) => a.seq)).toEqual([1, 3]);
    // Its files go once the actions before it are sent (they are not held up by its upload).
    expect(nextUploads(q)).toBeNull();
    expect(nextUploads(q.filter((a) => a.seq !== 1 && a.seq !== 3))?.seq).toBe(4);
    // Files attached: it and the actions after it go, in order.
    const done = q.map((a) =>
      a.seq === 4 ? { ...a, uploads: [file("https://api.test/signatures/x/")] } : a,
    );
    expect(nextBatch(done).map((a) => a.seq)).toEqual([1, 3, 4, 5]);
    expect(nextUploads(done)).toBeNull();
    expect(nextBatch(Array.from({ length: 250 }, (_, i) => action(i + 1))).length).toBe(100);
  });

  it("a command keeps the action's external_id and device time on every send", () => {
    const a = action(7, { action: "fail", notes: "Nobody home" });
    expect(commandOf(a)).toEqual({
      task: a.task,
      external_id: "app-7",
      time: a.time,
      action: "fail",
      notes: "Nobody home",
    });
    expect(commandOf(a)).toEqual(commandOf({ ...a }));
  });

  it("reads the answer: rejected is final, a 400 item is refused and the rest wait, anything else waits", () => {
    const batch = [action(1), action(2), action(3)];
    expect(
      outcomes(batch, 201, [
        { state: "accepted", error_message: "" },
        { state: "rejected", error_message: 'Cannot transit a task in state "cancelled".' },
        { state: "accepted", error_message: "" },
      ]),
    ).toEqual([
      { externalId: "app-1", state: "sent" },
      { externalId: "app-2", state: "refused", error: 'Cannot transit a task in state "cancelled".' },
      { externalId: "app-3", state: "sent" },
    ]);
    // A replay of a batch whose answer was lost: 200, the stored commands, nothing applied again.
    expect(
      outcomes(
        batch,
        200,
        batch.map(() => ({ state: "accepted" })),
      ).map((o) => o.state),
    ).toEqual(["sent", "sent", "sent"]);
    expect(outcomes(batch, 400, [{}, { task: ["Invalid hyperlink - Object does not exist."] }, {}])).toEqual([
      { externalId: "app-1", state: "waiting" },
      { externalId: "app-2", state: "refused", error: "task: Invalid hyperlink - Object does not exist." },
      { externalId: "app-3", state: "waiting" },
    ]);
    for (const status of [0, 429, 500, 503])
      expect(outcomes(batch, status, { detail: "busy" }).every((o) => o.state === "waiting")).toBe(true);
  });
});

describe("the field app's languages", () => {
  it("has the twelve languages, each with every key, none empty, the same placeholders", () => {
    const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    expect(Object.keys(FIELD_CATALOGS).sort()).toEqual(
      ["de", "en", "es", "et", "fi", "fr", "it", "lt", "lv", "pl", "ru", "sv"].sort(),
    );
    for (const [lang, catalog] of Object.entries(FIELD_CATALOGS)) {
      expect(Object.keys(catalog).sort(), lang).toEqual(Object.keys(en).sort());
      for (const [key, text] of Object.entries(catalog)) {
        expect(text.trim(), `${lang} ${key}`).not.toBe("");
        expect(placeholders(text), `${lang} ${key}`).toEqual(placeholders(en[key as keyof typeof en]));
      }
    }
  });
});
