'use strict';
// The episode page's player: it starts at the position the apps synced, and writes the position back as
// an episode action (device "web") when paused, every 30 s while playing, and when the page is left or
// hidden while playing; while the server cannot be reached the positions wait in this browser and go, in order, when it
// can. When the episode ends (a play to the end: the apps mark it played, and it leaves Up next) the
// next episode of Up next opens and plays. castsync's own controls in place of the audio element's (a play
// button, a scrubber with the time left, by keys too: arrows 5 s, page keys a minute). Skip back and forward (10 s and 30 s, or the account's lengths), a speed (the person's for the
// podcast, kept on the server), a sleep timer, keys (k or space: play/pause, j: back, l: forward, < and >: slower, faster) and the
// lock screen's and headphones' controls (the Media Session API). The page works without it: the audio
// element plays, and "Mark played" is a form.
(() => {
  const audio = document.getElementById('player');
  if (!audio) return;
  const status = document.getElementById('player-status');
  const controls = document.getElementById('player-controls');
  const speed = document.getElementById('speed');
  const next = audio.dataset.next;
  const start = Number(audio.dataset.start) || 0;
  // The person's skip lengths (the account page), else 10 s back and 30 s forward.
  const back = Number(audio.dataset.skipBack) || 10;
  const forward = Number(audio.dataset.skipForward) || 30;
  // A time as h:mm:ss or m:ss (follow-along.js writes the chapters' times with it too).
  const clock = (s) => {
    const t = Math.max(0, Math.floor(s));
    const [h, m, sec] = [Math.floor(t / 3600), Math.floor(t / 60) % 60, t % 60];
    return (h > 0 ? `${h}:${String(m).padStart(2, '0')}` : String(m)) + `:${String(sec).padStart(2, '0')}`;
  };
  window.castsyncClock = clock;
  const whole = (n) => String(Math.max(0, Math.floor(Number.isFinite(n) ? n : 0)));
  let started = start;
  let timer;

  const body = () =>
    new URLSearchParams({
      _csrf: audio.dataset.csrf,
      started: whole(started),
      position: whole(audio.currentTime),
      total: whole(audio.duration),
      // The time of the play: a position kept while offline keeps it, so an app's later one wins.
      at: new Date().toISOString(),
    });
  const say = (text) => {
    if (status) status.textContent = text;
  };

  // Positions the server could not be sent are kept in this browser, in order, and sent when it can be
  // reached again (with this page's form token: the session's). Each is the signed-in person's: a browser
  // may be shared, and another person's waits until they sign in here again (one kept without a name, by an
  // older release, cannot be told apart and is dropped).
  const PENDING = 'castsync-pending-positions';
  const account = audio.dataset.account;
  const mine = (entry) => entry.account === account;
  const pending = () => {
    try {
      return JSON.parse(localStorage.getItem(PENDING) ?? '[]');
    } catch {
      return [];
    }
  };
  const keep = (list) => {
    try {
      localStorage.setItem(PENDING, JSON.stringify(list));
    } catch {
      // Storage refused (a private window): the position is lost with the page, as without script.
    }
  };
  const post = (url, fields) => {
    const data = new URLSearchParams(fields);
    data.set('_csrf', audio.dataset.csrf);
    return fetch(url, { method: 'POST', body: data, credentials: 'same-origin' });
  };
  let flushing = false;
  const flush = async () => {
    if (flushing) return;
    flushing = true;
    try {
      keep(pending().filter((entry) => entry.account !== undefined));
      for (let entry = pending().find(mine); entry; entry = pending().find(mine)) {
        const r = await post(entry.url, entry.fields);
        // Refused (an episode gone, a session ended): dropped, or it would block the others for good.
        if (!r.ok && r.status !== 400 && r.status !== 404) break;
        const list = pending();
        list.splice(list.findIndex(mine), 1);
        keep(list);
      }
    } catch {
      // Still unreachable: the next "online" tries again.
    } finally {
      flushing = false;
    }
  };
  const save = () => {
    const fields = Object.fromEntries(body());
    return post(audio.dataset.save, fields).then(
      (r) => say(r.ok ? `Position saved: ${whole(audio.currentTime)} s.` : 'The position could not be saved.'),
      () => {
        keep([...pending(), { account, url: audio.dataset.save, fields }]);
        say('The server cannot be reached: the position is kept in this browser and sent when it can be.');
      },
    );
  };
  window.addEventListener('online', flush);
  flush();

  const seek = () => {
    if (start > 0 && (!Number.isFinite(audio.duration) || start < audio.duration)) audio.currentTime = start;
  };
  // The metadata may have arrived before this deferred script ran (a fast or cached source).
  if (audio.readyState >= HTMLMediaElement.HAVE_METADATA) seek();
  else audio.addEventListener('loadedmetadata', seek, { once: true });
  let saving = Promise.resolve();
  audio.addEventListener('play', () => {
    started = audio.currentTime;
    clearInterval(timer);
    timer = setInterval(save, 30_000);
  });
  audio.addEventListener('pause', () => {
    clearInterval(timer);
    saving = save();
  });
  // Left, closed, or hidden (another tab or app in front, the phone locked: the browser may end it unseen).
  const leaving = () => {
    if (audio.paused) return;
    if (navigator.onLine) navigator.sendBeacon(audio.dataset.save, body());
    else keep([...pending(), { account, url: audio.dataset.save, fields: Object.fromEntries(body()) }]);
  };
  window.addEventListener('pagehide', leaving);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') leaving();
  });

  // Through Up next: the end is saved (the pause before "ended" wrote it), then the next episode opens.
  const goNext = () => {
    if (next) location.href = next;
  };
  audio.addEventListener('ended', () => {
    if (next && !sleepAtEnd) saving.then(goNext);
  });
  // Opened as the next of Up next: play (the browser may refuse without a gesture; the player stays).
  if (new URLSearchParams(location.search).has('play')) audio.play().catch(() => say('Press play to go on.'));

  // Skip and speed.
  const skip = (seconds) => {
    const end = Number.isFinite(audio.duration) ? audio.duration : Infinity;
    audio.currentTime = Math.max(0, Math.min(end, audio.currentTime + seconds));
  };
  const toggle = () => (audio.paused ? audio.play().catch(() => say('Press play to go on.')) : audio.pause());
  // The speed is the person's for the podcast, kept on the server (the page comes with it selected).
  const setRate = (rate, keepIt = true) => {
    audio.playbackRate = rate;
    audio.defaultPlaybackRate = rate;
    speed.value = String(rate);
    if (keepIt) post(audio.dataset.speed, { speed: String(rate) }).catch(() => undefined);
  };
  if (controls && speed) {
    wire();
    speed.addEventListener('change', () => setRate(Number(speed.value)));
    setRate(Number(speed.value), false);
    const rates = [...speed.options].map((o) => Number(o.value));
    const step = (by) => {
      const at = rates.indexOf(audio.playbackRate);
      setRate(rates[Math.max(0, Math.min(rates.length - 1, (at === -1 ? rates.indexOf(1) : at) + by))]);
    };
    document.addEventListener('keydown', (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.target.closest('input, select, textarea, button, a, audio, summary')) return;
      const keys = {
        k: toggle,
        ' ': toggle,
        j: () => skip(-back),
        l: () => skip(forward),
        '<': () => step(-1),
        '>': () => step(1),
      };
      const act = keys[event.key];
      if (!act) return;
      event.preventDefault();
      act();
    });
  }

  /**
   * castsync's controls in place of the audio element's: play and pause, skip, and a scrubber with the time
   * left (the chapters' marks on it are follow-along.js's). The stylesheet already shows them where script
   * runs; the classes do it for a browser that does not know `@media (scripting)`.
   */
  function wire() {
    audio.classList.add('replaced');
    controls.classList.add('ready');
    const play = document.getElementById('play');
    const scrubber = document.getElementById('scrubber');
    const [elapsed, left, chapter] = ['elapsed', 'left', 'chapter'].map((n) => document.getElementById(`player-${n}`));
    for (const button of controls.querySelectorAll('[data-skip]')) {
      button.addEventListener('click', () => skip(Number(button.dataset.skip)));
    }
    play.addEventListener('click', toggle);
    const playing = () => {
      play.classList.toggle('playing', !audio.paused);
      play.querySelector('.visually-hidden').textContent = audio.paused ? 'Play' : 'Pause';
    };
    const total = () => (Number.isFinite(audio.duration) ? audio.duration : Number(audio.dataset.duration) || 0);
    let held = false;
    const show = () => {
      const [now, end] = [audio.currentTime, total()];
      const rest = end > now ? `${clock(end - now)} left` : '';
      if (!held) scrubber.value = String(now);
      scrubber.max = String(end || 1);
      scrubber.style.setProperty('--played', String(end ? Math.min(1, now / end) : 0));
      elapsed.textContent = clock(now);
      left.textContent = rest;
      const named = chapter.textContent ? `, ${chapter.textContent}` : '';
      scrubber.setAttribute('aria-valuetext', `${clock(now)} of ${clock(end)}${rest ? `, ${rest}` : ''}${named}`);
    };
    // chapterchange: follow-along.js named another chapter (after this listener, for the same time).
    for (const event of ['timeupdate', 'durationchange', 'seeked', 'loadedmetadata', 'chapterchange']) {
      audio.addEventListener(event, show);
    }
    for (const event of ['play', 'pause']) audio.addEventListener(event, playing);
    // Dragged or moved by keys: the audio goes there (the arrows by 5 s, the page keys by a minute).
    scrubber.addEventListener('input', () => {
      audio.currentTime = Number(scrubber.value);
    });
    scrubber.addEventListener('pointerdown', () => (held = true));
    for (const event of ['pointerup', 'change']) scrubber.addEventListener(event, () => (held = false));
    const moves = { ArrowLeft: -5, ArrowDown: -5, ArrowRight: 5, ArrowUp: 5, PageDown: -60, PageUp: 60 };
    scrubber.addEventListener('keydown', (event) => {
      if (!(event.key in moves)) return;
      event.preventDefault();
      skip(moves[event.key]);
    });
    playing();
    show();
  }

  // The sleep timer: a pause after some minutes, or at the end of the episode (then no next one).
  const sleep = document.getElementById('sleep');
  let sleepAt;
  let sleepAtEnd = false;
  if (sleep) {
    sleep.addEventListener('change', () => {
      sleepAtEnd = sleep.value === 'end';
      sleepAt = /^\d+$/.test(sleep.value) ? Date.now() + Number(sleep.value) * 60_000 : undefined;
      say(sleep.value ? `Sleep timer: ${sleepAtEnd ? 'at the end of this episode' : `${sleep.value} min`}.` : '');
    });
    audio.addEventListener('timeupdate', () => {
      if (sleepAt !== undefined && Date.now() >= sleepAt) {
        sleepAt = undefined;
        sleep.value = '';
        audio.pause();
      }
    });
  }

  // The lock screen and headphones.
  if ('mediaSession' in navigator) {
    const session = navigator.mediaSession;
    session.metadata = new MediaMetadata({
      title: audio.dataset.title || document.title,
      artist: audio.dataset.podcast ?? '',
      album: audio.dataset.podcast ?? '',
      artwork: audio.dataset.artwork ? [{ src: audio.dataset.artwork }] : [],
    });
    const handlers = {
      play: () => audio.play(),
      pause: () => audio.pause(),
      seekbackward: (d) => skip(-(d.seekOffset || back)),
      seekforward: (d) => skip(d.seekOffset || forward),
      seekto: (d) => {
        audio.currentTime = d.seekTime;
      },
      nexttrack: next ? goNext : null,
      // Back to the start, or (within its first 3 s) to the episode before it in Up next.
      previoustrack: () => {
        if (audio.currentTime > 3 || !audio.dataset.previous) audio.currentTime = 0;
        else location.href = audio.dataset.previous;
      },
    };
    for (const [action, handler] of Object.entries(handlers)) {
      try {
        session.setActionHandler(action, handler);
      } catch {
        // An action this browser does not know.
      }
    }
    const position = () => {
      if (!Number.isFinite(audio.duration)) return;
      session.setPositionState({
        duration: audio.duration,
        playbackRate: audio.playbackRate,
        position: Math.min(audio.currentTime, audio.duration),
      });
    };
    for (const event of ['loadedmetadata', 'ratechange', 'seeked', 'play', 'pause']) {
      audio.addEventListener(event, position);
    }
  }
})();
