'use strict';
// On every page: the service worker that makes castsync installable and opens it offline (sw.js), and,
// after signing out, an empty cache for it.
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/sw.js').catch(() => undefined);
}
if ('caches' in window && new URLSearchParams(location.search).has('signed_out')) {
  caches.keys().then((keys) => Promise.all(keys.map((key) => caches.delete(key))));
}
