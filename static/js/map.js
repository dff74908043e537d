// The library map: every point drawn on a canvas from /map.json, with pan, zoom (wheel,
// buttons, pinch), tap or click to read a point, and a book filter.
(function () {
  "use strict";
  const root = document.getElementById("library-map");
  if (!root) return;
  const canvas = document.getElementById("map-canvas");
  const status = document.getElementById("map-status");
  const card = document.getElementById("map-card");
  const select = document.getElementById("map-book");
  // What the script says, in the page's language (data-text-* on the map, books/map.html).
  const words = {
    read: root.dataset.textRead,
    close: root.dataset.textClose,
    pointFailed: root.dataset.textPointFailed,
    redrawn: root.dataset.textRedrawn,
    more: root.dataset.textMore,
    placed: root.dataset.textPlaced,
    failed: root.dataset.textFailed,
    waiting: root.dataset.textWaiting,
  };
  const context = canvas.getContext("2d");
  const TAP_RADIUS = 12; // CSS pixels: a finger's reach
  const MARGIN = 16;
  let data = null;
  let chosenBook = -1;
  let selected = -1;
  // The view: map units (0..scale) to CSS pixels.
  let zoom = 1, home = 1, offsetX = 0, offsetY = 0, baseScale = 1;

  function resize() {
    const width = canvas.clientWidth;
    // The whole canvas fits the window, so a point and its card can be seen together.
    const height = Math.max(320, Math.min(720, Math.round(width * 0.66), window.innerHeight - 32));
    canvas.style.height = height + "px";
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    if (data) {
      baseScale = Math.min(width - 2 * MARGIN, height - 2 * MARGIN) / data.scale;
    }
    draw();
  }

  function screenX(x) { return (x * baseScale) * zoom + offsetX; }
  function screenY(y) { return (y * baseScale) * zoom + offsetY; }

  function resetView() {
    // Fit the points' own extent, centred.
    const xs = data.points.x, ys = data.points.y;
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (let i = 0; i < xs.length; i++) {
      minX = Math.min(minX, xs[i]); maxX = Math.max(maxX, xs[i]);
      minY = Math.min(minY, ys[i]); maxY = Math.max(maxY, ys[i]);
    }
    const width = canvas.clientWidth, height = canvas.clientHeight;
    const spanX = Math.max(1, maxX - minX) * baseScale, spanY = Math.max(1, maxY - minY) * baseScale;
    zoom = Math.min((width - 2 * MARGIN) / spanX, (height - 2 * MARGIN) / spanY);
    offsetX = width / 2 - ((minX + maxX) / 2) * baseScale * zoom;
    offsetY = height / 2 - ((minY + maxY) / 2) * baseScale * zoom;
    home = zoom;
    draw();
  }

  function draw() {
    const width = canvas.clientWidth, height = canvas.clientHeight;
    context.clearRect(0, 0, width, height);
    if (!data) {
      // A blank canvas looks broken: say what it is waiting for, where the map will be.
      context.font = "15px system-ui, sans-serif";
      context.fillStyle = "#57606a";
      context.textAlign = "center";
      context.textBaseline = "middle";
      context.fillText(words.waiting, width / 2, height / 2);
      return;
    }
    const points = data.points, count = points.x.length;
    // Few points are drawn large, 20,000 small; zooming in grows them a little.
    const base = Math.max(2, Math.min(7, 70 / Math.sqrt(count)));
    const size = Math.min(10, base * Math.sqrt(zoom / home));
    // Dimmed points first, the chosen book's on top.
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < count; i++) {
        const book = points.book[i];
        const chosen = chosenBook < 0 || book === chosenBook;
        if ((pass === 0) === chosen && chosenBook >= 0) continue;
        if (pass === 1 && chosenBook < 0) continue;
        const x = screenX(points.x[i]), y = screenY(points.y[i]);
        if (x < -size || y < -size || x > width + size || y > height + size) continue;
        context.globalAlpha = chosen ? 0.85 : 0.12;
        context.fillStyle = data.books[book].colour;
        context.fillRect(x - size / 2, y - size / 2, size, size);
      }
    }
    context.globalAlpha = 1;
    if (selected >= 0) {
      context.strokeStyle = "#111";
      context.lineWidth = 2;
      context.beginPath();
      context.arc(screenX(points.x[selected]), screenY(points.y[selected]), size + 4, 0, 2 * Math.PI);
      context.stroke();
    }
    drawLabels(width, height);
    if (!card.hidden && selected >= 0) positionCard(selected);
  }

  // Region names, the largest regions first; a name that would overlap one already placed
  // is shortened to its first words, then left out (zooming in makes room for it). Every
  // name stays inside the canvas.
  function drawLabels(width, height) {
    const fontSize = width < 560 ? 12 : 13;
    const lineHeight = fontSize + 4;
    context.font = "600 " + fontSize + "px system-ui, sans-serif";
    context.textAlign = "left";
    context.textBaseline = "middle";
    context.lineJoin = "round";
    const placed = [];
    const shown = [];
    const order = data.regions.map((region, index) => index)
      .sort((a, b) => data.regions[b].size - data.regions[a].size);
    for (const index of order) {
      const region = data.regions[index];
      const x = screenX(region.x), y = screenY(region.y);
      if (x < 0 || y < 0 || x > width || y > height) continue;
      const words = region.label.split(" · ");
      for (let count = words.length; count > 0; count--) {
        const text = words.slice(0, count).join(" · ");
        const textWidth = context.measureText(text).width;
        if (textWidth > width - 8) continue;
        const left = Math.min(Math.max(4, x - textWidth / 2), width - 4 - textWidth);
        const top = Math.min(Math.max(2, y - lineHeight / 2), height - 2 - lineHeight);
        // A word's width apart, so that two names never read as one.
        const gap = fontSize;
        const box = { left: left - gap, top: top - 3, right: left + textWidth + gap, bottom: top + lineHeight + 3 };
        const clash = placed.some((other) => box.left < other.right && other.left < box.right
          && box.top < other.bottom && other.top < box.bottom);
        if (clash) continue;
        placed.push(box);
        shown.push({ text: text, x: left, y: top + lineHeight / 2,
          box: { left: left, top: top, right: left + textWidth, bottom: top + lineHeight } });
        break;
      }
    }
    for (const label of shown) {
      context.lineWidth = 4;
      context.strokeStyle = "rgba(255,255,255,0.92)";
      context.strokeText(label.text, label.x, label.y);
      context.fillStyle = "#222";
      context.fillText(label.text, label.x, label.y);
    }
    // What is on the canvas, for the browser tests and anyone scripting the page.
    canvas.labelBoxes = shown.map((label) => label.box);
    canvas.dataset.labels = String(shown.length);
  }

  function zoomAt(factor, x, y) {
    const next = Math.max(home / 2, Math.min(home * 60, zoom * factor));
    factor = next / zoom;
    offsetX = x - (x - offsetX) * factor;
    offsetY = y - (y - offsetY) * factor;
    zoom = next;
    draw();
  }

  function nearest(x, y) {
    const points = data.points;
    let best = -1, bestDistance = TAP_RADIUS * TAP_RADIUS;
    for (let i = 0; i < points.x.length; i++) {
      if (chosenBook >= 0 && points.book[i] !== chosenBook) continue;
      const dx = screenX(points.x[i]) - x, dy = screenY(points.y[i]) - y;
      const distance = dx * dx + dy * dy;
      if (distance < bestDistance) { best = i; bestDistance = distance; }
    }
    return best;
  }

  // The card opens beside the point read, over the canvas, where the eye already is; on a
  // narrow screen it is a sheet at the window's foot. Kept inside the canvas and the window.
  function positionCard(index) {
    const width = canvas.clientWidth, height = canvas.clientHeight;
    card.classList.toggle("docked", width < 560);
    if (width >= 560) {
      const x = screenX(data.points.x[index]), y = screenY(data.points.y[index]);
      const cardWidth = card.offsetWidth, cardHeight = card.offsetHeight;
      const right = x + 18 + cardWidth <= width - 8;
      const left = right ? x + 18 : Math.max(8, x - 18 - cardWidth);
      const top = Math.min(Math.max(8, y - cardHeight / 2), Math.max(8, height - 8 - cardHeight));
      card.style.left = left + "px";
      card.style.top = top + "px";
    } else {
      card.style.left = "";
      card.style.top = "";
    }
  }

  function placeCard(index) {
    positionCard(index);
    if (card.classList.contains("docked")) {
      // The sheet covers the window's foot: bring the canvas up above it, so the point
      // read stays in sight beside its card.
      const stage = canvas.getBoundingClientRect();
      if (stage.bottom > window.innerHeight - card.offsetHeight - 8) {
        window.scrollBy({ top: stage.top - 8, behavior: "instant" });
      }
      return;
    }
    const box = card.getBoundingClientRect();
    if (box.bottom > window.innerHeight || box.top < 0) {
      card.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }

  function show(index) {
    selected = index;
    draw();
    if (index < 0) { card.hidden = true; return; }
    const url = root.dataset.pointUrl.replace(/\/0\/$/, "/" + index + "/")
      + "?map=" + encodeURIComponent(data.version);
    fetch(url, { credentials: "same-origin" })
      .then((response) => {
        if (response.status === 409) {
          // A newer layout than the one drawn: draw it, and ask for the tap again.
          card.textContent = words.redrawn;
          card.hidden = false;
          placeCard(index);
          selected = -1;
          data = null;
          load();
          return Promise.reject("redrawn");
        }
        return response.ok ? response.json() : Promise.reject(response.status);
      })
      .then((point) => {
        card.replaceChildren();
        const quote = document.createElement("blockquote");
        quote.textContent = point.text;
        const source = document.createElement("p");
        source.className = "muted";
        source.textContent = point.title + (point.authors ? " — " + point.authors : "");
        const link = document.createElement("a");
        link.href = point.url;
        link.textContent = words.read;
        const close = document.createElement("button");
        close.type = "button";
        close.className = "link map-card-close";
        close.setAttribute("aria-label", words.close);
        close.textContent = "×";
        close.addEventListener("click", () => show(-1));
        card.append(close, quote, source, link);
        card.hidden = false;
        placeCard(index);
      })
      .catch((reason) => {
        if (reason === "redrawn") return;
        card.textContent = words.pointFailed;
        card.hidden = false;
        placeCard(index);
      });
  }

  // Pointers: one drags, two pinch; a press that hardly moves is a tap.
  const pointers = new Map();
  let pinchDistance = 0, moved = 0;
  canvas.addEventListener("pointerdown", (event) => {
    canvas.setPointerCapture(event.pointerId);
    pointers.set(event.pointerId, { x: event.offsetX, y: event.offsetY });
    moved = 0;
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinchDistance = Math.hypot(a.x - b.x, a.y - b.y);
    }
  });
  canvas.addEventListener("pointermove", (event) => {
    const last = pointers.get(event.pointerId);
    if (!last || !data) return;
    const current = { x: event.offsetX, y: event.offsetY };
    pointers.set(event.pointerId, current);
    if (pointers.size === 1) {
      offsetX += current.x - last.x;
      offsetY += current.y - last.y;
      moved += Math.abs(current.x - last.x) + Math.abs(current.y - last.y);
      draw();
    } else if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      if (pinchDistance > 0) zoomAt(distance / pinchDistance, (a.x + b.x) / 2, (a.y + b.y) / 2);
      pinchDistance = distance;
      moved += 10;
    }
  });
  function release(event) {
    const was = pointers.get(event.pointerId);
    pointers.delete(event.pointerId);
    if (was && pointers.size === 0 && moved < 6 && data) show(nearest(event.offsetX, event.offsetY));
    if (pointers.size < 2) pinchDistance = 0;
  }
  canvas.addEventListener("pointerup", release);
  canvas.addEventListener("pointercancel", (event) => { pointers.delete(event.pointerId); });
  canvas.addEventListener("wheel", (event) => {
    if (!data) return;
    event.preventDefault();
    zoomAt(Math.exp(-event.deltaY * 0.0015), event.offsetX, event.offsetY);
  }, { passive: false });

  root.querySelectorAll("[data-zoom]").forEach((button) => {
    button.addEventListener("click", () => {
      if (!data) return;
      const x = canvas.clientWidth / 2, y = canvas.clientHeight / 2;
      if (button.dataset.zoom === "in") zoomAt(1.6, x, y);
      else if (button.dataset.zoom === "out") zoomAt(1 / 1.6, x, y);
      else resetView();
    });
  });
  document.querySelectorAll("[data-region-x]").forEach((button) => {
    button.addEventListener("click", () => {
      if (!data) return;
      zoom = home * 4;
      offsetX = canvas.clientWidth / 2 - Number(button.dataset.regionX) * baseScale * zoom;
      offsetY = canvas.clientHeight / 2 - Number(button.dataset.regionY) * baseScale * zoom;
      draw();
      canvas.scrollIntoView({ block: "center" });
    });
  });
  select.addEventListener("change", () => {
    chosenBook = select.value === "" ? -1 : Number(select.value);
    canvas.dataset.book = select.value;
    if (selected >= 0 && chosenBook >= 0 && data.points.book[selected] !== chosenBook) show(-1);
    document.querySelectorAll("#map-legend button[data-book]").forEach((button) => {
      button.setAttribute("aria-pressed", String(Number(button.dataset.book) === chosenBook));
    });
    draw();
  });
  window.addEventListener("resize", () => { resize(); if (data) resetView(); });
  // Where a point is drawn, in the canvas's CSS pixels (for the browser tests and for
  // anyone scripting the page).
  canvas.pointPosition = (index) => ({ x: screenX(data.points.x[index]), y: screenY(data.points.y[index]) });

  // The legend: the largest books with their colour; choosing one filters the map.
  function legend() {
    const list = document.getElementById("map-legend");
    const order = data.books.map((book, index) => [book, index]).sort((a, b) => b[0].count - a[0].count);
    list.replaceChildren();
    for (const [book, index] of order.slice(0, 12)) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = book.colour;
      button.append(swatch, document.createTextNode(book.title.length > 50 ? book.title.slice(0, 49) + "…" : book.title));
      // A toggle: its pressed state says which book the map shows; pressed again, all.
      button.dataset.book = String(index);
      button.setAttribute("aria-pressed", String(chosenBook === index));
      button.addEventListener("click", () => {
        select.value = chosenBook === index ? "" : String(index);
        select.dispatchEvent(new Event("change"));
      });
      item.append(button);
      list.append(item);
    }
    if (order.length > 12) {
      const more = document.createElement("li");
      more.className = "muted";
      more.textContent = words.more.replace("{count}", String(order.length - 12));
      list.append(more);
    }
  }

  function load() {
    fetch(root.dataset.src, { credentials: "same-origin" })
      .then((response) => response.json())
      .then((payload) => {
        if (payload.status === "ready") {
          const first = data === null;
          data = payload;
          resize();
          if (first) resetView();
          legend();
          canvas.dataset.points = String(payload.points.x.length);
          canvas.dataset.version = payload.version;
          canvas.setAttribute("aria-label", words.placed
            .replace("{highlights}", payload.points.x.length.toLocaleString(document.documentElement.lang))
            .replace("{books}", payload.books.length.toLocaleString(document.documentElement.lang)));
        }
        if (payload.summary) {
          const summary = document.getElementById("map-summary");
          // Server-rendered and escaped there (books/_map_summary.html).
          if (summary) summary.outerHTML = payload.summary;
        }
        if (payload.status === "drawing" || payload.stale) {
          window.setTimeout(load, 2000);
        } else {
          status.textContent = "";
        }
      })
      .catch(() => { status.textContent = words.failed; });
  }
  resize();
  load();
})();
