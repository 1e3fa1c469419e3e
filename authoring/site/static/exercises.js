/* The exercises, answered in the page: the same verdicts and messages as check() in the notebook.
 *
 * Each <form class="exercise"> carries the exercise's spec as JSON, exported by the exercise bank
 * at build time (sdpa_helpers.exercises.page_spec): for a number or a tuple the rule's parameters
 * (the exact values and the slips as decimal text, the figures asked for per entry, the messages);
 * for a choice every answer the page can give with the checker's own verdict. This script holds no
 * answers of its own: it applies the course's one rule for significant figures
 * (sdpa_helpers/exercises/_figures.py, the same steps on the same digits) and the numeric checker's
 * order of messages (numeric_checker in sdpa_helpers/exercises/__init__.py).
 *
 * A typed answer is first normalised by the bank's one rule (sdpa_helpers/exercises/_text.py, exported
 * in every spec as spec.text): line breaks removed, the listed Unicode spaces and format characters
 * stripped from both ends and refused inside, and a length limit, each with check()'s own message.
 *
 * Progress (which exercises were answered right) stays in this browser's localStorage, under a key
 * of this course and this folder of pages (storeKey below), so another site of the same origin (or
 * another file:// page) keeps its own; nothing is sent anywhere. The contents page shows it. Any
 * stored value that is not an object of `true`s reads as no progress and is replaced on the next
 * right answer.
 */
