'use strict';
// castsync's service worker: it keeps the page's own shell (the stylesheet, the scripts, the icons and an
// offline page) so that the installed app opens and says so when the server cannot be reached. It never
// keeps a page or an answer of the server: those hold one person's data, and every request for them goes
// to the network. Signing out empties its cache (app.js).
const SHELL = 'castsync-shell-v1';
const FILES = [
  '/static/style.css',
  '/static/app.js',
  '/static/player.js',
  '/static/queue.js',
  '/static/imports.js',
  '/static/icon-192.png',
  '/static/icon-512.png',
  '/static/offline.html',
];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(FILES)));
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== location.origin) return;
  if (request.mode === 'navigate') {
    // A page: always the server's; the offline page only when it cannot be reached.
    event.respondWith(fetch(request).catch(() => caches.match('/static/offline.html')));
    return;
  }
  if (FILES.includes(url.pathname)) {
    // The shell: the network first (a new release's files), the kept copy when it cannot be reached.
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) {
            const copy = response.clone();
            event.waitUntil(caches.open(SHELL).then((cache) => cache.put(request, copy)));
          }
          return response;
        })
        .catch(() => caches.match(request)),
    );
  }
});
