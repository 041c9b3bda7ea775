/**
 * The signed storage upload form: an S3 POST policy with AWS Signature Version 4. Split by
 * step: `sign` issues a form, `verify` checks a received one (its comment gives S3's order of
 * checks), with the policy `document`, its `conditions`, the `credential` scope, the form
 * `fields` and `base64` as their own modules.
 */
export { base64EncodeUtf8 } from "./base64";
export {
  type ContentLengthRange,
  checkContentLength,
  expandFilename,
  FILENAME_VARIABLE,
  type FormFieldsInput,
  filenameBase,
  normalizeFields,
} from "./fields";
export { type CreatePostFormOptions, createPostForm, type PostForm } from "./sign";
export {
  type CredentialLookup,
  type VerifiedPostForm,
  type VerifyPostFormOptions,
  verifyPostForm,
} from "./verify";
