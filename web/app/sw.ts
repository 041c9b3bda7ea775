/// <reference lib="webworker" />
import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from "workbox-precaching";
import { NavigationRoute, registerRoute } from "workbox-routing";

/**
 * The field app's service worker (Workbox): the app's own files are precached at install (the
 * list and their hashes are written in at build time), so the app starts with no network at
 * all after its first load; navigations under /app/ are answered with the cached page. API
 * requests are not cached here: the app keeps the day's tasks in IndexedDB itself, where it can
 * tell what the server has from what the phone did (web/app/store.ts).
 */
declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: { url: string; revision: string | null }[] };

cleanupOutdatedCaches();
precacheAndRoute(self.__WB_MANIFEST);
registerRoute(new NavigationRoute(createHandlerBoundToURL("/app/index.html"), { allowlist: [/^\/app\//] }));
self.addEventListener("install", () => void self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
