// Secrets are not in wrangler.jsonc (they never enter the repo): `wrangler secret put` in
// deployments, .dev.vars locally (created by `npm run dev`), fixed values in vitest.config.ts.
interface AppSecrets {
  /** Comma-separated `kid:base64url-secret` pairs; the first signs, all verify (key rotation). */
  JWT_SECRETS: string;
  STORAGE_ACCESS_KEY_ID: string;
  STORAGE_SECRET_ACCESS_KEY: string;
  DEMO_ADMIN_PASSWORD?: string;
  /** `kid:base64-32-bytes,...`: AES-GCM keys of webhook secrets at rest; the first encrypts, all decrypt. */
  WEBHOOK_SECRETS_KEYS: string;
  GEOCODING_API_KEY?: string;
  /** One-time secret that lets `POST /bootstrap/` create the first admin of an empty deployment. */
  BOOTSTRAP_TOKEN?: string;
  /** The `send_email` binding, declared by deployments that send mail (EMAIL_PROVIDER=workers). */
  EMAIL?: SendEmail;
  /** Twilio (SMS_PROVIDER=twilio): the account SID and its auth token (also the callback signature key). */
  TWILIO_ACCOUNT_SID?: string;
  TWILIO_AUTH_TOKEN?: string;
}
// Diagnostics, off unless set (tests and the bench set them; see the README's settings).
interface AppDiagnostics {
  /** "true": every answer carries `X-D1-Round-Trips`, the request's sequential D1 round trips. */
  EXPOSE_D1_ROUND_TRIPS?: string;
}
interface Env extends AppSecrets, AppDiagnostics {}
declare namespace Cloudflare {
  interface Env extends AppSecrets, AppDiagnostics {}
}
