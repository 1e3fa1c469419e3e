"""The teacher's guide (authoring/teaching.py → TEACHING.md) holds every exercise and Predict with its answer."""

import re
import sys
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "authoring"))
import teaching as T  # noqa: E402
from sdpa_helpers.exercises import get, keys  # noqa: E402


@pytest.fixture(scope="module")
def guide() -> str:
    return T.guide()


@pytest.fixture(scope="module")
def course_no_minutes() -> list:
    """``T.course(minutes=False)``, read once per module (it parses every source: 19-24 s at load 15)."""
    return T.course(minutes=False)


def test_the_committed_guide_is_what_the_course_gives(guide):
    assert (ROOT / "TEACHING.md").read_text(encoding="utf-8") == guide, \
        "TEACHING.md is out of date: run .venv/bin/python authoring/teaching.py"


def _exercise_keys_in_notebooks() -> set[str]:
    found = set()
    for source in sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py")):
        found |= set(T._CHECK.findall(source.read_text(encoding="utf-8")))
    return found


def test_every_exercise_of_the_notebooks_is_in_the_guide_with_its_answer(guide):
    in_notebooks = _exercise_keys_in_notebooks()
    assert in_notebooks, "no check() calls found in the sources"
    assert in_notebooks <= set(keys())
    for key in sorted(in_notebooks):
        entry = re.search(rf"`{re.escape(key)}`:.*?\n  - \*Answer:\* (.+)\n", guide)
        assert entry, f"{key} is missing from the guide"
        assert entry.group(1) == T.answer_of(key)


def test_the_answer_in_the_guide_is_the_one_check_accepts():
    """The guide's answer, read back as a learner would type it, passes the bank's own check()."""
    import ast

    for key in sorted(_exercise_keys_in_notebooks()):
        text = T.answer_of(key)
        if text.startswith("a function"):
            continue
        first = text.split(" or ")[0]
        value = ast.literal_eval(first)
        ok, feedback = get(key).checker(value)
        assert ok, f"{key}: the guide's answer {text!r} is judged wrong: {feedback}"


def test_every_named_slip_is_in_the_guide_with_its_meaning(guide):
    for key in sorted(_exercise_keys_in_notebooks()):
        for wrong, means in T.slips_of(key):
            assert f"*Slip* {wrong}: {T._one_line(means)}" in guide, (key, wrong)


def test_every_predict_is_in_the_guide_with_its_answer(guide):
    count = 0
    for source in sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py")):
        for cell in jupytext.read(source, fmt="py:percent").cells:
            if "predict_answer" in cell.metadata:
                count += 1
                answer = cell.metadata["predict_answer"][0]
                assert re.search(rf"\n   - \*Answer:\* (.*\(the notebook's recorded answer: )?{re.escape(answer)}\)?\n",
                                 guide), (source.name, answer)
    assert count >= 10
    key = guide.split("\n## 00 — ", 1)[1]  # the per-notebook key, after the class pack and the plans
    assert key.count("\n   - *What happened:*") == count


def _whole_answer(cells, i) -> str:
    """Independently of the generator: the markdown after the code cell that runs the Predict in cells[i],
    up to the next heading or code cell, from its "What happened" when it has one; no whitespace."""
    j = next(k for k in range(i + 1, len(cells)) if cells[k].cell_type == "code")
    text = ""
    for c in cells[j + 1:]:
        if c.cell_type != "markdown" or "deep-dive" in c.metadata.get("tags", []):
            break
        lines = c.source.splitlines()
        stop = next((k for k, line in enumerate(lines) if line.startswith("#")), len(lines))
        text += "\n".join(lines[:stop])
        if stop < len(lines):
            break
    if "**What happened:**" in text:
        text = text.split("**What happened:**", 1)[1]
    return re.sub(r"\s+", "", text)


def _guide_reveals(text: str) -> list[str]:
    """Each "*What happened:*" entry of ``text`` with its continuation lines, no whitespace."""
    out, current = [], None
    for line in text.splitlines():
        if line.startswith("   - *What happened:* "):
            current = [line.removeprefix("   - *What happened:* ")]
            out.append(current)
        elif current is not None and (line.startswith("     ") or not line.strip()):
            current.append(line)
        else:
            current = None
    return [re.sub(r"\s+", "", "".join(x)) for x in out]


