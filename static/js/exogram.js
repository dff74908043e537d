// Exogram's page behaviours. Nothing is inline in the templates: the Content-Security-
// Policy lets scripts and styles come from /static/ only, so a payload that ever slipped
// past the escaping could still neither run nor restyle the page.
(() => {
  "use strict";

  const within = (root, selector) => {
    const found = Array.from(root.querySelectorAll(selector));
    if (root.matches && root.matches(selector)) found.push(root);
    return found;
  };

  // Sizes and colours set through the CSSOM (allowed by the policy), from data attributes.
  const paint = (root) => {
    within(root, "[data-width]").forEach((element) => {
      const percent = Math.min(100, Math.max(0, Number(element.dataset.width) || 0));
      element.style.width = `${percent}%`;
    });
    within(root, "[data-hue]").forEach((element) => {
      element.style.backgroundColor = `hsl(${(Number(element.dataset.hue) || 0) % 360}, 45%, 35%)`;
    });
    within(root, "[data-colour]").forEach((element) => {
      element.style.backgroundColor = element.dataset.colour;
    });
  };

  // The import page: drop a file on the zone to upload it.
  const dropzone = () => {
    const zone = document.getElementById("dropzone");
    const form = document.getElementById("import-form");
    if (!zone || !form) return;
    const input = zone.querySelector("input[type=file]");
    ["dragenter", "dragover"].forEach((name) => zone.addEventListener(name, (event) => {
      event.preventDefault();
      zone.classList.add("over");
    }));
    ["dragleave", "drop"].forEach((name) => zone.addEventListener(name, () => zone.classList.remove("over")));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      if (event.dataTransfer.files.length) {
        input.files = event.dataTransfer.files;
        form.requestSubmit();
      }
    });
  };

  // The highlight page: copy a citation.
  const copyCitation = () => {
    const button = document.getElementById("copy-citation");
    if (!button) return;
    button.addEventListener("click", async () => {
      const status = document.getElementById("copy-status");
      try {
        await navigator.clipboard.writeText(button.dataset.citation);
        status.textContent = "Citation copied.";
      } catch (error) {
        status.textContent = "Your browser did not allow copying; select the text instead.";
      }
    });
  };

  const start = () => {
    paint(document);
    dropzone();
    copyCitation();
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  // Parts that htmx swaps in (the progress bar every two seconds) are painted too.
  document.addEventListener("htmx:load", (event) => paint(event.detail.elt));
})();
