/** Whether D1 answers a trivial query. A failure is logged (without details on the wire). */
export async function databaseAnswers(env: Env): Promise<boolean> {
  try {
    const row = await env.DB.prepare("SELECT 1 AS ok").first<{ ok: number }>();
    return row?.ok === 1;
  } catch (err) {
    console.error(
      JSON.stringify({ level: "error", msg: "health check: database unavailable", error: String(err) }),
    );
    return false;
  }
}
