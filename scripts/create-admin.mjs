#!/usr/bin/env node
// `npm run create-admin -- --url https://api.example.org --email you@example.org --name "Acme"`:
// the first admin of a deployment where sign-up is closed. Needs the deployment's one-time
// BOOTSTRAP_TOKEN (printed by `npm run deploy` when it set it) in the environment; asks for
// the password (or reads ADMIN_PASSWORD). Works only while the deployment has no account.
import { createInterface } from "node:readline/promises";

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const url = opt("url");
const email = opt("email");
const name = opt("name") ?? "My account";
const token = process.env.BOOTSTRAP_TOKEN;
if (!url || !email || !token) {
  console.error(
    "usage: BOOTSTRAP_TOKEN=... npm run create-admin -- --url <service URL> --email <e-mail> [--name <account name>]",
  );
  process.exit(2);
}

let password = process.env.ADMIN_PASSWORD;
if (!password) {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  password = await rl.question("Password for the first admin (at least 8 characters): ");
  rl.close();
}

const res = await fetch(new URL("/bootstrap/", url), {
  method: "POST",
  headers: { "Content-Type": "application/json", "X-Bootstrap-Token": token },
  body: JSON.stringify({ name, email, password }),
});
const body = await res.text();
if (res.status !== 201) {
  console.error(`HTTP ${res.status}: ${body}`);
  process.exit(1);
}
console.log(`Created account "${JSON.parse(body).name}" with admin ${email}.`);
console.log("Delete the bootstrap secret now: npx wrangler secret delete BOOTSTRAP_TOKEN --env <env>");
