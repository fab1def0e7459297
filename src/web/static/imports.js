// Import and export: while an import runs, the list of imports is read again every two seconds and shown in
// place (a polite live region: a screen reader reads out what changed). Without this script the page has a
// link to look again.
const list = document.getElementById('imports');
const again = async () => {
  const res = await fetch('/web/moving', { headers: { accept: 'text/html' } }).catch(() => undefined);
  const fresh =
    res && res.ok ? new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('imports') : null;
  if (fresh) {
    list.innerHTML = fresh.innerHTML;
    list.dataset.running = fresh.dataset.running;
  }
  if (list.dataset.running === 'true') setTimeout(again, 2000);
};
if (list && list.dataset.running === 'true') setTimeout(again, 2000);
