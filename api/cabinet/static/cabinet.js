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

// The refund form says the money back before its button: when a ticket is
// ticked or unticked the same page is asked (GET, pick=1) for the amount
// the refund rule gives, and its line swapped in. Without the script the
// form's "Show the amount" button does the same.
(() => {
  const form = document.getElementById('refund-form');
  if (!form || !window.fetch || !window.DOMParser) return;
  const show = document.getElementById('show-amount');
  let asked = 0;
  form.addEventListener('change', async (ev) => {
    if (!ev.target.matches('input[type=checkbox]')) return;
    const q = new URLSearchParams(new FormData(form));
    q.delete('token');
    q.set('pick', '1');
    const n = ++asked;
    try {
      const res = await fetch(form.getAttribute('action') + '?' + q, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } });
      if (!res.ok || n !== asked) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = doc.getElementById('refund-amount');
      const now = document.getElementById('refund-amount');
      if (fresh && now) now.replaceWith(document.importNode(fresh, true));
    } catch (e) {
      // Offline or signed out: the button still shows the amount.
    }
  });
  if (show) show.hidden = true;
})();
