import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { expectNoOverlap, pdfPages, pdfText } from "../pdf";

// Names and places in the scripts the standard PDF fonts cannot write (WinAnsi only).
const CONTACT = "Пётр Иванов";
const ADDRESS =
  "ulica Bardzo Długa Nazwa Ulicy Piotrkowska 104/12 (wejście od podwórza, domofon 12), 90-001 Łódź, województwo łódzkie, Polska";
const NOTES = "Atstāts kaimiņam Kuldīgā; paskambinti Šiauliai filialui";

async function completed(acc: TestAccount, language: string) {
  expectStatus(
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { language, timezone: "Europe/Warsaw" },
    }),
    200,
  );
  const t = await call("/tasks/", {
    token: acc.admin.token,
    body: {
      account: acc.account.url,
      category: "drop_off",
      address: { raw_address: ADDRESS, location: { type: "Point", coordinates: [19.457, 51.759] } },
      contact: { name: CONTACT, phones: ["+48600100200"] },
      description: "Karton 3 kg — ostrożnie",
      assignee: acc.admin.user,
    },
  });
  expectStatus(t, 201);
  for (const [action, extra] of [
    ["transit", {}],
    ["complete", { notes: NOTES, location: { type: "Point", coordinates: [19.457, 51.759] } }],
  ] as const) {
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: t.body.url,
        external_id: `l-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action,
        ...extra,
      },
    });
    expect(r.body.state, r.body.error_message).toBe("accepted");
  }
  return t.body.id as string;
}

const pod = (acc: TestAccount, id: string, headers: Record<string, string> = {}, query = "?format=pdf") =>
  exports.default.fetch(
    new Request(`https://api.test/tasks/${id}/pod/${query}`, {
      headers: { Authorization: `Bearer ${acc.admin.token}`, ...headers },
    }),
  );

describe("GET /tasks/{id}/pod/ in the reader's language, with any script (contract §19)", () => {
  it("writes Cyrillic, Polish and Baltic text intact in the PDF, in the account's language, no line over another", async () => {
    const acc = await newAccount();
    const id = await completed(acc, "ru");
    const res = await pod(acc, id);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Language")).toBe("ru");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const pages = await pdfPages(bytes);
    const text = pages.map((p) => p.text).join("\n");
    for (const s of [CONTACT, "Łódź", "Kuldīgā", "Šiauliai", "ostrożnie"]) expect(text, s).toContain(s);
    expect(text).not.toContain("?");
    // The account's language: Russian words, the time in the account's zone, named.
    for (const s of ["Подтверждение доставки", "Статус", "Выполнено", "Адрес", "Примечания", "История"])
      expect(text, s).toContain(s);
    expect(text).toContain("(Europe/Warsaw)");
    // The long address wraps onto its own lines instead of running over "Контакт" below it.
    for (const [i, p] of pages.entries()) expectNoOverlap(p, `page ${i + 1}`);
    const address = pages[0].items.filter(
      (it) => ADDRESS.includes(it.str.trim()) && it.str.trim().length > 8,
    );
    expect(address.length).toBeGreaterThan(1);
    // The font is embedded as a subset: the document is a fraction of Noto Sans's 630 KB.
    expect(await pdfText(bytes)).toMatch(/\/FontFile2/);
    expect(bytes.length).toBeLessThan(120_000);
  });

  it("speaks the Accept-Language when it names one of the 12 languages, with q-values; the HTML says the same", async () => {
    const acc = await newAccount();
    const id = await completed(acc, "lv");
    const cases: [string | undefined, string, string[]][] = [
      [undefined, "lv", ["Piegādes apliecinājums", "Izpildīts", "Kontaktpersona"]],
      ["pl-PL,pl;q=0.9,en;q=0.5", "pl", ["Potwierdzenie dostawy", "Zrealizowane", "Kontakt"]],
      ["ja, fi-FI;q=0.8, de;q=0.7", "fi", ["Toimitusvahvistus", "Suoritettu", "Yhteyshenkilö"]],
      ["lt;q=0.2, de;q=0.9", "de", ["Zustellnachweis", "Erledigt", "Adresse"]],
      ["xx", "lv", ["Piegādes apliecinājums"]],
    ];
    for (const [accept, language, words] of cases) {
      const headers: Record<string, string> = accept ? { "Accept-Language": accept } : {};
      const res = await pod(acc, id, headers);
      expect(res.headers.get("Content-Language"), accept).toBe(language);
      const text = (await pdfPages(new Uint8Array(await res.arrayBuffer()))).map((p) => p.text).join("\n");
      const html = await (await pod(acc, id, headers, "")).text();
      expect(html).toContain(`<html lang="${language}">`);
      for (const w of words) {
        expect(text, `${accept}: ${w}`).toContain(w);
        expect(html, `${accept}: ${w}`).toContain(w);
      }
    }
  });
});
