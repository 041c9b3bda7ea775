import { effect } from "@preact/signals";
import { render } from "preact";
import { lang } from "../shared/i18n";
import { App } from "./app";
import { tf } from "./locales";
import { start } from "./state";

effect(() => {
  document.documentElement.lang = lang.value;
  document.title = tf("title");
});
render(<App />, document.getElementById("app")!);
void start();
// The app's files for offline starts (contract §27): a service worker scoped to /app/, from
// a file of our own origin (no inline script: the page's CSP allows none).
if ("serviceWorker" in navigator) void navigator.serviceWorker.register("/app/sw.js", { scope: "/app/" });
