import { useSignal } from "@preact/signals";
import { LanguagePicker } from "./language-picker";

/** The words of the sign-in screen, in each app's own catalog. */
export type SignInWords = {
  title: string;
  heading: string;
  email: string;
  password: string;
  submit: string;
  language: string;
};

/**
 * The sign-in screen of both apps (contract §26): a form named by its heading, the reason the
 * user was sent back here (an expired session) or the failure, and the language menu.
 * `signIn` answers an error message, or null when signed in.
 */
export function SignInForm(props: {
  words: SignInWords;
  reason: string;
  signIn: (email: string, password: string) => Promise<string | null>;
}) {
  const error = useSignal("");
  const busy = useSignal(false);
  const w = props.words;
  return (
    <main class="signin">
      <h1>{w.title}</h1>
      <form
        aria-labelledby="signin-heading"
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          busy.value = true;
          error.value = (await props.signIn(String(f.get("email")), String(f.get("password")))) ?? "";
          busy.value = false;
        }}
      >
        <h2 id="signin-heading">{w.heading}</h2>
        {(error.value || props.reason) && (
          <p role="alert" class={error.value ? "error" : "info"}>
            {error.value || props.reason}
          </p>
        )}
        <label>
          {w.email}
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          {w.password}
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" disabled={busy.value}>
          {w.submit}
        </button>
      </form>
      <LanguagePicker label={w.language} />
    </main>
  );
}
