/**
 * The tracking page's one script (served at /t/live.js, same origin, allowed by the page's CSP):
 * it opens the tracker's stream and, on `changed`, reads the page again and swaps its `<main>`,
 * so a change shows within a second without a reload (the reader keeps their place). The stream
 * carries no data at all: what is shown comes from the page, which shows only the allowlist. On
 * a lost connection it reconnects with back-off and catches up; with scripts off the page's
 * `<noscript>` refresh reloads it every 30 s instead.
 */
export const LIVE_SCRIPT = `(() => {
  "use strict";
  const path = document.documentElement.dataset.stream;
  if (!path || !("WebSocket" in window)) return;
  let socket = null;
  let wait = 1000;
  let busy = false;
  let again = false;
  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const res = await fetch(location.href, { headers: { Accept: "text/html" }, cache: "no-store" });
      if (res.ok) {
        const next = new DOMParser().parseFromString(await res.text(), "text/html");
        const fresh = next.querySelector("main");
        const shown = document.querySelector("main");
        if (fresh && shown) shown.replaceWith(document.importNode(fresh, true));
      }
    } catch (e) {
      // Offline for a moment: the next message or the 30 s check tries again.
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  };
  const connect = () => {
    const url = new URL(path, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(url.href);
    socket.onopen = () => { wait = 1000; refresh(); };
    socket.onmessage = (m) => {
      try { if (JSON.parse(m.data).type === "changed") refresh(); } catch (e) {}
    };
    socket.onclose = () => { socket = null; setTimeout(connect, wait); wait = Math.min(wait * 2, 30000); };
  };
  connect();
  setInterval(() => { if (!socket || socket.readyState !== 1) refresh(); }, 30000);
})();
`;
