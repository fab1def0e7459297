'use strict';
// Playing on while moving between pages: once the episode page's player has started, the links to the
// New episodes, the subscriptions, a feed's episodes, Continue, Up next and Favourites (in the navigation or on those pages) and those pages' forms
// load the page in place (its <main>, title and navigation) instead of leaving this one, and the player
// moves to a "Now playing" bar at the bottom, where it keeps playing and writing its position. Another
// episode's page, and every other page, is an ordinary navigation. Without script every link and form is
// as it always was.
(() => {
  const audio = document.getElementById('player');
  if (!audio) return;
  const IN_PLACE = /^\/web\/(new|subscriptions(\/[^/]+\/episodes)?|in-progress|queue|favourites)$/;
  // The buttons sent in place: each leads back to one of those pages. Any other form (a feed added, an OPML
  // file, unsubscribing or deleting, which may ask about Up next) is sent as without script.
  const BUTTON =
    /^\/web\/(episodes\/\d+\/(favourite|queue|played)|new\/\d+\/dismiss|queue\/(clear|\d+\/(move|remove))|favourites\/clear|subscriptions\/[^/]+\/notifications)$/;
  const episodePage = location.pathname;
  let bar;

  const inPlace = (url) => url.origin === location.origin && IN_PLACE.test(url.pathname);
  const started = () => !audio.paused || audio.currentTime > 0;

  /** Moves the player out of <main> into the bar, once. */
  const dock = () => {
    if (bar) return;
    bar = document.createElement('section');
    bar.id = 'now-playing';
    bar.setAttribute('aria-label', 'Now playing');
    const back = document.createElement('a');
    back.href = episodePage;
    back.textContent = audio.dataset.title || 'The episode playing';
    bar.append(back);
    for (const id of ['player', 'player-controls', 'player-status']) {
      const el = document.getElementById(id);
      if (el) bar.append(el);
    }
    document.body.append(bar);
  };

  /** Shows the page `html` (from `url`) in place of this one's main, title and navigation. */
  const show = (html, url, push) => {
    const page = new DOMParser().parseFromString(html, 'text/html');
    const main = page.querySelector('main');
    if (!main) return void (location.href = url);
    dock();
    document.querySelector('main').replaceWith(main);
    document.title = page.title;
    const nav = page.querySelector('nav[aria-label="Main"]');
    const here = document.querySelector('nav[aria-label="Main"]');
    if (nav && here) here.replaceWith(nav);
    if (push) history.pushState({ inPlace: true }, '', url);
    main.querySelector('h1')?.focus?.();
    // The page's own script (Up next's dragging) takes its new content.
    document.dispatchEvent(new Event('castsync:shown'));
  };

  const load = async (url, init, push) => {
    try {
      const res = await fetch(url, { credentials: 'same-origin', ...init });
      // A redirect elsewhere (the sign-in page) or a page not loaded in place: go there for real.
      const landed = new URL(res.url);
      if (!res.ok || !inPlace(landed)) return void (location.href = res.url);
      show(await res.text(), landed.pathname + landed.search, push);
    } catch {
      location.href = url;
    }
  };

  document.addEventListener('click', (event) => {
    const link = event.target.closest('a[href]');
    if (!link || !started() || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const url = new URL(link.href, location.href);
    if (!inPlace(url)) return;
    event.preventDefault();
    load(url.href, {}, true);
  });

  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!started() || !bar || form.method.toLowerCase() !== 'post') return;
    // Only the buttons of the pages shown in place (a star, Up next's buttons, "Mark played").
    if (!document.querySelector('main').contains(form)) return;
    const action = new URL(form.action, location.href);
    if (action.origin !== location.origin || !BUTTON.test(action.pathname)) return;
    event.preventDefault();
    load(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)) }, true);
  });

  // A page's script asks for the page again (Up next after a drag): in place, while the player is docked.
  document.addEventListener('castsync:reload', (event) => {
    if (!bar) return;
    event.preventDefault();
    load(location.href, {}, false);
  });

  window.addEventListener('popstate', () => {
    if (!bar) return;
    if (location.pathname === episodePage) return void location.reload();
    load(location.href, {}, false);
  });
})();
