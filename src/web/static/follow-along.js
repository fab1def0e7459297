'use strict';
// The episode page's chapters and transcript (when its feed names them): fetched from castsync (which
// fetched them from the feed's addresses once), a chapter list to jump in, with the current chapter marked
// and named on the lock screen, a transcript that follows playback, to search and to jump in; and the
// times in the show notes, to jump to.
(() => {
  const audio = document.getElementById('player');
  if (!audio) return;
  // player.js's (it runs first).
  const clock = window.castsyncClock;
  const jump = (start) => {
    audio.currentTime = start;
    if (audio.paused) audio.play().catch(() => undefined);
  };
  // A time in the show notes, made a link by the page (src/web/notes.ts): play from there.
  document.addEventListener('click', (event) => {
    const link = event.target.closest('a.seek[data-seek]');
    if (!link) return;
    event.preventDefault();
    jump(Number(link.dataset.seek));
  });
  /** The index of the last of `starts` (ascending) at or before `t`, or -1. */
  const at = (starts, t) => {
    let [lo, hi] = [0, starts.length - 1];
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= t) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi;
  };
  /** Fetches the section's document; the list, or null after saying why there is none. */
  const load = async (section, key) => {
    const status = section.querySelector('[role="status"]');
    section.hidden = false;
    status.textContent = 'Loading…';
    try {
      const res = await fetch(section.dataset.src, { credentials: 'same-origin' });
      const doc = await res.json();
      const list = res.ok ? doc[key] : [];
      status.textContent = list.length > 0 ? '' : `None could be had${doc.error ? `: ${doc.error}` : ''}.`;
      return list;
    } catch {
      status.textContent = 'The server cannot be reached.';
      return null;
    }
  };

  /** A mark on the player's scrubber where each chapter (but one at the start) begins. */
  const marks = (starts) => {
    const box = document.getElementById('chapter-marks');
    if (!box) return;
    const draw = () => {
      const total = Number.isFinite(audio.duration) ? audio.duration : Number(audio.dataset.duration);
      if (!total) return;
      box.replaceChildren(
        ...starts
          .filter((s) => s > 0 && s < total)
          .map((s) => {
            const mark = document.createElement('span');
            mark.style.setProperty('--at', String(s / total));
            return mark;
          }),
      );
    };
    audio.addEventListener('durationchange', draw);
    draw();
  };

  const chapters = document.getElementById('chapters');
  if (chapters) {
    load(chapters, 'chapters').then((list) => {
      if (!list || list.length === 0) return;
      const items = list.map((c) => {
        const li = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'link';
        button.textContent = `${clock(c.start)} ${c.title || 'Chapter'}`;
        button.addEventListener('click', () => jump(c.start));
        li.append(button);
        if (c.url) {
          const link = document.createElement('a');
          link.href = c.url;
          link.rel = 'noreferrer';
          link.textContent = 'link';
          li.append(' ', link);
        }
        return li;
      });
      chapters.querySelector('ol').append(...items);
      const starts = list.map((c) => c.start);
      marks(starts);
      const named = document.getElementById('player-chapter');
      let current = -2;
      const mark = () => {
        const now = at(starts, audio.currentTime);
        if (now === current) return;
        items[current]?.querySelector('button').removeAttribute('aria-current');
        items[now]?.querySelector('button').setAttribute('aria-current', 'true');
        current = now;
        if (named) named.textContent = list[now]?.title ?? '';
        // The player's scrubber says the chapter's name too: it may have spoken for this time already.
        audio.dispatchEvent(new Event('chapterchange'));
        // The lock screen names the chapter (the title stays the episode's, the album the podcast's).
        const metadata = 'mediaSession' in navigator ? navigator.mediaSession.metadata : null;
        if (metadata) metadata.artist = list[now]?.title || audio.dataset.podcast || '';
      };
      audio.addEventListener('timeupdate', mark);
      audio.addEventListener('seeked', mark);
      mark();
    });
  }

  const transcript = document.getElementById('transcript');
  if (transcript) {
    load(transcript, 'cues').then((cues) => {
      if (!cues || cues.length === 0) return;
      const box = transcript.querySelector('.cues');
      const status = transcript.querySelector('[role="status"]');
      const search = document.getElementById('transcript-search');
      const follow = document.getElementById('transcript-follow');
      const rows = cues.map((c) => {
        const p = document.createElement('p');
        if (c.start !== null) {
          const time = document.createElement('button');
          time.type = 'button';
          time.className = 'link';
          time.textContent = clock(c.start);
          time.setAttribute('aria-label', `Play from ${clock(c.start)}`);
          time.addEventListener('click', () => jump(c.start));
          p.append(time, ' ');
        }
        if (c.speaker) {
          const who = document.createElement('strong');
          who.textContent = `${c.speaker}: `;
          p.append(who);
        }
        const text = document.createElement('span');
        text.textContent = c.text;
        p.append(text);
        return { p, text, cue: c };
      });
      box.append(...rows.map((r) => r.p));
      const timed = rows.filter((r) => r.cue.start !== null);
      if (timed.length === 0) status.textContent = 'This transcript has no times: it does not follow playback.';
      const starts = timed.map((r) => r.cue.start);
      let current = -1;
      const followPlayback = () => {
        const now = at(starts, audio.currentTime);
        if (now === current) return;
        timed[current]?.p.classList.remove('current');
        timed[now]?.p.classList.add('current');
        current = now;
        const p = timed[now]?.p;
        if (p && follow.checked && !search.value && !p.hidden) {
          box.scrollTop = p.offsetTop - box.offsetTop - box.clientHeight / 3;
        }
      };
      audio.addEventListener('timeupdate', followPlayback);
      audio.addEventListener('seeked', followPlayback);
      followPlayback();

      // Search: only the cues holding the words are shown, the words marked.
      search.addEventListener('input', () => {
        const q = search.value.trim().toLowerCase();
        let found = 0;
        for (const r of rows) {
          const i = q ? r.cue.text.toLowerCase().indexOf(q) : -1;
          r.p.hidden = q !== '' && i < 0;
          r.text.textContent = '';
          if (i < 0) {
            r.text.textContent = r.cue.text;
            continue;
          }
          found++;
          const mark = document.createElement('mark');
          mark.textContent = r.cue.text.slice(i, i + q.length);
          r.text.append(r.cue.text.slice(0, i), mark, r.cue.text.slice(i + q.length));
        }
        status.textContent = q
          ? `${found} ${found === 1 ? 'place holds' : 'places hold'} “${search.value.trim()}”.`
          : '';
      });
    });
  }
})();
