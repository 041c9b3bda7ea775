import { expect } from "vitest";
import { call, expectStatus, type TestAccount } from "../helpers";

export async function newForm(acc: TestAccount, name = "Checklist") {
  const r = await call("/forms/", { token: acc.admin.token, body: { name } });
  expectStatus(r, 201);
  return r.body;
}

export async function newField(acc: TestAccount, form: { url: string }, body: Record<string, unknown>) {
  const r = await call("/form_fields/", { token: acc.admin.token, body: { form: form.url, ...body } });
  expectStatus(r, 201);
  return r.body;
}

/** A form with a required select, an optional number, and a field hidden from workers. */
export async function inspectionForm(acc: TestAccount) {
  const form = await newForm(acc, "Inspection");
  await newField(acc, form, {
    key: "condition",
    field_type: "select",
    choices: ["ok", "damaged"],
    default: "ok",
    required: true,
    position: 1,
  });
  await newField(acc, form, { key: "count", field_type: "number", position: 2 });
  await newField(acc, form, { key: "internal", field_type: "text", visible_to_worker: false, position: 3 });
  return form;
}

export async function respond(token: string, body: Record<string, unknown>) {
  return call("/form_responses/", { token, body });
}

export function expectDataErrors(r: { status: number; body: any; text: string }, keys: string[]) {
  expectStatus(r as any, 400);
  expect(Object.keys(r.body.data ?? {}).sort(), r.text).toEqual([...keys].sort());
}