(function () {
  "use strict";
  var COURSE = "why-sqrt-dk";
  // no nested repetition: [0-9]+\.?[0-9]* took time quadratic in the length of a long non-number
  var NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
  var FIGURES = 3;

  // -- the one normalisation of typed text (_text.py, from spec.text) ----------------------------
  function inRanges(code, ranges) {
    for (var i = 0; i < ranges.length; i++) if (code >= ranges[i][0] && code <= ranges[i][1]) return true;
    return false;
  }
  function codeName(code) {
    var hex = code.toString(16).toUpperCase();
    while (hex.length < 4) hex = "0" + hex;
    return "U+" + hex;
  }
  function strip(rule, text) {  // line breaks removed, ignored characters stripped from both ends
    var chars = Array.from(String(text)).filter(function (c) { return rule.line_breaks.indexOf(c.codePointAt(0)) < 0; });
    var start = 0, end = chars.length;
    while (start < end && inRanges(chars[start].codePointAt(0), rule.ignored)) start++;
    while (end > start && inRanges(chars[end - 1].codePointAt(0), rule.ignored)) end--;
    return chars.slice(start, end).join("");
  }
  function refusal(rule, text) {  // the message refusing stripped text, or null
    var chars = Array.from(text);
    if (chars.length > rule.max_chars) {
      return rule.too_long.replace("{length}", String(chars.length)).replace("{limit}", String(rule.max_chars));
    }
    for (var i = 0; i < chars.length; i++) {
      var code = chars[i].codePointAt(0);
      if (inRanges(code, rule.ignored)) return rule.inside.replace("{code}", codeName(code));
    }
    return null;
  }

  // -- the one rule (_figures.py) ------------------------------------------------------------
  function parse(text) {  // [sign, digits, exponent, figures] or null (text already stripped)
    var t = text;
    if (!NUMBER.test(t)) return null;
    var sign = t.charAt(0) === "-" ? -1 : 1;
    t = t.replace(/^[+-]/, "").toLowerCase();
    var e = t.indexOf("e"), mant = e < 0 ? t : t.slice(0, e), exp = e < 0 ? 0 : parseInt(t.slice(e + 1), 10);
    var point = mant.indexOf("."), whole = point < 0 ? mant : mant.slice(0, point);
    var frac = point < 0 ? "" : mant.slice(point + 1);
    var digits = (whole + frac).replace(/^0+/, "");
    var exponent = exp - frac.length;
    var figures = Math.max(point >= 0 ? digits.length : digits.replace(/0+$/, "").length, 1);
    if (!/[1-9]/.test(digits)) return [1, "0", 0, 1];
    var trimmed = digits.replace(/0+$/, "");
    return [sign, trimmed, exponent + digits.length - trimmed.length, figures];
  }
  function key(num) { return num[1] === "0" ? "0" : (num[0] < 0 ? "-" : "") + num[1] + "e" + num[2]; }
  function rounded(num, n) {  // keys of num rounded to n figures, a tie half up and half to even
    var digits = num[1];
    if (digits === "0" || digits.length <= n) return [key(num)];
    var keep = digits.slice(0, n), rest = digits.slice(n), shift = num[2] + rest.length;
    var ups = rest === "5" ? [1, Number(keep.charAt(keep.length - 1)) % 2] : [rest.charAt(0) >= "5" ? 1 : 0];
    return ups.map(function (up) {
      var value = String(Number(keep) + up), trimmed = value.replace(/0+$/, "");
      return key([num[0], trimmed, shift + value.length - trimmed.length]);
    });
  }
  function meets(a, b) { return a.some(function (k) { return b.indexOf(k) >= 0; }); }
  function judgeEntry(answer, reference, n) {  // "right", "few" or "off"
    if (n === null) return key(answer) === key(reference) ? "right" : "off";
    var want = rounded(reference, n);
    if (want.indexOf(key(answer)) >= 0) return "right";
    if (answer[3] < n) return rounded(reference, answer[3]).indexOf(key(answer)) >= 0 ? "few" : "off";
    return meets(rounded(answer, n), want) ? "right" : "off";
  }
  function slipMatches(answer, slip, n, few) {  // slip_matches: two figures do, unless the right answer given short
    n = n === null ? FIGURES : n;
    var m = Math.min(answer[3], n), need = Math.min(n, slip[3]);
    if (answer[3] < need && (few || answer[3] < Math.min(2, need))) return false;
    return key(answer) === key(slip) || meets(rounded(answer, m), rounded(slip, m));
  }
  function ofFloat(text) {  // a Python repr: an integer-valued float counts as its integer (100.0 as "100")
    var p = parse(text);
    if (p && /\.0$/.test(text)) p = parse(text.slice(0, -2));
    return p;
  }

  // -- the numeric checker (numeric_checker), for answers typed as text -----------------------
  function shown(shape, texts) {
    if (!shape.length) return texts[0];
    var size = texts.length / shape[0], parts = [];
    for (var i = 0; i < shape[0]; i++) parts.push(shown(shape.slice(1), texts.slice(i * size, (i + 1) * size)));
    return "[" + parts.join(", ") + "]";
  }
  function plural(n, word) { return n + " " + word + (n !== 1 ? "s" : ""); }

  function checkNumber(spec, texts) {  // [ok, feedback]
    var parsed = [], scalar = spec.shape.length === 0;
    for (var i = 0; i < texts.length; i++) {
      var text = strip(spec.text, texts[i]);
      if (!text) return [false, scalar ? "no answer yet: give a number." : "an entry is empty: give every number."];
      var refused = refusal(spec.text, text);
      if (refused) return [false, refused];
      var p = parse(text);
      if (!p) return [false, "\"" + text + "\" is not a number: write digits such as 0.25, -3 or 1e-3."];
      texts[i] = text;
      parsed.push(p);
    }
    var refs = spec.references.map(ofFloat), ns = spec.figures;
    var also = (spec.also || []).map(function (a) { return a.map(ofFloat); });
    if (also.some(function (rs) { return parsed.every(function (p, i) { return judgeEntry(p, rs[i], ns[i]) === "right"; }); })) {
      return [true, ""];
    }
    var verdicts = parsed.map(function (p, i) { return judgeEntry(p, refs[i], ns[i]); });
    if (verdicts.every(function (v) { return v === "right"; })) return [true, ""];
    var all = shown(spec.shape, texts);
    for (var s = 0; s < spec.slips.length; s++) {
      var values = spec.slips[s].values.map(ofFloat);
      if (parsed.every(function (p, i) { return slipMatches(p, values[i], ns[i], verdicts[i] === "few"); })) {
        return [false, "your answer " + all + " is " + spec.slips[s].means + "."];
      }
    }
    if (spec.not_whole && parsed.some(function (p, i) { return ns[i] === null && p[2] < 0; })) {
      return [false, spec.not_whole];
    }
    for (var j = 0; j < verdicts.length; j++) {
      if (verdicts[j] === "few") {
        var lead = scalar ? texts[j] : "an entry of your answer, " + texts[j] + ",";
        return [false, lead + " is not right to " + ns[j] + " significant figures (it agrees to " + plural(parsed[j][3], "significant figure") + ")."];
      }
    }
    var right = verdicts.map(function (v) { return v === "right"; });
    if (spec.entry_names && right.length === 2 && right[0] !== right[1]) {
      var good = right[0] ? 0 : 1;
      return [false, spec.entry_names[good] + " is right; " + spec.entry_names[1 - good] + " is off."];
    }
    return [false, spec.what + " is off."];
  }

  function verdictOf(spec, form) {
    if (spec.kind === "number" || spec.kind === "tuple") {
      var texts = Array.prototype.map.call(form.querySelectorAll("input.entry"), function (i) { return i.value; });
      return checkNumber(spec, texts);
    }
    if (spec.kind === "choice") {
      var picked = form.querySelector("input[type=radio]:checked");
      return spec.table[picked ? picked.value : ""];
    }
    var words = Array.prototype.map.call(form.querySelectorAll("select.slot"), function (s) { return s.value; });
    return spec.table[words.join("|")];
  }

  // -- progress, kept in this browser only ------------------------------------------------------
  function storeKey() {  // this course, this folder of pages: not every page of the origin
    var path = (window.location && window.location.pathname) || "/";
    return "sdpa-course-progress:" + COURSE + ":" + path.replace(/[^\/]*$/, "");
  }
  function progress() {  // {key: true} of the exercises answered right; anything else stored reads as none
    var stored;
    try { stored = JSON.parse(window.localStorage.getItem(storeKey())); } catch (e) { return {}; }
    var done = {};
    if (stored && typeof stored === "object" && !Array.isArray(stored)) {
      Object.keys(stored).forEach(function (k) { if (stored[k] === true && /^\d\d\.\w+$/.test(k)) done[k] = true; });
    }
    return done;
  }
  function remember(k) {
    try {
      var p = progress();
      p[k] = true;
      window.localStorage.setItem(storeKey(), JSON.stringify(p));
    } catch (e) { /* storage off (private window, file:// policy): progress is simply not kept */ }
  }

  function setUp(form) {
    var spec = JSON.parse(form.querySelector("script.exercise-spec").textContent);
    var out = form.querySelector(".verdict"), badge = form.querySelector(".done");
    if (progress()[spec.key] && badge) badge.hidden = false;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var v = verdictOf(spec, form), ok = v[0], feedback = v[1];
      var line = ok ? spec.key + ": correct. " + feedback : spec.key + ": not yet. " + feedback;
      out.textContent = "";
      var p = document.createElement("p");
      p.className = ok ? "right" : "wrong";
      // check() prints emoji marks (U+2705, U+274C); the page draws ✔/✘, which DejaVu Sans and most text fonts hold
      var mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = ok ? "\u2714" : "\u2718";
      p.appendChild(mark);
      p.appendChild(document.createTextNode(" " + line.replace(/\s+$/, "")));
      out.appendChild(p);
      if (!ok) {
        var h = document.createElement("p");
        h.className = "hint";
        h.textContent = "Hint: " + spec.hint;
        out.appendChild(h);
      } else {
        remember(spec.key);
        if (badge) badge.hidden = false;
      }
      out.setAttribute("data-ok", ok ? "true" : "false");
    });
  }

  function showProgress() {
    var done = progress();
    Array.prototype.forEach.call(document.querySelectorAll("[data-exercises]"), function (item) {
      var keys = item.getAttribute("data-exercises").split(" ").filter(Boolean);
      var out = item.querySelector(".progress");
      if (!keys.length || !out) return;
      var n = keys.filter(function (k) { return done[k]; }).length;
      out.textContent = " — " + n + " of " + keys.length + " exercises answered right in this browser";
    });
  }

  /* Every reader: a region that scrolls sideways (a wide table, a long formula, an output) can be
   * scrolled by keyboard: it gets a tab stop, and only while it does scroll. */
  function scrollersFocusable() {
    var main = document.querySelector("main");
    Array.prototype.forEach.call(document.querySelectorAll("main mjx-container:not([display=true])"), function (m) {
      m.classList.remove("too-wide");
      if (main && m.getBoundingClientRect().right > main.getBoundingClientRect().right + 1) m.classList.add("too-wide");
    });
    var regions = document.querySelectorAll("main pre, main table, main mjx-container, figure.explorer .readout");
    Array.prototype.forEach.call(regions, function (el) {
      var scrolls = el.scrollWidth > el.clientWidth + 1;
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.setAttribute("data-scroll-tab", "");
      } else if (!scrolls && el.hasAttribute("data-scroll-tab")) {
        el.removeAttribute("tabindex");
        el.removeAttribute("data-scroll-tab");
      }
    });
  }

  /* MathJax's own accessibility explorer (right-click a formula → Accessibility → Activate). MathJax 3.2.2's
   * menu loads a11y/explorer, then re-renders once, synchronously, before the speech engine has read its rule
   * files (sre/mathmaps): that re-render stops on MathJax's "retry" and the formulas are never enriched. So once
   * the explorer's document is in place, re-render again through MathJax's own retry handler, then put the
   * formulas in the Tab order (they stay out of it while the explorer is off: explorer.js). */
  function explorerWhenAsked() {
    var menu = MathJax.startup.document && MathJax.startup.document.menu;
    if (!menu || !menu.setExplorer || menu.sdpaRetry) return;
    var setExplorer = menu.setExplorer;
    menu.sdpaRetry = true;
    menu.setExplorer = function (on) {
      setExplorer.call(menu, on);
      if (!on) return;
      var tries = 0;
      var wait = setInterval(function () {
        var doc = MathJax.startup.document;
        if (++tries > 600) clearInterval(wait);
        if (!doc || typeof doc.explorable !== "function") return;
        clearInterval(wait);
        MathJax._.mathjax.mathjax.handleRetriesFor(function () {
          doc.menu.rerender(MathJax._.core.MathItem.STATE.COMPILED);
        }).then(function () {
          doc.menu.setTabOrder(true);
          scrollersFocusable();
        });
      }, 100);
    };
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("form.exercise"), setUp);
    showProgress();
    scrollersFocusable();
    window.addEventListener("resize", scrollersFocusable);
    document.addEventListener("toggle", scrollersFocusable, true);  // a deep dive opened
    var typeset = setInterval(function () {  // MathJax's formulas arrive later
      if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
        clearInterval(typeset);
        MathJax.startup.promise.then(scrollersFocusable).then(explorerWhenAsked);
      }
    }, 200);
    setTimeout(function () { clearInterval(typeset); }, 60000);
  }
  window.SDPA_EXERCISES = {parse: parse, rounded: rounded, checkNumber: checkNumber, strip: strip, refusal: refusal,
                           progress: progress, remember: remember, storeKey: storeKey};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
