'use strict';
// castsync's service worker: it keeps the page's own shell (the stylesheet, the scripts, the icons and an
// offline page), fetched when it installs, so that the installed app opens and says so when the network is
// gone. It never keeps a page or an answer of the server: those hold one person's data. Signing out
// empties its cache (app.js); a new release's worker (a new SHELL name) fetches the shell anew.
const SHELL = 'castsync-shell-v7';
const FILES = [
  '/static/style.css',
  '/static/app.js',
  '/static/player.js',
  '/static/keep-playing.js',
  '/static/follow-along.js',
  '/static/queue.js',
  '/static/imports.js',
  '/static/notify.js',
  '/static/icon-192.png',
  '/static/icon-512.png',
  '/static/icon-maskable-512.png',
  '/static/manifest.webmanifest',
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

// Online, the worker stays out of the way: every request goes to the network as if it were not there (no
// page, no answer is kept, and redirects, cookies and statuses are the browser's own). Offline, a page is
// the offline page and the shell's files come from the cache.
self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (self.navigator.onLine || request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== location.origin) return;
  if (request.mode === 'navigate') {
    event.respondWith(caches.match('/static/offline.html'));
  } else if (FILES.includes(url.pathname)) {
    // Pages name the files at versioned addresses (`?v=`); the shell keeps each at its plain one.
    event.respondWith(caches.match(request, { ignoreSearch: true }).then((kept) => kept ?? fetch(request)));
  }
});

// New-episode notifications (docs/notifications.md): the server's Web Push message, decrypted by the
// browser, is JSON with the title, the body, the podcast's artwork and the episode's page. The worker
// shows it; a click opens (or focuses) the episode's page.
self.addEventListener('push', (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: event.data ? event.data.text() : 'castsync' };
  }
  const options = { body: data.body ?? '', data: { url: data.url ?? '/web/new' }, tag: data.tag };
  if (data.icon) options.icon = data.icon;
  event.waitUntil(self.registration.showNotification(data.title ?? 'New episodes', options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = new URL(event.notification.data?.url ?? '/web/new', location.origin);
  // Only a page of this site is opened.
  const url = target.origin === location.origin ? target.href : `${location.origin}/web/new`;
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((w) => w.url === url);
      return open ? open.focus() : self.clients.openWindow(url);
    }),
  );
});
