// Caches the page's shell only: the HTML, script, style, manifest and icon. API answers
// (sessions, output, events, the WebSocket) always go to the network: stale terminal output
// would mislead, so offline the page says it is offline instead.
const SHELL = "tuic-mobile-shell-v2";
const FILES = ["/mobile", "/mobile/xterm.js", "/mobile/xterm.css", "/mobile/text.js", "/mobile/term.js", "/mobile/confirm.js", "/mobile/upstreams.js", "/mobile/acp.js", "/mobile/app.js", "/mobile/style.css",
  "/mobile/manifest.webmanifest", "/mobile/icon.svg"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// Network first, so a new daemon's page shows at once; the cached shell when the network fails.
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== location.origin || !FILES.includes(url.pathname)) return;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(SHELL).then((cache) => cache.put(event.request, copy));
        }
        return response;
      })
      .catch(() => caches.match(event.request)),
  );
});