def test_every_what_happened_is_the_notebooks_whole_answer_and_no_caption(guide):
    """Issue 41's teacher: 06's answer was cut after its first bullet and a figure legend leaked in. Each
    "what happened" is now the notebook's text from the run to the next heading or code cell, whole."""
    key = guide.split("\n## 00 — ", 1)[1]
    sections = re.split(r"\n## (?=\d\d — )", "\n## 00 — " + key)[1:]
    for source in sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py")):
        cells = jupytext.read(source, fmt="py:percent").cells
        expected = [_whole_answer(cells, i) for i, c in enumerate(cells) if "predict_answer" in c.metadata]
        section = next(s for s in sections if s.startswith(source.stem[:2]))
        got = _guide_reveals(section)
        assert got == expected, source.name
        alts = [re.sub(r"\s+", "", c.metadata["alt"]) for c in cells if c.cell_type == "code" and c.metadata.get("alt")]
        for text in got:
            assert text and not any(a[:60] in text for a in alts), source.name
    assert "Filledmarkers" not in "".join(_guide_reveals(guide))
    assert "-The**mean**rises" in "".join(_guide_reveals(guide))  # 06's second bullet, the one the answer rests on


def test_offered_options_are_words_of_their_prompt(course_no_minutes, guide):
    """Where a Predict's recorded answer is worded otherwise than the options offered, the key leads with
    the offered option, and that option is one the prompt offers."""
    by = {n.stem[:2]: n for n in course_no_minutes}
    for (number, k), option in T.OFFERED.items():
        p = by[number].predicts[k - 1]
        assert option in p.prompt, (number, k, option)
        assert f"   - *Answer:* {option} (the notebook's recorded answer: {p.answers[0]})" in guide


def _pack(guide: str) -> str:
    return guide.split("## The 50-minute class pack\n", 1)[1].split("\n## ", 1)[0]


def test_the_class_pack_comes_first_and_holds_what_a_teacher_needs(guide, course_no_minutes):
    assert guide.index("## The 50-minute class pack") < guide.index("## How to run it") < guide.index("\n## 00 — ")
    pack = _pack(guide)
    for heading in ("### A 50-minute class", "### The Predicts, in the order asked", "### Misconceptions to watch",
                    "### Homework", "### Logistics"):
        assert heading in pack
    assert "https://<owner>.github.io/<name>/" in pack and "https://mybinder.org/v2/gh/<owner>/<name>/HEAD" in pack
    assert T.publishing_addresses() in pack
    # Sentence 2's caveats: 00 §4's stored table (its 56 % and 67 %) and the pointer to the gradient's twist, quoted
    table = T.section_example("00_start_here", 4)[1]
    assert all(line in pack for line in table.splitlines())
    assert T.paragraph("00_start_here", "So the typical unscaled query passes less gradient to its logits") in pack
    # Every main-line slip of the class's notebooks, and the overflow misconception the course answers in 05 §1
    by = {n.stem[:2]: n for n in course_no_minutes}
    for number in T.CLASS_NOTEBOOKS:
        for e in by[number].exercises:
            if e.key and not e.deep_dive:
                for wrong, means in T.slips_of(e.key):
                    assert f"`{e.key}` answers {wrong}: {T._one_line(means)}" in pack
    assert "stop overflow" in pack and "05 §1" in pack
    assert re.search(r"Together about \d+ minutes", pack)
    assert len(pack.split()) < 4000, len(pack.split())  # about 15-20 minutes to read


def test_the_50_minute_plan_asks_no_predict_the_pre_reading_answers(course_no_minutes):
    """Issue 41's teacher: 00 was set as pre-reading whole, then its Predict asked in class."""
    by = {n.stem[:2]: n for n in course_no_minutes}
    steps = T.PLANS["A 50-minute class"]
    read_before = {number: sections for when, refs, *_ in steps if when == "before class" for number, sections in refs}
    for when, refs, *_ in steps:
        if when == "before class":
            continue
        for number, sections in refs:
            for p in by[number].predicts:
                if p.section in sections and number in read_before:
                    pre = read_before[number]
                    assert pre and p.section not in pre and max(pre) < p.section, (when, number, p.section)


def test_worksheets_carry_no_answers(tmp_path):
    written = T.site_pages(tmp_path)
    notebooks = {n.stem: n for n in T.course()}
    assert len(written) == len(notebooks)
    for path in written:
        text = path.read_text(encoding="utf-8")
        n = notebooks[path.stem]
        assert "Solution" not in text and "<details" not in text
        for e in n.exercises:
            if not e.deep_dive:
                assert e.solution[:40] not in text or not e.solution
        assert text.count('class=space') == len(n.predicts) + sum(not e.deep_dive for e in n.exercises)


