import { signal } from "@preact/signals";

/**
 * The session token lives in sessionStorage (contract §26): it survives a reload of this tab,
 * is gone when the tab closes, is never sent by the browser by itself (no cookie) and is not
 * shared with other tabs as localStorage would be.
 */
const KEY = "dispatch.session";

export const token = signal<string | null>(sessionStorage.getItem(KEY));
/** Why the user is at the sign-in form again (a 401, a sign-out), shown there. */
export const signInReason = signal<string>("");

export function setToken(value: string | null) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
  token.value = value;
}
