// Exogram's page behaviours. Nothing is inline in the templates: the Content-Security-
// Policy lets scripts and styles come from /static/ only, so a payload that ever slipped
// past the escaping could still neither run nor restyle the page.
document.documentElement.classList.add("js");

// "Copy as citation": any button with data-citation; its status is the next sibling.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.copy-citation");
  if (!button) return;
  const status = button.nextElementSibling;
  try {
    await navigator.clipboard.writeText(button.dataset.citation);
    if (status) status.textContent = button.dataset.copied;
  } catch (error) {
    if (status) status.textContent = button.dataset.copyFailed;
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

// The account's menu (a <details>) closes on a click elsewhere or on Escape.
const closeAccountMenus = (except) => {
  document.querySelectorAll("details.account[open]").forEach((menu) => {
    if (menu !== except) menu.open = false;
  });
};
document.addEventListener("click", (event) => closeAccountMenus(event.target.closest("details.account")));
// Escape closes the phone's menu too, and gives the focus back to its button.
const closeMainMenus = () => {
  document.querySelectorAll("button.menu-toggle[aria-expanded=true]").forEach((toggle) => {
    toggle.setAttribute("aria-expanded", "false");
    document.getElementById(toggle.getAttribute("aria-controls")).classList.remove("open");
    toggle.focus();
  });
};
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  closeAccountMenus(null);
  closeMainMenus();
});

// The daily review (highlights and words): an answer swaps its card for the answered one,
// and the button pressed goes with the old card. Focus then moves on to the next card that
// waits for an answer (its first button), or, after a favourite, a note or the last card,
// stays on the new card: never dropped on <body>.
let answering = null;
document.addEventListener("submit", (event) => {
  const card = event.target.closest("article.review-card");
  if (card) answering = { id: card.id, answer: event.submitter ? event.submitter.value : "" };
}, true);
document.addEventListener("htmx:afterSettle", () => {
  if (!answering) return;
  const { id, answer } = answering;
  answering = null;
  const card = document.getElementById(id);
  if (!card || (document.activeElement && document.activeElement !== document.body)) return;
  const movesOn = ["keep", "less", "know", "again"].includes(answer);
  const cards = Array.from(document.querySelectorAll("article.review-card"));
  const at = cards.indexOf(card);
  const waiting = [...cards.slice(at + 1), ...cards.slice(0, at)].find((c) => !c.classList.contains("answered"));
  const next = movesOn && waiting;
  const target = next
    ? next.querySelector(".card-actions button")
    : card.querySelector(`button[value="${answer}"]`) || card.querySelector("h2");
  if (!target) return;
  if (target.tagName === "H2") target.setAttribute("tabindex", "-1");
  target.focus();
});

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

  // The import page: drop files on the zone to upload them (the input takes several:
  // each becomes an import of its own).
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

  // A filter over a long list of checkboxes (the sharing page's books): rows that do not
  // match are hidden, never unticked, so their boxes are still sent with the form. Without
  // JavaScript the filter stays hidden and the whole list is there.
  const folded = (text) => text.normalize("NFD").replace(/\p{Diacritic}/gu, "").toLowerCase();
  const listFilters = () => {
    document.querySelectorAll("input[data-filters]").forEach((input) => {
      const list = document.getElementById(input.dataset.filters);
      const box = input.closest("[hidden]");
      if (!list || !box) return;
      box.hidden = false;
      const none = box.querySelector("[data-none]");
      const rows = Array.from(list.children).map((row) => [row, folded(row.textContent)]);
      input.addEventListener("input", () => {
        const words = folded(input.value).split(/\s+/).filter(Boolean);
        let shown = 0;
        rows.forEach(([row, text]) => {
          row.hidden = !words.every((word) => text.includes(word));
          if (!row.hidden) shown += 1;
        });
        if (none) none.hidden = shown > 0;
      });
      // Enter in the filter does not save the page half-chosen.
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") event.preventDefault();
      });
    });
  };

  const start = () => {
    paint(document);
    dropzone();
    listFilters();
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  // Parts that htmx swaps in (the progress bar every two seconds) are painted too.
  document.addEventListener("htmx:load", (event) => paint(event.detail.elt));
})();
