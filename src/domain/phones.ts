/**
 * A contact's phone number as written (issue 52 item 5): digits, an optional leading `+`,
 * spaces and `-().` as people group numbers, and an optional extension `;ext=<digits>` (RFC 3966
 * §5.1.5's `ext` parameter, as the `tel:` URI the apps link it with carries it). At least one
 * digit. Anything else (a `javascript:` URL, markup) is refused on write: the field app and the
 * console turn the value into a `tel:` link.
 *
 * Not E.164: a number typed the way a dispatcher got it is a valid contact phone; an SMS is sent
 * only to those that are E.164 once spaces and dashes are removed (src/services/notifications).
 */
export const CONTACT_PHONE = /^\+?[0-9 ().-]*[0-9][0-9 ().-]*(;ext=[0-9]+)?$/;

export const CONTACT_PHONE_MESSAGE =
  "Enter a phone number: digits, an optional leading +, spaces and -().; optionally ;ext= and digits.";
