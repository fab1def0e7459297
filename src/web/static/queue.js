// Up next: drag an episode to its new place. The move is posted as the Up and Down buttons post it
// (/web/queue/{id}/move), then the page is read again (in place while an episode plays on, keep-playing.js).
// Without this script the buttons do the same.
(() => {
  const wire = () => {
    const list = document.getElementById('queue');
    if (!list || list.dataset.wired) return;
    list.dataset.wired = 'true';
    for (const hint of document.querySelectorAll('.js-only')) hint.hidden = false;
    let dragged;
    for (const item of list.querySelectorAll('.queue-item')) {
      item.draggable = true;
      item.addEventListener('dragstart', (event) => {
        dragged = item;
        item.classList.add('dragging');
        event.dataTransfer.effectAllowed = 'move';
      });
      item.addEventListener('dragend', () => item.classList.remove('dragging'));
      item.addEventListener('dragover', (event) => event.preventDefault());
      item.addEventListener('drop', async (event) => {
        event.preventDefault();
        if (!dragged || dragged === item) return;
        const body = new URLSearchParams({ _csrf: list.dataset.csrf, at: item.dataset.at, script: '1' });
        await fetch(`/web/queue/${dragged.dataset.id}/move`, { method: 'POST', body }).catch(() => undefined);
        // Read again: by the player playing on if there is one (it cancels the event), else by the browser.
        if (document.dispatchEvent(new Event('castsync:reload', { cancelable: true }))) location.reload();
      });
    }
  };
  wire();
  // A page shown in place (keep-playing.js).
  document.addEventListener('castsync:shown', wire);
})();
