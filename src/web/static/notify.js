'use strict';
// The account page's "Notify me": asks for permission only when pressed, subscribes this browser to Web
// Push through the service worker with the server's VAPID key, and sends the subscription to the server.
// Shown only where the browser can (on an iPhone: the web app opened from the home screen, iOS 16.4+).
(() => {
  const box = document.getElementById('this-browser');
  const button = document.getElementById('notify-me');
  const status = document.getElementById('notify-status');
  if (!box || !button || !status) return;
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    status.textContent =
      'This browser cannot show notifications of a web page (on an iPhone: add castsync to the home screen and open it from there).';
    return;
  }
  const keyBytes = (base64url) => {
    const text = atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(text, (c) => c.charCodeAt(0));
  };
  const post = (url, fields) =>
    fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      body: new URLSearchParams({ _csrf: box.dataset.csrf, ...fields }),
    });
  const show = async () => {
    const registration = await navigator.serviceWorker.ready;
    const current = await registration.pushManager.getSubscription();
    button.hidden = false;
    button.textContent = current && Notification.permission === 'granted' ? 'Stop notifying this browser' : 'Notify me';
    return { registration, current };
  };
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const { registration, current } = await show();
      if (current && Notification.permission === 'granted') {
        await post('/web/account/browsers/remove', { endpoint: current.endpoint });
        await current.unsubscribe();
        status.textContent = 'This browser will not show notifications.';
      } else {
        if ((await Notification.requestPermission()) !== 'granted') {
          status.textContent = 'Notifications are blocked for this site: allow them in the browser’s settings.';
          return;
        }
        const sub = await registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(box.dataset.key),
        });
        const { endpoint, keys } = sub.toJSON();
        const res = await post('/web/account/browsers', { endpoint, p256dh: keys.p256dh, auth: keys.auth });
        status.textContent = res.ok
          ? 'This browser will show a notification when a new episode comes out.'
          : 'The server did not take this browser’s subscription.';
      }
      await show();
    } catch (err) {
      status.textContent = `Could not subscribe this browser: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  });
  show().catch(() => undefined);
})();
