/**
 * One structured JSON line per request, queue batch and cron run (Workers Logs index JSON
 * fields). Callers pass identifiers and figures only: no token, password, secret, signed URL
 * or request path ever goes in.
 */
export function logLine(fields: Record<string, string | number | boolean | null | undefined>) {
  console.log(JSON.stringify({ level: "info", time: new Date().toISOString(), ...fields }));
}
