'use strict';
// On every page: the service worker that makes castsync installable and opens it offline (sw.js), and,
// after signing out, an empty cache for it.
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/sw.js').catch(() => undefined);
}
if ('caches' in window && new URLSearchParams(location.search).has('signed_out')) {
  caches.keys().then((keys) => Promise.all(keys.map((key) => caches.delete(key))));
}
// A row's menu (a <details>, which works without script) closes as a menu does: on Escape, back to its
// button, and on a click elsewhere.
document.addEventListener('keydown', (event) => {
  const menu = event.key === 'Escape' && document.activeElement?.closest('details.row-menu[open]');
  if (!menu) return;
  menu.open = false;
  menu.querySelector('summary').focus();
});
document.addEventListener('click', (event) => {
  for (const menu of document.querySelectorAll('details.row-menu[open]')) {
    if (!menu.contains(event.target)) menu.open = false;
  }
});
