import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { errorMessage } from "../shared/api";
import { type MessageKey, t } from "../shared/i18n";
import { UNASSIGNED } from "./board";
import { firstLine } from "./board-view";
import { Dialog } from "./dialogs";
import { board, session, tasks, workerName } from "./state";

type Result = { task: string; assignee: string | null; reason: string | null };

/**
 * "Auto-assign" (contract §30): the shown day's Unassigned placed by §29's insertion, in the
 * order shown, and each result said: the worker it went to, or why it fits nowhere. The board
 * follows through the stream (each placement is an `assign` command's events).
 */
export function AutoAssignDialog({ onClose }: { onClose: () => void }) {
  const results = useSignal<Result[] | null>(null);
  const error = useSignal("");
  useEffect(() => {
    const s = session.value!;
    const shown = (board.value.get(UNASSIGNED) ?? []).map((x) => x.url);
    if (!shown.length) {
      results.value = [];
      return;
    }
    s.client.POST("/tasks/auto_assign/", { body: { tasks: shown } }).then(
      (r) => {
        if (r.data) results.value = r.data;
        else error.value = t("autoAssign.failed", { reason: errorMessage(r.error, "tasks") });
      },
      (err) => {
        error.value = t("autoAssign.failed", { reason: (err as Error).message });
      },
    );
  }, []);
  const name = (url: string) => {
    const task = [...tasks.value.values()].find((x) => x.url === url);
    return task ? firstLine(task) : url;
  };
  const list = results.value;
  return (
    <Dialog id="auto-assign" title={t("autoAssign.heading")} onClose={onClose}>
      {!list && !error.value && <p role="status">{t("autoAssign.running")}</p>}
      {error.value && <p role="alert">{error.value}</p>}
      {list && !list.length && <p>{t("autoAssign.none")}</p>}
      {list && list.length > 0 && (
        <ul class="auto-assign-results">
          {list.map((r) => (
            <li key={r.task}>
              {name(r.task)}:{" "}
              {r.assignee
                ? t("autoAssign.to", { worker: workerName(r.assignee) })
                : t(`reason.${r.reason}` as MessageKey)}
            </li>
          ))}
        </ul>
      )}
      <div class="buttons">
        <button type="button" onClick={onClose}>
          {t("close")}
        </button>
      </div>
    </Dialog>
  );
}