def test_every_exercise_heading_of_the_notebooks_is_in_the_guide(guide, course_no_minutes):
    """Essays without a self-check (01's Exercise 4) are in the key too, with their solution."""
    for n in course_no_minutes:
        for e in n.exercises:
            assert e.solution or e.key, (n.stem, e.number)
        headings = [int(m.group(1)) for c in T.cells_of(T._home(n.stem)) if c.cell_type == "markdown"
                    for m in T._EXERCISE.finditer(c.source)]
        assert headings == [e.number for e in n.exercises if e.number], n.stem
    assert "(no self-check: an essay)" in guide


def test_lesson_plans_name_sections_that_exist(course_no_minutes):
    stems = {n.stem[:2]: n.stem for n in course_no_minutes}
    for steps in T.PLANS.values():
        for _, refs, *_ in steps:
            T._where(refs, stems)  # raises on a section that is gone


def test_the_site_reads_the_same_predicts_and_exercises_from_the_built_notebooks():
    """The site's environment has no jupytext: it reads the built notebooks, and must find what the sources hold."""
    for source in sorted((ROOT / "authoring" / "notebooks").glob("[0-9][0-9]_*.py")):
        built = ROOT / "notebooks" / f"{source.stem}.ipynb"
        a, b = T.read(source, {}, False), T.read(built, {}, False)
        assert [p.prompt for p in a.predicts] == [p.prompt for p in b.predicts], source.name
        assert [(e.key, e.text) for e in a.exercises] == [(e.key, e.text) for e in b.exercises], source.name


def test_the_talk_gives_the_answer_word_for_word_offline():
    """The talk's answer slides are authoring/answer.md's three sentences; nothing it loads leaves the site."""
    sentences, stops = T.answer_parts()
    assert len(sentences) == 3 and stops
    talk = T.talk_html(explorer="<figure class=explorer></figure>", figure_alt="alt")
    for s in sentences:
        body = re.sub(r"^\*\*[^*]+\*\*\s*", "", s)
        assert T._inline(body) in talk
    assert talk.count("<aside class=notes>") >= len(sentences) + 3
    for url in re.findall(r'(?:src|href)="([^"]+)"', talk):
        assert not re.match(r"^[a-z]+:", url) and not url.startswith("//"), url
    assert "<figure class=explorer>" in talk


def test_no_course_page_links_to_the_key(tmp_path):
    """Only the contents page names the teacher's key; a notebook's page never links to it."""
    template = (ROOT / "authoring" / "site" / "templates" / "page.html.j2").read_text(encoding="utf-8")
    page_part = template.split("{% if page is defined %}", 1)[1].split("{% else %}", 1)[0]
    assert "teachers.html" not in page_part
    assert "teachers.html" in template.split("{% else %}")[-1]


def _plan(guide: str, name: str) -> str:
    return guide.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]


def test_the_50_minute_plan_shows_what_it_uses_inline_taken_from_the_notebooks(guide):
    """A teacher's asks: Karpathy's logits (05 §2: code and stored output) and 04's table inline where the
    plan uses them, and a one-line definition of J; none of it retyped."""
    import json

    plan = _plan(guide, "A 50-minute class")
    built = json.loads((ROOT / "notebooks" / "05_softmax_saturation.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in built["cells"] if c["cell_type"] == "code" and "z5 = np.array" in "".join(c["source"]))
    printed = "".join("".join(o["text"]) for o in cell["outputs"] if o.get("output_type") == "stream").rstrip()
    indented = lambda text: "\n".join("  " + line if line.strip() else "" for line in text.splitlines())  # noqa: E731
    assert indented("".join(cell["source"]).rstrip()) in plan
    assert indented(printed) in plan
    source = (ROOT / "authoring" / "notebooks" / "04_why_sqrt_dk.py").read_text(encoding="utf-8")
    table = [line[2:] for line in source.splitlines() if line.startswith("# |")]
    assert table and indented("\n".join(table[:5])) in plan
    definition = next(line for line in plan.splitlines() if line.strip().startswith("*J*"))
    assert r"J = \mathrm{diag}(p) - p\,p^\top" in definition and r"\partial p_i/\partial z_j" in definition


def test_conceptual_exercises_point_to_the_rubric(guide):
    assert '## Grading the "explain why" exercises' in guide
    conceptual = guide.count("(conceptual)")
    assert conceptual and guide.count("with the rubric (claim, condition, reason) above.") >= conceptual
