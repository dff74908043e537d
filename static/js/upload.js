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

  // Several files, or one larger than the limit: one request a file, so that the limit is
  // each file's and one bad file never costs the others. A file past the limit is not
  // sent; its name and size are, to be refused alone and kept in Past imports. Then the
  // import page says each file's outcome. Caught before htmx's own listener on the form.
  const send = (url, body, headers, onProgress) => new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("POST", url);
    Object.entries(headers).forEach(([name, value]) => request.setRequestHeader(name, value));
    request.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(Math.floor((100 * event.loaded) / event.total));
    });
    request.addEventListener("load", () => resolve(request.status === 204));
    ["error", "abort", "timeout"].forEach((name) => request.addEventListener(name, () => resolve(false)));
    request.send(body);
  });

  const sendEach = async (form, files) => {
    const words = document.getElementById("upload-status").dataset;
    const limit = Number(form.dataset.limitBytes);
    const token = form.querySelector("[name=csrfmiddlewaretoken]").value;
    const button = form.querySelector("button[type=submit]");
    const page = form.getAttribute("action") || window.location.pathname;
    const lost = [];
    button.disabled = true;
    for (const [index, file] of files.entries()) {
      const which = words.oneOf
        .replace("{number}", index + 1).replace("{count}", files.length).replace("{file}", file.name);
      say(`${words.uploading} ${which}`, 0);
      const body = new FormData();
      body.append("csrfmiddlewaretoken", token);
      let sent;
      if (file.size > limit) {
        body.append("name", file.name);
        body.append("size", String(file.size));
        sent = await send(form.dataset.tooLargeUrl, body, {}, () => {});
      } else {
        body.append("file", file, file.name);
        sent = await send(page, body, {"X-Exogram-One-Of-Several": "1"}, (percent) => {
          say(percent < 100 ? `${words.uploading} ${which} ${percent}%` : `${words.reading} ${which}`, percent < 100 ? percent : null);
        });
      }
      if (!sent) lost.push(file.name);
    }
    if (lost.length) {
      button.disabled = false;
      say(`${words.failedSome} ${lost.join(", ")}`, 0);
      return;
    }
    window.location.assign(page);
  };

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!isImportForm(form)) return;
    const files = Array.from(form.querySelector("input[type=file]").files || []);
    const limit = Number(form.dataset.limitBytes);
    if (files.length < 2 && !files.some((file) => file.size > limit)) return; // htmx sends it
    event.preventDefault();
    event.stopPropagation();
    sendEach(form, files);
  }, true);

  document.addEventListener("htmx:sendError", (event) => {
    if (!isImportForm(event.target)) return;
    const status = document.getElementById("upload-status");
    say(status.dataset.failed, 0);
  });
})();
