"""What the browser tests and the benchmark do in a page of the static site (Playwright, sync API).

- :func:`open_page` -- go to a page, wait until every explorer has its neighbouring frames
  decoded (``<html data-explorers-ready>``) and MathJax has typeset the page;
- :func:`problems` -- MathJax errors, broken images, images without alt text, page errors;
- :func:`expected_frame` / :func:`shown` -- which frame a control state should show, and
  which one the page shows (the ``data-*`` attributes of the explorer's ``<img>``);
- :func:`press` -- one key on a control, and the milliseconds from the ``keydown`` event to
  the new frame in the DOM, decoded, and at the next animation frame (when it is painted),
  all measured in the page (a MutationObserver armed before the key is pressed).
"""

from __future__ import annotations

import json

READY = "() => document.documentElement.hasAttribute('data-explorers-ready')"
MATH_DONE = """async () => {
  if (!document.querySelector('.math, .md-cell')) return true;
  for (let i = 0; i < 600 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 50));
  if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return false;
  await MathJax.startup.promise;
  return true;
}"""


def open_page(page, url: str, timeout_ms: float = 30_000) -> None:
    page.goto(url, wait_until="load", timeout=timeout_ms)
    page.wait_for_function(READY, timeout=timeout_ms)
    assert page.evaluate(MATH_DONE), "MathJax did not start"


def problems(page) -> list[str]:
    out = list(getattr(page, "sdpa_errors", []))
    out += [f"MathJax error: {t}" for t in page.evaluate(
        """() => Array.from(document.querySelectorAll('mjx-merror, [data-mjx-error]'))
                  .map(e => e.getAttribute('data-mjx-error') || e.textContent)""")]
    out += [f"unrendered TeX: {t[:80]}" for t in page.evaluate(
        """() => Array.from(document.querySelectorAll('span.math, div.math'))
                  .filter(e => !e.querySelector('mjx-container')).map(e => e.textContent)""")]
    out += [f"image without alt text: {s}" for s in page.evaluate(
        "() => Array.from(document.images).filter(i => !(i.alt || '').trim()).map(i => i.getAttribute('src'))")]
    out += [f"image did not load: {s}" for s in page.evaluate("""async () => {
      const bad = [];
      for (const img of Array.from(document.images)) {
        img.loading = 'eager';
        try { await img.decode(); } catch (e) {}
        if (!img.complete || img.naturalWidth === 0) bad.push(img.getAttribute('src'));
      }
      return bad;
    }""")]
    return out


def explorers(page) -> list[dict]:
    """Each explorer of the page: id and its controls (kind, labels, values, starting index)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('figure.explorer')).map(f => {
      const m = window.SDPA_EXPLORERS[f.dataset.explorer];
      return {id: f.dataset.explorer, cls: m.cls, ext: m.ext, controls: m.controls};
    })""")


def shown(page, explorer_id: str) -> dict:
    """The explorer's shown frame: file, values (from its data attributes), loaded and decoded."""
    return page.evaluate("""(id) => {
      const img = document.querySelector(`#explorer-${id} .frame img`);
      const values = {};
      for (const a of img.attributes) if (a.name.startsWith('data-value-')) values[a.name.slice(11)] = a.value;
      return {frame: img.dataset.frame, values: JSON.parse(img.dataset.values), attrs: values, alt: img.alt,
              loaded: img.complete && img.naturalWidth > 0, src: img.getAttribute('src'),
              state: window.SDPA_LIVE[id].state.slice(),
              readout: document.querySelector(`#explorer-${id} .readout`).innerHTML};
    }""", explorer_id)


def expected_frame(indices, ext: str) -> str:
    """The frame's name: the indices "-"-joined, then ``.ext`` (the notebook's frames have none)."""
    return "-".join(str(i) for i in indices) + ("." + ext if ext else "")


def control_locator(page, explorer_id: str, k: int):
    return page.locator(f"#explorer-{explorer_id} [data-control='{k}']")


def key_for(kind: str, forward: bool) -> str:
    if kind == "checkbox":
        return "Space"
    return "ArrowRight" if forward and kind == "range" else "ArrowDown" if forward else (
        "ArrowLeft" if kind == "range" else "ArrowUp")


_ARM = """([id, frame]) => {
  const t = {key: null, dom: null, painted: null};
  window.__sdpaPress = t;
  document.addEventListener('keydown', e => { t.key = e.timeStamp; }, {capture: true, once: true});
  const figure = document.getElementById('explorer-' + id);
  const obs = new MutationObserver(() => {
    const img = figure.querySelector('.frame img');
    if (t.dom === null && img.dataset.frame === frame && img.complete && img.naturalWidth > 0) {
      obs.disconnect();
      t.dom = performance.now();
      requestAnimationFrame(() => { t.painted = performance.now(); });
    }
  });
  obs.observe(figure, {subtree: true, childList: true, attributes: true});
}"""


def press(page, explorer_id: str, k: int, kind: str, forward: bool, frame: str, timeout_ms: float = 20_000) -> dict:
    """Press one key on control ``k`` and wait for ``frame``; the latencies in ms, measured in the page.

    From the ``keydown`` event to the mutation that puts the new frame (loaded and decoded) in
    the DOM (``dom``), and to the next animation frame, when it is painted (``painted``).
    """
    control = control_locator(page, explorer_id, k)
    # an explorer in a folded deep dive is pressed as a reader would: after opening the deep dive
    control.evaluate("e => { for (let d = e.closest('details'); d; d = d.parentElement.closest('details')) "
                     "d.open = true; }")
    control.focus()
    page.evaluate(_ARM, [explorer_id, frame])
    page.keyboard.press(key_for(kind, forward))
    page.wait_for_function("() => window.__sdpaPress.painted !== null", timeout=timeout_ms)
    t = page.evaluate("() => window.__sdpaPress")
    return {"dom": t["dom"] - t["key"], "painted": t["painted"] - t["key"]}


def values_match(controls, indices, values: dict) -> bool:
    expected = {c["name"]: c["values"][i] for c, i in zip(controls, indices)}
    return json.dumps(expected, sort_keys=True) == json.dumps(values, sort_keys=True)
