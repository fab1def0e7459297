// Up next: drag an episode to its new place. The move is posted as the Up and Down buttons post it
// (/web/queue/{id}/move), then the page is read again. Without this script the buttons do the same.
const list = document.getElementById('queue');
if (list) {
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
      location.reload();
    });
  }
}
