"""AUTHORING.md states every rule the structure tests enforce, and every path it names exists (issue 40 §2).

Each test of tests/test_notebook_structure.py (and the other tests that check what an author writes) is
listed in :data:`RULES` with a phrase of AUTHORING.md that states its rule: a new structure test without
an entry here fails, and so does an entry whose phrase AUTHORING.md no longer holds.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AUTHORING = ROOT / "AUTHORING.md"

#: test file -> {test function: the phrase of AUTHORING.md that states its rule}.
RULES = {
    "test_notebook_structure.py": {
        "test_every_source_has_a_notebook_and_back": "Every source has a built notebook and every notebook a source",
        "test_notebook_matches_its_source": "cells differ from its source",
        "test_skeleton": "**Learning goals** (3–4 bullets)",
    "test_predict_answers_are_not_given_away_before_the_notebook":
        "No form of a Predict's answer appears in the README, in an earlier notebook",
    "test_readme_shows_no_figure_a_notebook_draws": "The README shows no figure a notebook draws",
    "test_start_here_says_what_is_proved_and_what_is_measured": "says what 01–09 prove and what they measure",
    "test_the_answer_home_is_three_sentences_within_budget": "at most 120 words of prose, without ‖J‖",
    "test_the_answer_is_word_for_word_its_home": "the list stands in 09's closing only",
        "test_links_to_the_next_notebook": "the last notebook\n   links back to the start",
        "test_executed_in_order_without_errors": "no stored\nerror and nothing on stderr, figures as PNG",
        "test_no_forbidden_code": "No `sys.path`, no `!pip`, no `import *`",
        "test_images_are_local_with_alt_text": "Images live in `notebooks/figures/` with alt text",
        "test_outputs_hold_no_local_paths_and_size": "no local paths in outputs",
        "test_ignore_output_tag_only_where_honest":
            "only widget cells and the versions cell\ncarry `nbval-ignore-output`",
        "test_every_explorer_has_a_static_twin_before_it": "Before every explorer, the same view as a static figure",
        "test_stored_explorers_show_a_picture_and_what_to_do": "▶ Run this cell to start the explorer",
        "test_deep_dives_are_tagged_and_folded": "Tag EVERY cell of it `deep-dive`",
        "test_main_line_budget": "300–1,200 words",
        "test_course_honest_minutes": "≤ 300 honest minutes",
        "test_reading_time_budget": "00: chain ≤ 10 minutes, whole ≤ 15",
        "test_start_heres_chain_ends_after_the_numbers_at_real_head_sizes":
            "(`comparison_table`) and the chain's figure",
        "test_readme_reading_load_table_is_current": "`build.py --readme`",
        "test_course_main_line_words": "the whole course ≤ 10,000 words",
        "test_a_conceptual_exercise": "`(conceptual)` in\n   its opening line",
        "test_start_here_maps_every_notebook": "linked from notebook 00's map",
        "test_readme_maps_every_notebook": "listed in the\n   README's notebook table",
        "test_stored_outputs_print_no_rounding_noise": "whose digits are rounding noise",
        "test_every_deep_dive_folds_something": "at least one cell under its heading",
        "test_every_cell_that_draws_stores_its_picture": "stores its picture: it ends with the figure",
        "test_predict_prompts_are_not_answered_before_the_run": "A Predict prompt is never answered before the learner",
    },
    "test_stale_outputs.py": {
        "test_stored_outputs_were_made_by_todays_code": "the digest of the package code and data it ran against",
    },
    "test_new_notebook.py": {
        "test_no_scaffold_placeholder_is_left": "fails while one is left",
    },
    "test_d_k_grid_consequences.py": {
        "test_prose_ranges_of_d_k_match_the_grid": "states the ends\nof `scales.D_K_CHOICES`",
    },
}
#: Tests of the checks themselves (their rule is the one above), or of the scaffold's own machinery.
NOT_RULES = {
    "test_reading_time_model_counts_what_a_learner_reads", "test_math_load_counts_symbols_and_displayed_equations",
    "test_noise_patterns_catch_what_they_must", "test_drawing_rule_catches_a_figure_followed_by_a_print",
    "test_predict_rule_catches_a_giveaway", "test_answers_elsewhere_catches_a_giveaway",
    "test_read_as_plain_undoes_prefixes_and_wrapping",
}


def _text() -> str:
    return AUTHORING.read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("test_file", sorted(RULES))
def test_every_structure_test_has_its_rule_in_authoring(test_file):
    tree = ast.parse((ROOT / "tests" / test_file).read_text(encoding="utf-8"))
    tests = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
    listed = set(RULES[test_file])
    if test_file == "test_notebook_structure.py":
        unlisted = sorted(tests - listed - NOT_RULES)
        assert not unlisted, (f"tests/{test_file} enforces rules AUTHORING.md may not state: {unlisted}; state each "
                              f"rule in AUTHORING.md and list its phrase in RULES here")
    assert not listed - tests, f"RULES lists tests tests/{test_file} no longer has: {sorted(listed - tests)}"
    text = _flat(_text())
    missing = {name: phrase for name, phrase in RULES[test_file].items() if _flat(phrase) not in text}
    assert not missing, f"AUTHORING.md no longer states the rule of: {missing}"


#: A path AUTHORING.md names: in backticks or a link, with a "/" or a file suffix, no spaces.
PATH = re.compile(r"`([\w.<>/*-]+/[\w.<>/*-]*|[\w<>*-]+\.(?:py|md|ipynb|txt|png))`|\]\(([^)#\s]+)\)")


def _as_glob(name: str) -> str:
    """``exercises/<topic>.py`` -> ``exercises/*.py``; ``NN_topic.py`` -> ``[0-9][0-9]_*.py``."""
    name = re.sub(r"<[^>]+>", "*", name)
    name = re.sub(r"\bNN_topic\b|\bNN_\*", "[0-9][0-9]_*", name)
    return name.replace("NN", "[0-9][0-9]").replace("**", "*")


#: Where a bare file name of AUTHORING.md lives.
PLACES = ("", "authoring", "authoring/notebooks", "notebooks", "notebooks/figures", "sdpa_helpers",
          "sdpa_helpers/plots", "sdpa_helpers/widgets", "sdpa_helpers/exercises", "tests", "docs")


def named_paths(text: str) -> list[str]:
    return sorted({a or b for a, b in PATH.findall(text)} - {""})


def missing_paths(text: str, root: Path = ROOT) -> list[str]:
    missing = []
    for name in named_paths(text):
        if re.match(r"^[a-z]+://", name) or name.startswith(("#", "-", "<")):  # a URL, an anchor, HTML
            continue
        pattern = _as_glob(name.rstrip("/"))
        places = ["", "sdpa_helpers"] if "/" in pattern else PLACES  # `plots/<topic>.py`: in the package
        if not any(list((root / place).glob(pattern)) for place in places):
            missing.append(name)
    return missing


def test_every_path_authoring_names_exists():
    missing = missing_paths(_text())
    assert not missing, f"AUTHORING.md names paths that do not exist: {missing}"


def test_the_path_check_catches_the_old_exercise_bank_name():
    old = "sdpa_helpers/exercises/exNN_<topic>.py"
    assert missing_paths(f"Exercises: `{old}`") == [old]
    assert missing_paths("`sdpa_helpers/exercises/<topic>.py`, `authoring/notebooks/NN_topic.py`, `build.py`") == []


#: A count of the notebooks written in words or digits: derived instead ("the notebooks"; the site's
#: template counts its list).
COUNTED = re.compile(r"\b(?:ten|eleven|twelve|nine|\d+)\s+(?:notebooks|pages)\b", re.I)


def test_no_doc_counts_the_notebooks_by_hand():
    places = [*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "authoring" / "site" / "templates").glob("*")]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in places
             for m in COUNTED.finditer(p.read_text(encoding="utf-8"))]
    assert not found, f"a count of the notebooks written by hand (derive it): {found}"
