import { t } from "../shared/i18n";
import { LanguagePicker as SharedPicker } from "../shared/language-picker";
import { signInReason, token } from "../shared/session";
import { SignInForm } from "../shared/sign-in";
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
  return (
    <SignInForm
      words={{
        title: t("app.title"),
        heading: t("signin.heading"),
        email: t("signin.email"),
        password: t("signin.password"),
        submit: t("signin.submit"),
        language: t("language"),
      }}
      reason={signInReason.value}
      signIn={signIn}
    />
  );
}

/** Where a worker is sent (contract §26): the field app's address, as a link in the message. */
function NotYours({ role }: { role: string }) {
  const appUrl = `${location.origin}/app/`;
  const mark = "\u0000";
  const [before, after = ""] = t("notYours.body", { role, url: mark }).split(mark);
  return (
    <main class="signin">
      <h1>{t("notYours.heading")}</h1>
      <p>
        {before}
        <a href="/app/">{appUrl}</a>
        {after}
      </p>
      <button type="button" onClick={signOut}>
        {t("signout")}
      </button>
    </main>
  );
}
