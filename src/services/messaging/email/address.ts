/**
 * What the service accepts as an e-mail address where one is sent to: one `local@domain`
 * (RFC 5321 §4.1.2 reduced to what mailboxes use in practice), no spaces, no control characters
 * and no angle brackets, commas or semicolons, so an address can never carry a second header
 * line (`\r\nBcc: ...`) or a second recipient into a message.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
export const EMAIL_ADDRESS = /^[^\s@<>,;"\x00-\x1f\x7f]{1,64}@[^\s@<>,;"\x00-\x1f\x7f]{1,253}$/;

/** Control characters (CR, LF, ...): never in a value that may become a header. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
export const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/;
