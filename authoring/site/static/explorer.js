/* Static explorers: native controls move between frames drawn at build time.
 *
 * Each <figure class="explorer"> has a script that sets window.SDPA_EXPLORERS[id] = meta:
 * the controls (labels, values, starting index), the readouts, and where the frames are.
 * A frame's file name is the indices of its control values joined by "-" (e.g. 6-2-0.webp).
 * Frames are loaded as images (fetch is blocked from file://) and decoded before they are
 * shown: the frames one step away along every control are prefetched and decoded after each
 * move, so a key press swaps in an image that is already decoded.
 * A frame that cannot load (a half-copied site) is never stood in for by another: the picture
 * is hidden and a "frame missing" note names the values and the file (figure[data-frame-missing]).
 * When every explorer has its neighbours decoded, <html data-explorers-ready> is set and
 * MathJax (copied into the site) is loaded, so the math does not compete with the frames.
 */
(function () {
  "use strict";
  var CACHE_MAX = 400;
  var SHORT_LIST = 6;

  function frameName(indices, meta) { return indices.join("-") + "." + meta.ext; }
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

  function Explorer(figure, meta) {
    this.figure = figure;
    this.meta = meta;
    this.cache = new Map();  // file name -> {img, promise, ok}
    this.state = meta.controls.map(function (c) { return c.initial; });
    this.inputs = Array.prototype.slice.call(figure.querySelectorAll("[data-control]"));
    this.readout = figure.querySelector(".readout");
    this.shown = figure.querySelector(".frame img");
    var first = this.shown.getAttribute("data-frame"), self = this;
    this.cache.set(first, {img: this.shown, promise: Promise.resolve(this.shown), ok: true});
    var initial = this.state.slice();
    var broken = function () {
      self.cache.delete(first);
      if (frameName(self.state, meta) === first) self.missing(initial, first);
    };
    if (this.shown.complete && this.shown.naturalWidth === 0) broken();
    else this.shown.addEventListener("error", broken);
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

  Explorer.prototype.load = function (name) {
    var entry = this.cache.get(name);
    if (entry) {
      this.cache.delete(name);  // most recently used last
      this.cache.set(name, entry);
      return entry.promise;
    }
    var img = new Image();
    img.width = this.meta.width;
    img.height = this.meta.height;
    img.decoding = "sync";
    img.src = this.meta.base + name;
    entry = {img: img, ok: false};
    var cache = this.cache;
    entry.promise = img.decode().then(function () { entry.ok = true; return img; }, function (err) {
      if (cache.get(name) === entry) cache.delete(name);  // not kept: a later move tries again
      throw err;
    });
    this.cache.set(name, entry);
    while (this.cache.size > CACHE_MAX) {
      var oldest = this.cache.keys().next().value;
      if (this.cache.get(oldest).img === this.shown) break;
      this.cache.delete(oldest);
    }
    return entry.promise;
  };

  /* The frames one and two steps away along each control (one step first); for a short select or
   * a checkbox, every option in the first round. */
  Explorer.prototype.neighbours = function (indices, reach) {
    var meta = this.meta, out = [];
    for (var step = 1; step <= reach; step++) {
      for (var k = 0; k < meta.controls.length; k++) {
        var n = meta.controls[k].labels.length;
        // a short list (a select, a checkbox) may jump to any option: all of them come first
        var jumps = meta.controls[k].kind !== "range" && n <= SHORT_LIST;
        var deltas = jumps ? (step === 1 ? Array.from({length: n}, function (_, j) { return j - indices[k]; }) : [])
                           : [-step, step];
        deltas.forEach(function (d) {
          if (d === 0) return;
          var j = indices[k] + d;
          if (j >= 0 && j < n) {
            var next = indices.slice(); next[k] = j; out.push(frameName(next, meta));
          }
        });
      }
    }
    return out;
  };

  Explorer.prototype.prefetch = function () {
    var self = this;
    var names = this.neighbours(this.state, 1);
    var first = Promise.all(names.map(function (n) { return self.load(n).catch(function () {}); }));
    first.then(function () {
      self.neighbours(self.state, 2).forEach(function (n) { self.load(n).catch(function () {}); });
    });
    return first;
  };

  Explorer.prototype.describe = function (indices) {
    var meta = this.meta;
    var parts = meta.controls.map(function (c, k) { return c.label + " = " + c.labels[indices[k]]; });
    return meta.title + " At " + parts.join(", ") + ". " + textOf(meta.readouts[meta.readout_of[flatIndex(indices, meta)]]);
  };

  Explorer.prototype.show = function (indices, img) {
    var meta = this.meta, values = {};
    img.className = this.shown.className;
    img.setAttribute("data-frame", frameName(indices, meta));
    meta.controls.forEach(function (c, k) {
      values[c.name] = c.values[indices[k]];
      img.setAttribute("data-value-" + c.name.toLowerCase(), String(c.values[indices[k]]));
    });
    img.setAttribute("data-values", JSON.stringify(values));
    img.alt = this.describe(indices);
    if (img !== this.shown) {
      this.shown.replaceWith(img);
      this.shown = img;
    }
    img.hidden = false;
    var note = this.figure.querySelector(".frame-missing");
    if (note) note.remove();
    this.figure.removeAttribute("data-frame-missing");
    this.readout.innerHTML = meta.readouts[meta.readout_of[flatIndex(indices, meta)]];
    this.figure.removeAttribute("aria-busy");
  };

  /* The frame at ``indices`` could not load: no picture and no readout of another value, a note instead. */
  Explorer.prototype.missing = function (indices, name) {
    var meta = this.meta;
    var parts = meta.controls.map(function (c, k) { return c.label + " = " + c.labels[indices[k]]; });
    var note = this.figure.querySelector(".frame-missing");
    if (!note) {
      note = document.createElement("p");
      note.className = "frame-missing";
      note.setAttribute("role", "alert");
      this.shown.parentNode.appendChild(note);
    }
    note.textContent = "Frame missing: the picture for " + parts.join(", ") + " (" + meta.base + name +
      ") could not be loaded; this copy of the site is incomplete. Move the control to another value, " +
      "or copy the site again (make site builds it).";
    this.shown.hidden = true;
    this.readout.textContent = "";
    this.figure.setAttribute("data-frame-missing", name);
    this.figure.removeAttribute("aria-busy");
  };

  Explorer.prototype.move = function (k, index) {
    var meta = this.meta;
    if (this.state[k] === index) return;
    this.state[k] = index;
    var input = this.inputs[k];
    if (input && input.type === "range") {
      var label = meta.controls[k].labels[index];
      input.setAttribute("aria-valuetext", label);
      var out = input.parentNode.querySelector("output");
      if (out) out.textContent = label;
    }
    var indices = this.state.slice(), name = frameName(indices, meta), self = this;
    var entry = this.cache.get(name);
    if (entry && entry.ok) {
      this.show(indices, entry.img);
      this.load(name);
    } else {
      this.figure.setAttribute("aria-busy", "true");
      this.load(name).then(function (img) {
        if (frameName(self.state, meta) === name) self.show(indices, img);
      }, function () {
        if (frameName(self.state, meta) === name) self.missing(indices, name);
      });
    }
    this.prefetch();
  };

  function loadMathJax() {
    if (window.MathJax || !document.querySelector(".math, .md-cell, .deep-dive")) return;
    window.MathJax = {
      tex: {inlineMath: [["$", "$"], ["\\(", "\\)"]], displayMath: [["$$", "$$"], ["\\[", "\\]"]],
            processEscapes: true},
      svg: {fontCache: "global"},
      options: {ignoreHtmlClass: "tex-ignore", processHtmlClass: "tex-process", menuOptions: {settings: {}}},
      loader: {paths: {mathjax: base() + "mathjax"}}
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

  function init() {
    var figures = document.querySelectorAll("figure.explorer");
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
      var ex = new Explorer(figure, all[id]);
      window.SDPA_LIVE[id] = ex;
      waits.push(ex.prefetch());
    });
    Promise.all(waits).then(ready);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
