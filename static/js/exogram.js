// Exogram's small behaviours, kept out of the templates (the site is moving to a strict
// Content-Security-Policy: no inline scripts, no inline handlers).
document.documentElement.classList.add("js");

// "Copy as citation": any button with data-citation; its status is the next sibling.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.copy-citation");
  if (!button) return;
  const status = button.nextElementSibling;
  try {
    await navigator.clipboard.writeText(button.dataset.citation);
    if (status) status.textContent = "Citation copied.";
  } catch (error) {
    if (status) status.textContent = "Your browser did not allow copying; select the text instead.";
  }
});

// The main menu on a phone: the sections fold behind a "Menu" button.
document.addEventListener("click", (event) => {
  const toggle = event.target.closest("button.menu-toggle");
  if (!toggle) return;
  const menu = document.getElementById(toggle.getAttribute("aria-controls"));
  const open = toggle.getAttribute("aria-expanded") !== "true";
  toggle.setAttribute("aria-expanded", String(open));
  menu.classList.toggle("open", open);
});
