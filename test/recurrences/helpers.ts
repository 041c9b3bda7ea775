import type { TestAccount } from "../helpers";

export const taskTemplate = (acc: TestAccount, extra: Record<string, unknown> = {}) => ({
  account: acc.account.url,
  category: "drop_off",
  address: { raw_address: "Tallinn" },
  description: "weekly delivery",
  ...extra,
});

export const recurrenceBody = (acc: TestAccount, extra: Record<string, unknown> = {}) => ({
  rule: "FREQ=WEEKLY;BYDAY=MO,WE",
  start: "2030-03-04T09:00:00",
  timezone: "Europe/Helsinki",
  kind: "task",
  template: taskTemplate(acc),
  ...extra,
});
