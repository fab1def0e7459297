'use strict';
// The episode page's player: it starts at the position the apps synced, and writes the position back as
// an episode action (device "web") when paused, every 30 s while playing, and when the page is left while
// playing. The page works without it: the audio element plays, and "Mark played" is a form.
(() => {
  const audio = document.getElementById('player');
  if (!audio) return;
  const status = document.getElementById('player-status');
  const start = Number(audio.dataset.start) || 0;
  const whole = (n) => String(Math.max(0, Math.floor(Number.isFinite(n) ? n : 0)));
  let started = start;
  let timer;

  const body = () =>
    new URLSearchParams({
      _csrf: audio.dataset.csrf,
      started: whole(started),
      position: whole(audio.currentTime),
      total: whole(audio.duration),
    });
  const say = (text) => {
    if (status) status.textContent = text;
  };
  const save = () =>
    fetch(audio.dataset.save, { method: 'POST', body: body(), credentials: 'same-origin' }).then(
      (r) => say(r.ok ? `Position saved: ${whole(audio.currentTime)} s.` : 'The position could not be saved.'),
      () => say('The position could not be saved: is the server reachable?'),
    );

  const seek = () => {
    if (start > 0 && (!Number.isFinite(audio.duration) || start < audio.duration)) audio.currentTime = start;
  };
  // The metadata may have arrived before this deferred script ran (a fast or cached source).
  if (audio.readyState >= HTMLMediaElement.HAVE_METADATA) seek();
  else audio.addEventListener('loadedmetadata', seek, { once: true });
  audio.addEventListener('play', () => {
    started = audio.currentTime;
    clearInterval(timer);
    timer = setInterval(save, 30_000);
  });
  audio.addEventListener('pause', () => {
    clearInterval(timer);
    save();
  });
  window.addEventListener('pagehide', () => {
    if (!audio.paused) navigator.sendBeacon(audio.dataset.save, body());
  });
})();
