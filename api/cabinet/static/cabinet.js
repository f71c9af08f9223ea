// The cabinet works without this script; it only adds the copy buttons.
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
