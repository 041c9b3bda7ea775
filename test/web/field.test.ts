import { describe, expect, it } from "vitest";
import {
  commandOf,
  countByUser,
  FORM_COMPLETED,
  formData,
  formOutcome,
  isOwner,
  KEEP_DAYS,
  nextBatch,
  nextPrep,
  oneAtATime,
  outcomes,
  type QueuedAction,
  toDiscard,
} from "../../web/app/outbox";
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
    expect(nextPrep(q)).toBeNull();
    expect(nextPrep(q.filter((a) => a.seq !== 1 && a.seq !== 3))?.seq).toBe(4);
    // Files attached: it and the actions after it go, in order.
    const done = q.map((a) =>
      a.seq === 4 ? { ...a, uploads: [file("https://api.test/signatures/x/")] } : a,
    );
    expect(nextBatch(done).map((a) => a.seq)).toEqual([1, 3, 4, 5]);
    expect(nextPrep(done)).toBeNull();
    expect(nextBatch(Array.from({ length: 250 }, (_, i) => action(i + 1))).length).toBe(100);
  });

  it("a start after another task's completion waits for the next batch (the transit/active limit)", () => {
    const on = (seq: number, task: string, act: string) =>
      action(seq, { task: `https://api.test/tasks/${task}/`, action: act });
    const day = [
      on(1, "a", "accept"),
      on(2, "a", "transit"),
      on(3, "a", "activate"),
      on(4, "a", "complete"),
      on(5, "b", "accept"),
      on(6, "b", "transit"),
      on(7, "b", "fail"),
      on(8, "c", "activate"),
    ];
    expect(nextBatch(day).map((a) => a.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(nextBatch(day.slice(5)).map((a) => a.seq)).toEqual([6, 7]);
    expect(nextBatch(day.slice(7)).map((a) => a.seq)).toEqual([8]);
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

describe("the field app's queue belongs to its user (issue 52)", () => {
  const aino = { user: "https://api.test/users/a/", account: "https://api.test/accounts/1/" };
  const bertil = { user: "https://api.test/users/b/", account: "https://api.test/accounts/1/" };
  const now = Date.parse("2026-11-28T12:00:00Z");
  const made = (seq: number, daysAgo: number, owner?: typeof aino) =>
    action(seq, { owner, time: new Date(now - daysAgo * 86_400_000).toISOString() });

  it("an owner is a user of an account: another user, another account or none is not the owner", () => {
    expect(isOwner(aino, { ...aino })).toBe(true);
    expect(isOwner(aino, bertil)).toBe(false);
    expect(isOwner(aino, { ...aino, account: "https://api.test/accounts/2/" })).toBe(false);
    expect(isOwner(undefined, aino)).toBe(false);
    expect(isOwner(aino, null)).toBe(false);
  });

  it(`discards unsent actions after ${KEEP_DAYS} days, never the signed-in user's`, () => {
    const q = [made(1, 8, aino), made(2, 6, aino), made(3, 8, bertil), made(4, 30), made(5, 1)];
    // Bertil signed in: Aino's old action and the unowned old one go; Bertil's own stays.
    expect(toDiscard(q, bertil, now).map((a) => a.seq)).toEqual([1, 4]);
    // Nobody signed in: every old one goes.
    expect(toDiscard(q, null, now).map((a) => a.seq)).toEqual([1, 3, 4]);
    expect(countByUser(toDiscard(q, null, now), { [aino.user]: 2 })).toEqual({
      [aino.user]: 3,
      [bertil.user]: 1,
    });
  });
});

describe("the field app's sending, one pass at a time", () => {
  it("a pass that ends before its first await does not stop the passes after it (issue 52 item 6)", async () => {
    let runs = 0;
    let online = false;
    // As sync() offline: returns at once, before anything is awaited.
    const sync = oneAtATime(async () => {
      runs++;
      if (!online) return;
      await Promise.resolve();
    });
    await sync();
    online = true;
    await sync();
    await sync();
    expect(runs).toBe(3);
  });

  it("a call while a pass runs gets that pass, not a second one", async () => {
    let runs = 0;
    const gated = () => {
      let resolve = () => {};
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    };
    let gate = gated();
    const sync = oneAtATime(async () => {
      runs++;
      await gate.promise;
    });
    const a = sync();
    expect(sync()).toBe(a);
    gate.resolve();
    await a;
    expect(runs).toBe(1);
    gate = gated();
    const c = sync();
    expect(c).not.toBe(a);
    gate.resolve();
    await c;
    expect(runs).toBe(2);
  });
});

describe("the field app's forms before Complete", () => {
  const form = "https://api.test/forms/f1/";
  const fill = (extra = {}) => ({ form, data: { note: "ok", photo: null }, ...extra });

  it("a command waits for its forms as for its files, and the actions after it wait too", () => {
    const q = [
      action(1, { action: "accept" }),
      action(2, { action: "complete", forms: [fill()] }),
      action(3, { action: "accept" }),
    ];
    expect(nextBatch(q).map((a) => a.seq)).toEqual([1]);
    expect(nextPrep(q.slice(1))?.seq).toBe(2);
    const written = q.map((a) =>
      a.seq === 2 ? { ...a, forms: [fill({ response: "r", written: true })] } : a,
    );
    // Written but not completed yet: still held.
    expect(nextBatch(written).map((a) => a.seq)).toEqual([1]);
    const done = q.map((a) => (a.seq === 2 ? { ...a, forms: [fill({ done: true })] } : a));
    expect(nextBatch(done).map((a) => a.seq)).toEqual([1, 2, 3]);
    expect(nextPrep(done)).toBeNull();
  });

  it("a form's photo field takes the URL of the document its file became, once attached", () => {
    const photo = {
      ...file(),
      kind: "photo" as const,
      field: { form, key: "photo" },
    };
    const other = {
      ...file("https://api.test/signatures/s/"),
      field: { form: "https://api.test/forms/f2/", key: "x" },
    };
    expect(formData(fill(), [photo, other])).toEqual({ note: "ok", photo: null });
    expect(formData(fill(), [{ ...photo, attached: "https://api.test/documents/d/" }, other])).toEqual({
      note: "ok",
      photo: "https://api.test/documents/d/",
    });
  });

  it("reads the answers of writing and completing a response", () => {
    expect(formOutcome(200, {})).toBe("done");
    expect(formOutcome(201, {})).toBe("done");
    // Completed already (a complete whose answer was lost): done, not refused.
    expect(formOutcome(400, { non_field_errors: [FORM_COMPLETED] })).toBe("done");
    expect(formOutcome(400, { data: { sig: ["This field is required."] } })).toBe("refused");
    expect(formOutcome(404, { detail: "Not found." })).toBe("refused");
    expect(formOutcome(401, {})).toBe("unauthorized");
    for (const status of [0, 429, 500, 503]) expect(formOutcome(status, null)).toBe("waiting");
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

describe("Today's order told when the dispatcher changes it (contract §30)", () => {
  const t = (id: string, state = "assigned") => ({ id, state }) as never;
  it("a new order of the open stops, or a stop added, is a change; a stop done or gone is not", async () => {
    const { orderChanged } = await import("../../web/app/order");
    expect(orderChanged([t("a"), t("b")], [t("b"), t("a")])).toBe(true);
    expect(orderChanged([t("a"), t("b")], [t("a"), t("b"), t("c")])).toBe(true);
    expect(orderChanged([t("a"), t("b")], [t("a", "completed"), t("b")])).toBe(false);
    expect(orderChanged([t("a"), t("b"), t("c")], [t("a"), t("c")])).toBe(false);
    expect(orderChanged([t("a"), t("b")], [t("a"), t("b")])).toBe(false);
    // The first read of the day tells nothing.
    expect(orderChanged([], [t("a")])).toBe(false);
  });
});
