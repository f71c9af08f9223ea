// The cabinet works without this script; it only adds the copy buttons.
document.addEventListener('click', (ev) => {
  const b = ev.target.closest('button[data-copy]');
  if (!b) return;
  const input = document.getElementById(b.dataset.copy);
  if (!input) return;
  input.select();
  const done = () => { b.textContent = 'Copied'; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(input.value).then(done, () => { document.execCommand('copy'); done(); });
  } else {
    document.execCommand('copy');
    done();
  }
});
