// The highlight page: copy the citation to the clipboard. A file, not an inline script,
// so that the page works under a Content-Security-Policy without 'unsafe-inline'.
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("copy-citation");
  const status = document.getElementById("copy-status");
  if (!button || !status) return;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(button.dataset.citation);
      status.textContent = "Citation copied.";
    } catch (error) {
      status.textContent = "Your browser did not allow copying; select the text instead.";
    }
  });
});
