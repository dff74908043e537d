// The import page while a file uploads (a 30 MB file took ten seconds on the machine
// itself): the form's button is disabled (hx-disabled-elt) and the status below it says
// how much is sent, then that the file is being read. htmx sends the form (hx-boost on the
// form) and swaps in whatever the server answers, as the form's own post would show it;
// without JS the form posts as ever. Listeners sit on the document: the page's body is
// swapped when the server answers with the form again.
(() => {
  "use strict";

  const isImportForm = (element) => element && element.id === "import-form";
  let uploadTotal = 0;

  const say = (text, percent) => {
    const status = document.getElementById("upload-status");
    if (!status) return;
    status.hidden = false;
    status.querySelector("span").textContent = text;
    const bar = status.querySelector("progress");
    if (percent === null) bar.removeAttribute("value");
    else bar.value = percent;
  };

  document.addEventListener("htmx:beforeRequest", (event) => {
    if (!isImportForm(event.target)) return;
    uploadTotal = 0;
    say(document.getElementById("upload-status").dataset.uploading, 0);
  });

  // htmx reports the upload's progress and then the answer's download under one name: the
  // first total is the upload's.
  document.addEventListener("htmx:xhr:progress", (event) => {
    if (!isImportForm(event.target) || !event.detail.lengthComputable) return;
    uploadTotal = uploadTotal || event.detail.total;
    if (event.detail.total !== uploadTotal) return;
    const words = document.getElementById("upload-status").dataset;
    const percent = Math.floor((100 * event.detail.loaded) / uploadTotal);
    if (event.detail.loaded < uploadTotal) say(`${words.uploading} ${percent}%`, percent);
    else say(words.reading, null);
  });

  // A refusal (413 and the like) is a page for the reader, as after the form's own post.
  document.addEventListener("htmx:beforeSwap", (event) => {
    if (!isImportForm(event.detail.requestConfig && event.detail.requestConfig.elt)) return;
    if (event.detail.xhr.status >= 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:sendError", (event) => {
    if (!isImportForm(event.target)) return;
    const status = document.getElementById("upload-status");
    say(status.dataset.failed, 0);
  });
})();
