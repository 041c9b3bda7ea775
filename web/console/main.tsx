import { effect } from "@preact/signals";
import { render } from "preact";
import { lang, t } from "../shared/i18n";
import { App } from "./app";
import { start } from "./state";

effect(() => {
  document.documentElement.lang = lang.value;
  document.title = t("app.title");
});
render(<App />, document.getElementById("app")!);
start();
