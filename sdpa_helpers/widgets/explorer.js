/* The explorers' one front end: the static site's explorers and the notebook's (a Jupyter widget).
 *
 * An explorer is a <figure class="explorer">: native controls (range inputs, selects, checkboxes,
 * each a [data-control] element with its label), one frame (<div class="frame"><img>) and its
 * readout (<div class="readout">). A move looks the frame for the controls' values up in a
 * bounded cache (CACHE_MAX frames, least recently used dropped first) and swaps it in at once on a
 * hit; on a miss it asks the frame's source and shows the answer when it comes (aria-busy meanwhile).
 * A frame is named by the indices of its control values joined by "-" (e.g. "6-2-0").
 *
 * Two sources of frames, one explorer:
 * - the static site (classic script, works from file://): frames drawn at build time are image
 *   files (<name>.webp) and the readouts are in the page's frame table (window.SDPA_EXPLORERS[id],
 *   set by frames/<id>.js); the frames one and two steps away are loaded and decoded after each move.
 *   A frame that cannot load is never stood in for by another: a "frame missing" note says which.
 *   When every explorer has its neighbours decoded, <html data-explorers-ready> is set and MathJax
 *   (copied into the site) is loaded, so the math does not compete with the frames.
 * - the notebook (anywidget loads this file as an ES module: sdpa_helpers.widgets adds the one
 *   `export default` line): the kernel draws frames with the course's panels and sends each as PNG
 *   bytes (a binary buffer) and its readout. After display the front end asks for the frames next to
 *   the current setting first, then for the rest of a small grid (PREFETCH_MAX frames nearest the
 *   setting), a few requests at a time (two on a local link; over a slow link as many as cover its
 *   round trip, windowFor): the kernel draws between requests only, so a cell the learner runs
 *   meanwhile waits behind those few frames. A move to a frame not in the cache asks for it at once.
 *
 * Both are driven by the same controls: keyboard (arrows on a range or select, space on a checkbox),
 * pointer, labels (<label for>), aria-valuetext on ranges, focus kept on the control moved.
 */
