// The cabinet works without this script; it only adds the copy buttons
// and refreshes the check-in page's figures in place.
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-copy]');
  if (!b) return;
  const input = document.getElementById(b.dataset.copy);
  if (!input) return;
  input.focus();
  input.select();
  const done = () => { b.textContent = 'Copied'; };
  let copied = false;
  try { copied = document.execCommand('copy'); } catch (e) { copied = false; }
  if (copied) { done(); return; }
  if (navigator.clipboard) {
    navigator.clipboard.writeText(input.value).then(done, () => { b.textContent = 'Selected: press Ctrl+C'; });
  } else {
    b.textContent = 'Selected: press Ctrl+C';
  }
});

// The check-in page's figures (#door-live) refresh themselves while the
// page is in view: the same page is fetched from this origin and its
// figures swapped in; a hidden tab asks nothing. Without the script the
// page's Refresh link does the same.
(() => {
  const live = document.getElementById('door-live');
  const every = live ? Number(live.dataset.refresh) : 0;
  if (!live || !(every > 0) || !window.fetch || !window.DOMParser) return;
  let busy = false;
  const refresh = async () => {
    if (busy || document.visibilityState !== 'visible') return;
    busy = true;
    try {
      const res = await fetch(location.href, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = doc.getElementById('door-live');
      const now = document.getElementById('door-live');
      if (fresh && now) now.replaceWith(document.importNode(fresh, true));
    } catch (e) {
      // Offline or signed out: the figures stay as they are.
    } finally {
      busy = false;
    }
  };
  setInterval(refresh, every * 1000);
  document.addEventListener('visibilitychange', refresh);
})();
