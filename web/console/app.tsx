import { useSignal } from "@preact/signals";
import { t } from "../shared/i18n";
import { LanguagePicker as SharedPicker } from "../shared/language-picker";
import { signInReason, token } from "../shared/session";
import { Board } from "./board-view";
import { notYours, session, signIn, signOut } from "./state";

export function App() {
  if (notYours.value !== null) return <NotYours role={notYours.value} />;
  if (!token.value) return <SignIn />;
  if (!session.value) return <p class="loading">{t("loading")}</p>;
  return <Board />;
}

/** The shared menu with the console's label. */
export const LanguagePicker = () => <SharedPicker label={t("language")} />;

function SignIn() {
  const error = useSignal("");
  const busy = useSignal(false);
  return (
    <main class="signin">
      <h1>{t("app.title")}</h1>
      <form
        aria-labelledby="signin-heading"
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          busy.value = true;
          error.value = (await signIn(String(f.get("email")), String(f.get("password")))) ?? "";
          busy.value = false;
        }}
      >
        <h2 id="signin-heading">{t("signin.heading")}</h2>
        {(error.value || signInReason.value) && (
          <p role="alert" class={error.value ? "error" : "info"}>
            {error.value || signInReason.value}
          </p>
        )}
        <label>
          {t("signin.email")}
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          {t("signin.password")}
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" disabled={busy.value}>
          {t("signin.submit")}
        </button>
      </form>
      <LanguagePicker />
    </main>
  );
}

function NotYours({ role }: { role: string }) {
  const appUrl = `${location.origin}/app/`;
  return (
    <main class="signin">
      <h1>{t("notYours.heading")}</h1>
      <p>{t("notYours.body", { role, url: appUrl })}</p>
      <button type="button" onClick={signOut}>
        {t("signout")}
      </button>
    </main>
  );
}