(function (root) {
  "use strict";
  var CACHE_MAX = 400;  // frames kept per explorer (a frame: one image + its readout)
  var SHORT_LIST = 6;   // a select or checkbox with this many options or fewer: every option is a neighbour
  var PREFETCH_MAX = 150;  // frames the notebook's explorer asks for after display (nearest first)
  var PREFETCH_WINDOW = 2;  // prefetch requests on their way at once, at least: the kernel has the next one
                            // queued while it draws, and a cell the learner runs waits behind two frames
  var PREFETCH_WINDOW_MAX = 8;  // over a slow link, enough more to cover the round trip (windowFor)
  var PREFETCH_TRIES = 2;  // a frame the kernel failed to draw (not an interrupt) is asked again once, then skipped

  function frameName(indices, meta) { return indices.join("-") + (meta.ext ? "." + meta.ext : ""); }
  function flatIndex(indices, meta) {
    var k = 0;
    for (var i = 0; i < meta.controls.length; i++) k = k * meta.controls[i].labels.length + indices[i];
    return k;
  }
  function textOf(htmlText) {
    var d = document.createElement("div");
    d.innerHTML = htmlText;
    return (d.textContent || "").replace(/\s+/g, " ").trim();
  }

  /* -- the explorer: controls, cache, moves ------------------------------------------------ */

  function Explorer(figure, meta, source) {
    this.figure = figure;
    this.meta = meta;
    this.source = source;  // {fetch(name, indices) -> Promise<{img, readout}>, release(entry)}
    this.cache = new Map();  // frame name -> {img, readout, promise, ok}
    this.state = meta.controls.map(function (c) { return c.initial; });
    this.inputs = Array.prototype.slice.call(figure.querySelectorAll("[data-control]"));
    this.readout = figure.querySelector(".readout");
    this.shown = figure.querySelector(".frame img");
    this.stopped = false;
    var self = this;
    this.inputs.forEach(function (input) {
      input.disabled = false;  // the page starts with them off: without this script they would move nothing
      var k = Number(input.getAttribute("data-control"));
      var handler = function () { self.move(k, self.valueOf(input)); };
      input.addEventListener("input", handler);
      input.addEventListener("change", handler);
    });
  }

  Explorer.prototype.valueOf = function (input) {
    if (input.type === "checkbox") return input.checked ? 1 : 0;
    return Number(input.value);
  };

  /* A frame already known (the one the page starts with, or one the kernel sent unasked). */
  Explorer.prototype.put = function (name, img, readout) {
    var old = this.cache.get(name);
    if (old && old.img !== img && old.img !== this.shown) this.source.release(old);
    var entry = {img: img, readout: readout, ok: true, promise: Promise.resolve(null)};
    entry.promise = Promise.resolve(entry);
    this.cache.set(name, entry);
    this.trim();
    return entry;
  };

  Explorer.prototype.trim = function () {
    while (this.cache.size > CACHE_MAX) {
      var oldest = this.cache.keys().next().value, entry = this.cache.get(oldest);
      if (entry.img === this.shown) {  // never drop the frame on screen: make it the newest
        this.cache.delete(oldest);
        this.cache.set(oldest, entry);
        if (this.cache.size <= CACHE_MAX + 1) break;
        continue;
      }
      this.cache.delete(oldest);
      this.source.release(entry);
    }
  };

  Explorer.prototype.load = function (name, indices, urgent) {
    var entry = this.cache.get(name);
    if (entry) {
      this.cache.delete(name);  // most recently used last
      this.cache.set(name, entry);
      return entry.promise;
    }
    entry = {img: null, readout: "", ok: false};
    var cache = this.cache;
    entry.promise = this.source.fetch(name, indices, urgent).then(function (got) {
      entry.img = got.img; entry.readout = got.readout; entry.ok = true;
      return entry;
    }, function (err) {
      if (cache.get(name) === entry) cache.delete(name);  // not kept: a later move tries again
      throw err;
    });
    this.cache.set(name, entry);
    this.trim();
    return entry.promise;
  };

  /* The frames one to ``reach`` steps away along each control (nearest first); for a short select
   * or a checkbox, every option in the first round. */
  Explorer.prototype.neighbours = function (indices, reach) {
    var meta = this.meta, out = [];
    for (var step = 1; step <= reach; step++) {
      for (var k = 0; k < meta.controls.length; k++) {
        var n = meta.controls[k].labels.length;
        var jumps = meta.controls[k].kind !== "range" && n <= SHORT_LIST;
        var deltas = jumps ? (step === 1 ? Array.from({length: n}, function (_, j) { return j - indices[k]; }) : [])
                           : [-step, step];
        deltas.forEach(function (d) {
          if (d === 0) return;
          var j = indices[k] + d;
          if (j >= 0 && j < n) {
            var next = indices.slice(); next[k] = j; out.push(next);
          }
        });
      }
    }
    return out;
  };

  /* Site: the neighbours one step away, then two steps away, loaded and decoded. */
  Explorer.prototype.prefetch = function () {
    if (this.source.pump) return this.source.pump(this);
    var self = this, meta = this.meta;
    var first = Promise.all(this.neighbours(this.state, 1).map(function (ix) {
      return self.load(frameName(ix, meta), ix).catch(function () {});
    }));
    first.then(function () {
      self.neighbours(self.state, 2).forEach(function (ix) { self.load(frameName(ix, meta), ix).catch(function () {}); });
    });
    return first;
  };

  /* The notebook's prefetch order: neighbours, then the grid (each control's ``grid`` range of
   * indices, e.g. five draws of a seed) by distance from the current setting; at most PREFETCH_MAX. */
  Explorer.prototype.prefetchOrder = function () {
    var meta = this.meta, state = this.state, seen = new Set(), out = [];
    var add = function (ix) {
      var name = frameName(ix, meta);
      if (!seen.has(name)) { seen.add(name); out.push(ix); }
    };
    this.neighbours(state, 2).forEach(add);
    var ranges = meta.controls.map(function (c, k) {
      var g = c.grid || [0, c.labels.length];
      var lo = Math.min(g[0], state[k]), hi = Math.max(g[1], state[k] + 1), r = [];
      for (var j = lo; j < hi; j++) r.push(j);
      return r;
    });
    var grid = [[]];
    ranges.forEach(function (r) {
      var next = [];
      grid.forEach(function (g) { r.forEach(function (j) { next.push(g.concat([j])); }); });
      grid = next;
    });
    var dist = function (ix) {
      var d = 0;
      for (var k = 0; k < ix.length; k++) {
        var jumps = meta.controls[k].kind !== "range" && meta.controls[k].labels.length <= SHORT_LIST;
        d += jumps ? (ix[k] !== state[k] ? 1 : 0) : Math.abs(ix[k] - state[k]);
      }
      return d;
    };
    grid.sort(function (a, b) { return dist(a) - dist(b); }).forEach(add);
    return out.slice(0, PREFETCH_MAX);
  };

  Explorer.prototype.readoutOf = function (indices, entry) {
    if (entry && entry.readout !== undefined && entry.readout !== null && !this.meta.readouts) return entry.readout;
    var meta = this.meta;
    return meta.readouts[meta.readout_of[flatIndex(indices, meta)]];
  };

  Explorer.prototype.describe = function (indices, readout) {
    var meta = this.meta;
    var parts = meta.controls.map(function (c, k) { return c.label + " = " + c.labels[indices[k]]; });
    return meta.title + " At " + parts.join(", ") + ". " + textOf(readout);
  };

  Explorer.prototype.show = function (indices, entry) {
    var meta = this.meta, values = {}, img = entry.img, readout = this.readoutOf(indices, entry);
    img.className = this.shown.className;
    img.setAttribute("data-frame", frameName(indices, meta));
    meta.controls.forEach(function (c, k) {
      values[c.name] = c.values[indices[k]];
      img.setAttribute("data-value-" + c.name.toLowerCase(), String(c.values[indices[k]]));
    });
    img.setAttribute("data-values", JSON.stringify(values));
    img.alt = this.describe(indices, readout);
    if (img !== this.shown) {
      this.shown.replaceWith(img);
      this.shown = img;
    }
    img.hidden = false;
    var note = this.figure.querySelector(".frame-missing");
    if (note) note.remove();
    this.figure.removeAttribute("data-frame-missing");
    this.readout.innerHTML = readout;
    this.figure.removeAttribute("aria-busy");
  };

  /* The frame at ``indices`` could not be had: no picture and no readout of another value, a note instead. */
  Explorer.prototype.missing = function (indices, name, why) {
    var meta = this.meta;
    var parts = meta.controls.map(function (c, k) { return c.label + " = " + c.labels[indices[k]]; });
    var note = this.figure.querySelector(".frame-missing");
    if (!note) {
      note = document.createElement("p");
      note.className = "frame-missing";
      note.setAttribute("role", "alert");
      this.shown.parentNode.appendChild(note);
    }
    note.textContent = why || ("Frame missing: the picture for " + parts.join(", ") + " (" + meta.base + name +
      ") could not be loaded; this copy of the site is incomplete. Move the control to another value, " +
      "or copy the site again (make site builds it).");
    this.shown.hidden = true;
    this.readout.textContent = "";
    this.figure.setAttribute("data-frame-missing", name);
    this.figure.removeAttribute("aria-busy");
  };

  /* What a control shows for its value (the label beside a range, its aria-valuetext). */
  Explorer.prototype.label = function (k, index) {
    var input = this.inputs[k];
    if (!input) return;
    if (input.type === "range") {
      var label = this.meta.controls[k].labels[index];
      input.setAttribute("aria-valuetext", label);
      var out = input.parentNode.querySelector("output");
      if (out) out.textContent = label;
    }
  };

  Explorer.prototype.move = function (k, index) {
    if (this.stopped || this.state[k] === index) return;
    this.state[k] = index;
    this.label(k, index);
    this.go(this.state.slice());
  };

  /* Show the frame at ``indices`` (the state already says so): at once from the cache, or when it comes. */
  Explorer.prototype.go = function (indices) {
    var meta = this.meta, name = frameName(indices, meta), self = this;
    if (this.source.moved) this.source.moved(indices);
    var entry = this.cache.get(name);
    if (entry && entry.ok) {
      this.show(indices, entry);
      this.load(name, indices);  // most recently used
    } else {
      this.figure.setAttribute("aria-busy", "true");
      this.load(name, indices, true).then(function (got) {
        if (frameName(self.state, meta) === name) self.show(indices, got);
      }, function (err) {
        if (frameName(self.state, meta) === name) self.missing(indices, name, err && err.note);
      });
    }
    this.prefetch();
  };

  /* Set the controls to ``indices`` (the kernel moved them) and show that frame. */
  Explorer.prototype.jump = function (indices) {
    var self = this;
    indices.forEach(function (index, k) {
      self.state[k] = index;
      var input = self.inputs[k];
      if (!input) return;
      if (input.type === "checkbox") input.checked = !!index;
      else input.value = String(index);
      self.label(k, index);
    });
    this.go(indices.slice());
  };

  Explorer.prototype.stop = function () {
    this.stopped = true;
    var self = this;
    this.cache.forEach(function (entry) { if (entry.img !== self.shown) self.source.release(entry); });
    this.cache.clear();
  };

  /* -- the static site: frames are files, readouts in the frame table ------------------------ */

  function FileSource(meta) { this.meta = meta; }
  FileSource.prototype.fetch = function (name) {
    var img = new Image();
    img.width = this.meta.width;
    img.height = this.meta.height;
    img.decoding = "sync";
    img.src = this.meta.base + name;
    return img.decode().then(function () { return {img: img, readout: null}; });
  };
  FileSource.prototype.release = function () {};

  function siteExplorer(figure, meta) {
    var ex = new Explorer(figure, meta, new FileSource(meta));
    var first = ex.shown.getAttribute("data-frame");
    ex.put(first, ex.shown, null);
    var initial = ex.state.slice();
    var broken = function () {
      ex.cache.delete(first);
      if (frameName(ex.state, meta) === first) ex.missing(initial, first);
    };
    if (ex.shown.complete && ex.shown.naturalWidth === 0) broken();
    else ex.shown.addEventListener("error", broken);
    return ex;
  }

  function loadMathJax() {
    if (window.MathJax || !document.querySelector(".math, .md-cell, .deep-dive")) return;
    window.MathJax = {
      tex: {inlineMath: [["$", "$"], ["\\(", "\\)"]], displayMath: [["$$", "$$"], ["\\[", "\\]"]],
            processEscapes: true},
      svg: {fontCache: "global"},
      // Formulas stay out of the Tab order (a keyboard reader tabs from control to control) until the
      // reader switches MathJax's accessibility explorer on (right-click a formula → Accessibility).
      options: {ignoreHtmlClass: "tex-ignore", processHtmlClass: "tex-process",
                menuOptions: {settings: {inTabOrder: false}}},
      loader: {paths: {mathjax: base() + "mathjax"}},
      startup: {ready: function () {
        MathJax.startup.defaultReady();
        var menu = MathJax.startup.document.menu;
        if (!menu || !menu.setExplorer) return;
        var setExplorer = menu.setExplorer;
        menu.setExplorer = function (on) {
          setExplorer.call(menu, on);
          menu.settings.inTabOrder = on;
          menu.setTabOrder(on);
        };
        if (menu.settings.explorer) menu.setTabOrder(true);
      }}
    };
    var s = document.createElement("script");
    s.src = base() + "mathjax/tex-svg.js";
    s.async = true;
    document.head.appendChild(s);
  }
  function base() {
    var me = document.querySelector('script[src$="explorer.js"]');
    return me.getAttribute("src").replace(/explorer\.js$/, "");
  }

  function ready() {
    window.SDPA_READY_AT = performance.now();  // ms since the navigation started
    document.documentElement.setAttribute("data-explorers-ready", String(Math.round(window.SDPA_READY_AT)));
    loadMathJax();
  }

  function initSite() {
    var figures = document.querySelectorAll("figure.explorer[data-explorer]");
    var all = window.SDPA_EXPLORERS || {};
    window.SDPA_LIVE = {};
    var waits = [];
    Array.prototype.forEach.call(figures, function (figure) {
      var id = figure.getAttribute("data-explorer");
      if (!all[id]) {  // its frame table did not load: controls that move nothing are switched off
        console.error("explorer " + id + ": no frame table");
        figure.querySelectorAll("[data-control]").forEach(function (input) { input.disabled = true; });
        var note = document.createElement("p");
        note.className = "frame-missing";
        note.setAttribute("role", "alert");
        note.textContent = "Frames missing: this explorer's frame table (frames/" + id + ".js) could not be " +
          "loaded; this copy of the site is incomplete. Copy the site again (make site builds it).";
        figure.querySelector(".frame").appendChild(note);
        figure.setAttribute("data-frame-missing", "frames/" + id + ".js");
        return;
      }
      var ex = siteExplorer(figure, all[id]);
      window.SDPA_LIVE[id] = ex;
      waits.push(ex.prefetch());
    });
    Promise.all(waits).then(ready);
  }

  /* -- the notebook: frames come from the kernel ----------------------------------------------- */

  /* The figure the site's template writes (authoring/site/templates/page.html.j2, macro explorer),
   * built in the page: the same controls, frame and readout. */
  function buildFigure(meta, state) {
    var h = function (tag, attrs, text) {
      var e = document.createElement(tag);
      Object.keys(attrs || {}).forEach(function (a) { e.setAttribute(a, attrs[a]); });
      if (text !== undefined) e.textContent = text;
      return e;
    };
    var uid = "sdpa" + Math.random().toString(36).slice(2, 10);
    var figure = h("figure", {"class": "explorer sdpa-explorer", id: "explorer-" + uid, "data-class": meta.cls});
    // data-lm-suppress-shortcuts: JupyterLab's shortcuts (arrows move between cells) leave the controls' keys alone
    var controls = h("div", {"class": "controls", role: "group", "aria-label": meta.title + " controls",
                             "data-lm-suppress-shortcuts": "true"});
    meta.controls.forEach(function (c, k) {
      var cid = uid + "-" + c.name, box = h("div", {"class": "control"}), at = state[k], input;
      if (c.kind === "range") {
        input = h("input", {type: "range", id: cid, "data-control": k, min: 0, max: c.labels.length - 1, step: 1,
                            "aria-valuetext": c.labels[at]});
        input.value = String(at);
        box.appendChild(h("label", {"for": cid}, c.label));
        box.appendChild(input);
        box.appendChild(h("output", {"for": cid}, c.labels[at]));
      } else if (c.kind === "select") {
        input = h("select", {id: cid, "data-control": k});
        c.labels.forEach(function (label, j) { input.appendChild(h("option", {value: j}, label)); });
        input.value = String(at);
        box.appendChild(h("label", {"for": cid}, c.label));
        box.appendChild(input);
      } else {
        input = h("input", {type: "checkbox", id: cid, "data-control": k});
        input.checked = !!at;
        box.appendChild(input);
        box.appendChild(h("label", {"for": cid}, c.label));
      }
      controls.appendChild(box);
    });
    // ... and so does the notebook around them (it takes arrows and space for itself): a key on a
    // control stays with the control
    controls.addEventListener("keydown", function (e) { e.stopPropagation(); });
    figure.appendChild(controls);
    var frame = h("div", {"class": "frame"});
    frame.appendChild(h("img", {width: meta.width, height: meta.height, alt: meta.title}));
    figure.appendChild(frame);
    figure.appendChild(h("div", {"class": "readout", "aria-live": "polite"}));
    figure.appendChild(h("style", {}, WIDGET_CSS));
    return figure;
  }

  var WIDGET_CSS = [
    ".sdpa-explorer{margin:0;font:13px/1.4 var(--jp-ui-font-family, system-ui, sans-serif);",
    "color:var(--jp-ui-font-color1, #111)}",
    ".sdpa-explorer .controls{display:flex;flex-wrap:wrap;gap:4px 18px;align-items:center;margin-bottom:4px}",
    ".sdpa-explorer .control{display:flex;align-items:center;gap:6px}",
    ".sdpa-explorer input[type=range]{width:260px}",
    ".sdpa-explorer output{min-width:3em;font-variant-numeric:tabular-nums}",
    ".sdpa-explorer .frame img{display:block;max-width:100%;height:auto;background:#fff}",
    ".sdpa-explorer .readout table{border-collapse:collapse}",
    ".sdpa-explorer[aria-busy=true] .frame img{opacity:.85}",
    ".sdpa-explorer .frame-missing{color:#a00}"
  ].join("");

  /* Frames asked of the kernel: one request at a time for prefetch; a move's frame at once. */
  function KernelSource(model) {
    this.model = model;
    this.pending = new Map();  // frame name -> {resolve, reject}
    this.inflight = 0;
    this.explorer = null;
    this.idle = true;
    this.paused = false;  // after an interrupt (KeyboardInterrupt): no prefetch until the next move
    this.failures = new Map();  // frame name -> failed answers (prefetch skips it after PREFETCH_TRIES)
    var self = this;
    this.onMessage = function (msg, buffers) { self.receive(msg, buffers); };
    model.on("msg:custom", this.onMessage);
  }
  /* Prefetch requests to keep on their way: enough to cover the link's round trip while the kernel
   * draws (the link's time, without queueing: the least of answer time minus the kernel's own drawing
   * time; the drawing time: the latest the kernel reported), so a slow link (Binder) does not leave
   * the kernel idle, and no more, so that on a local link a cell run meanwhile waits behind two frames. */
  function windowFor(linkMs, drawMs) {
    if (!(linkMs > 0) || !(drawMs > 0)) return PREFETCH_WINDOW;
    return Math.max(PREFETCH_WINDOW, Math.min(PREFETCH_WINDOW_MAX, Math.ceil((linkMs + drawMs) / drawMs)));
  }
  KernelSource.prototype.fetch = function (name, indices, urgent) {
    var self = this;
    return new Promise(function (resolve, reject) {
      self.pending.set(name, {resolve: resolve, reject: reject, sent: performance.now()});
      self.inflight += 1;
      self.model.send({type: "want", key: name, indices: indices, prefetch: !urgent});
    });
  };
  KernelSource.prototype.moved = function (indices) {
    this.paused = false;
    this.model.send({type: "move", indices: indices});
  };
  KernelSource.prototype.release = function (entry) {
    if (entry && entry.url) URL.revokeObjectURL(entry.url);
    else if (entry && entry.img && entry.img.src && entry.img.src.indexOf("blob:") === 0) URL.revokeObjectURL(entry.img.src);
  };
  KernelSource.prototype.image = function (buffer) {
    var view = buffer instanceof DataView ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
                                          : new Uint8Array(buffer.buffer || buffer);
    var img = new Image(), meta = this.explorer.meta;
    img.width = meta.width;
    img.height = meta.height;
    img.decoding = "sync";
    img.src = URL.createObjectURL(new Blob([view], {type: "image/png"}));
    return img.decode().then(function () { return img; });
  };
  KernelSource.prototype.receive = function (msg, buffers) {
    var ex = this.explorer, self = this;
    if (!ex || ex.stopped || !msg) return;
    var waiting = this.pending.get(msg.key);
    if (waiting && typeof msg.ms === "number" && msg.ms > 0) {
      var link = performance.now() - waiting.sent - msg.ms;
      this.linkMs = Math.max(0, Math.min(this.linkMs === undefined ? Infinity : this.linkMs, link));
      this.drawMs = msg.ms;
      this.window = windowFor(this.linkMs, this.drawMs);
    }
    if (msg.type === "frame" && buffers && buffers.length) {
      this.image(buffers[0]).then(function (img) {
        if (waiting) {
          self.pending.delete(msg.key);
          waiting.resolve({img: img, readout: msg.readout});
        } else {
          ex.put(msg.key, img, msg.readout);
        }
        if (msg.show) ex.jump(msg.indices);
      }, function () {
        if (waiting) { self.pending.delete(msg.key); waiting.reject({note: "The frame could not be decoded."}); }
      }).then(function () { self.answered(); });
    } else if (msg.type === "failed") {
      if (waiting) {
        this.pending.delete(msg.key);
        waiting.reject({note: "This frame was not drawn (" + (msg.error || "interrupted") +
                              "): move the control again to retry."});
      }
      // The learner's interrupt stops prefetch until the next move; any other failure (one frame the
      // kernel could not draw) costs that frame a try, and prefetch goes on with the others.
      this.failures.set(msg.key, (this.failures.get(msg.key) || 0) + 1);
      if (!msg.error || msg.error === "KeyboardInterrupt") this.paused = true;
      this.answered();
    }
  };
  KernelSource.prototype.answered = function () {
    this.inflight = Math.max(0, this.inflight - 1);
    var ex = this.explorer;
    if (ex && !ex.stopped) this.pump(ex);
  };
  /* Ask for the next frame of the prefetch order that is not cached, if nothing is on its way. */
  KernelSource.prototype.pump = function (ex) {
    // window.SDPA_PREFETCH = false switches prefetch off (benchmarks/browser_latency.py measures first visits so)
    var most = this.window || PREFETCH_WINDOW;
    if (ex.stopped || this.paused || this.inflight >= most || root.SDPA_PREFETCH === false) {
      return Promise.resolve();
    }
    var order = ex.prefetchOrder(), meta = ex.meta, asked = false, skipped = 0;
    for (var i = 0; i < order.length && this.inflight < most; i++) {
      var name = frameName(order[i], meta);
      if (ex.cache.has(name)) continue;
      if ((this.failures.get(name) || 0) >= PREFETCH_TRIES) { skipped += 1; continue; }
      ex.load(name, order[i], false).catch(function () {});
      asked = true;
    }
    if (asked || this.inflight > 0) return Promise.resolve();
    if (!ex.figure.hasAttribute("data-grid-complete")) {
      ex.figure.setAttribute("data-grid-complete", String(Math.round(performance.now() - ex.t0)));
      ex.figure.setAttribute("data-grid-frames", String(order.length - skipped));
      if (skipped) ex.figure.setAttribute("data-grid-skipped", String(skipped));
    }
    return Promise.resolve();
  };

  /* anywidget's render: the explorer of one widget view. */
  function render(ctx) {
    var model = ctx.model, el = ctx.el;
    var meta = model.get("spec"), state = model.get("state");
    var figure = buildFigure(meta, state);
    el.appendChild(figure);
    var source = new KernelSource(model);
    var ex = new Explorer(figure, meta, source);
    ex.t0 = performance.now();
    source.explorer = ex;
    var uid = figure.id.slice("explorer-".length);
    (root.SDPA_LIVE = root.SDPA_LIVE || {})[uid] = ex;  // what tests and benchmarks look at
    ex.state = state.slice();
    var showFirst = function () {
      var png = model.get("png"), key = model.get("key");
      if (!png || !key) return;
      var readout = model.get("readout"), indices = model.get("state").slice();
      return source.image(png).then(function (img) {
        if (ex.stopped) return;
        ex.put(key, img, readout);
        ex.jump(indices);
      });
    };
    // a frame the kernel sends unasked (the learner set a control from code): cache it and show it
    var onKey = function () { showFirst(); };
    model.on("change:key", onKey);
    figure.setAttribute("aria-busy", "true");
    var first = showFirst();
    if (first) first.then(function () { figure.setAttribute("data-ready", "1"); });
    return function () {
      model.off("change:key", onKey);
      model.off("msg:custom", source.onMessage);
      source.pending.forEach(function (w) { w.reject({note: "closed"}); });
      source.pending.clear();
      ex.stop();
      if (root.SDPA_LIVE) delete root.SDPA_LIVE[uid];
    };
  }

  var api = {Explorer: Explorer, initSite: initSite, render: render, buildFigure: buildFigure,
             CACHE_MAX: CACHE_MAX, PREFETCH_MAX: PREFETCH_MAX, windowFor: windowFor, KernelSource: KernelSource};
  root.SDPA_EXPLORER = api;
  // The site loads this file as a classic script: start its explorers once the page is parsed.
  if (typeof document !== "undefined" && document.currentScript && !root.SDPA_EXPLORER_NO_SITE) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initSite);
    else initSite();
  }
})(typeof globalThis !== "undefined" ? globalThis : window);
