"""The prefetch benchmark (benchmarks/prefetch_cpu.py) draws the frames the front end asks for.

Its Python replica of ``prefetchOrder`` (explorer.js) is compared with the JavaScript itself, run under
node on every explorer's control specs: the same frames, in the same order, so the kernel CPU it
reports is that of the notebook's real prefetch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from prefetch_cpu import prefetch_order  # noqa: E402

NODE = shutil.which("node") or ("/usr/bin/node" if Path("/usr/bin/node").exists() else None)
ORDER_JS = """
const fs = require("fs");
globalThis.SDPA_EXPLORER_NO_SITE = true;
eval(fs.readFileSync(process.argv[1], "utf8"));
const P = SDPA_EXPLORER.Explorer.prototype;
const metas = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(metas.map(meta => {
  const self = Object.create(P);
  self.meta = meta; self.state = meta.controls.map(c => c.initial);
  return P.prefetchOrder.call(self);
})));
"""


@pytest.mark.slow  # builds all 11 explorers (about 7 s of CPU)
@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_benchmark_draws_the_frames_the_front_end_asks_for():
    from sdpa_helpers.widgets import FRONT_END, all_explorers

    metas, ours = [], []
    for cls in all_explorers():
        explorer = cls()
        try:
            specs = explorer._specs
            metas.append({"controls": [{k: v for k, v in s.items() if k != "_py"} for s in specs], "ext": ""})
            ours.append(prefetch_order(specs))
        finally:
            explorer.close()
    done = subprocess.run([NODE, "-e", ORDER_JS, str(FRONT_END)], input=json.dumps(metas),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    for cls, a, b in zip(all_explorers(), ours, theirs):
        assert a == b, f"{cls.__name__}: the benchmark's order differs from explorer.js's prefetchOrder"
    assert all(0 < len(a) <= 150 for a in ours)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_prefetch_window_covers_the_link_s_round_trip_and_no_more():
    """``windowFor(link ms, kernel's drawing ms)``: two requests on a local link, enough to keep the
    kernel drawing over a slow one ((link + draw) / draw, rounded up), never more than eight."""
    cases = [(5, 40), (0, 40), (100, 40), (100, 25), (200, 30), (1000, 10), (None, 40), (100, 0)]
    script = ("const fs = require('fs'); globalThis.SDPA_EXPLORER_NO_SITE = true;"
              "eval(fs.readFileSync(process.argv[1], 'utf8'));"
              f"const cases = {json.dumps(cases)};"
              "process.stdout.write(JSON.stringify(cases.map(c => SDPA_EXPLORER.windowFor(c[0], c[1]))));")
    from sdpa_helpers.widgets import FRONT_END

    done = subprocess.run([NODE, "-e", script, str(FRONT_END)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [2, 2, 4, 5, 8, 8, 2, 2]


FAILURE_JS = """
const fs = require("fs");
globalThis.SDPA_EXPLORER_NO_SITE = true;
eval(fs.readFileSync(process.argv[1], "utf8"));
const E = SDPA_EXPLORER, [error, failing] = JSON.parse(process.argv[2]);
const sent = [], model = {on() {}, send(m) { sent.push(m); }};
const source = new E.KernelSource(model), attrs = {};
const figure = {querySelectorAll: () => [], querySelector: () => null,
                setAttribute: (k, v) => { attrs[k] = v; }, hasAttribute: k => k in attrs};
const labels = ["0", "1", "2", "3", "4", "5"];
const meta = {controls: [{kind: "range", labels: labels, initial: 0, grid: [0, labels.length]}], ext: ""};
const ex = new E.Explorer(figure, meta, source);
ex.t0 = 0; source.explorer = ex;
const tick = () => new Promise(r => setImmediate(r));
(async () => {
  source.pump(ex);
  for (let answered = 0; answered < sent.length; answered++) {
    const m = sent[answered];
    if (m.type !== "want") continue;
    if (m.key === failing) {
      source.receive({type: "failed", key: m.key, error: error});
    } else {  // the kernel's frame, as receive() hands it on once the PNG is decoded
      const w = source.pending.get(m.key); source.pending.delete(m.key);
      w.resolve({img: {}, readout: ""}); source.answered();
    }
    await tick();
  }
  process.stdout.write(JSON.stringify({asked: sent.filter(m => m.type === "want").map(m => m.key),
                                       cached: [...ex.cache.keys()].sort(), attrs: attrs,
                                       paused: source.paused}));
})();
"""


def _prefetch_with_a_failure(error: str, failing: str = "2") -> dict:
    from sdpa_helpers.widgets import FRONT_END

    done = subprocess.run([NODE, "-e", FAILURE_JS, str(FRONT_END), json.dumps([error, failing])],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_frame_the_kernel_failed_to_draw_is_tried_again_once_then_prefetch_goes_on():
    """The prefetch stall of benchmarks/results.md: one frame answered ``failed`` (not an interrupt)
    stopped prefetch for good. Now that frame is asked twice, then skipped, and every other frame of
    the grid still arrives; the grid is complete with the skipped frame counted."""
    got = _prefetch_with_a_failure("ValueError")
    assert got["asked"].count("2") == 2, got["asked"]
    assert {"1", "3", "4", "5"} <= set(got["cached"]) and "2" not in got["cached"], got
    assert not got["paused"]
    assert got["attrs"].get("data-grid-skipped") == "1" and "data-grid-complete" in got["attrs"], got["attrs"]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_an_interrupt_pauses_prefetch_until_the_next_move():
    """The learner's interrupt (KeyboardInterrupt in the kernel) stops prefetch: nothing is asked after
    it, and the grid is not reported complete."""
    got = _prefetch_with_a_failure("KeyboardInterrupt", failing="1")
    assert got["paused"], got
    assert got["asked"].count("1") == 1, got["asked"]  # the interrupted frame is not asked again
    assert "data-grid-complete" not in got["attrs"], got["attrs"]
