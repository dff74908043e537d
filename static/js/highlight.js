// The highlight page: copy the citation to the clipboard. A file, not an inline script,
// so that the page works under a Content-Security-Policy without 'unsafe-inline'.
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("copy-citation");
  const status = document.getElementById("copy-status");
  if (!button || !status) return;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(button.dataset.citation);
      status.textContent = button.dataset.copied;
    } catch (error) {
      status.textContent = button.dataset.copyFailed;
    }
  });
});
