"""The copy diagnostic S_copy (tasks/scoring/copy.py) on constructed summaries: all copied,
none, half; a registered leaderboard score that is a diagnostic, so a generation counts as
scored without it."""

from __future__ import annotations

import pytest

from lilo.tasks.config import Settings
from lilo.tasks.llm import make_judge_client
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import Generation, PaperText, Sample
from lilo.tasks.scoring import ScoreContext, get_scorer, leaderboard_scores
from lilo.tasks.scoring.copy import COPY_WORDS

PAPER = (
    "Transformers attend over every token of the context, so the cost of attention grows "
    "with the square of its length. Sparse patterns keep a few tokens in view at each step, "
    "and retrieval brings back the passages a question needs from a store outside the model."
)
# The second paper: 40 words of its own, none of the first's.
OWN = " ".join(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"] * 5)


def _score(tmp_path, text: str) -> tuple[float, dict]:
    settings = Settings(data_dir=tmp_path)
    paper = PaperText("p1", "Attention", PAPER, 46, 60, "main.tex", "v1", "s", "c1")
    other = PaperText("p2", "Other", OWN.upper(), 40, 50, "main.tex", "v1", "s", "c2")
    sample = Sample("s1", "d1", ("p1", "p2"), "attention", "survey", 86, "command")
    generation = Generation("g1", "s1", "single", {}, 100, "offline:m", text, 0)
    context = ScoreContext(
        generation, sample, [paper, other], [], make_judge_client(settings), lilo_pack(), settings
    )
    scored = get_scorer("copy")(context)
    assert scored.unscored == {} and [r.score for r in scored.rows] == ["copy"]
    row = scored.rows[0]
    assert row.judge is None  # computed: no LLM call
    return row.value, row.detail


def test_a_summary_copied_whole_is_100(tmp_path):
    value, detail = _score(tmp_path, PAPER.split(". ")[1])
    assert value == 100.0 and detail["words"] == detail["copied_words"] == 26


def test_a_summary_of_its_own_words_is_0(tmp_path):
    # The paper's words, never 8 of them in its order.
    own = " ".join(reversed(PAPER.split()))
    value, detail = _score(tmp_path, own)
    assert value == 0.0 and detail["copied_words"] == 0 and detail["words"] == 46


def test_a_summary_half_copied_is_50(tmp_path):
    copied = " ".join(PAPER.split()[:20])  # 20 words, numbers none
    own = " ".join((["novel", "claim", "here"] * 7)[:20])
    value, detail = _score(tmp_path, f"{copied}. {own}")
    assert detail["words"] == 40 and detail["copied_words"] == 20 and value == 50.0


def test_a_span_shorter_than_the_rule_is_not_copied_and_case_does_not_matter(tmp_path):
    short = " ".join(PAPER.split()[: COPY_WORDS - 1])
    assert _score(tmp_path, f"{short} zulu")[0] == 0.0
    # The second paper's words, upper-cased there: copied all the same.
    assert _score(tmp_path, OWN)[0] == 100.0


def test_an_empty_summary_copies_nothing(tmp_path):
    assert _score(tmp_path, "") == (0.0, {"words": 0, "copied_words": 0, "span_words": 8})


def test_the_copy_score_is_a_diagnostic_beside_the_quality_scores():
    headlines = {h.name: h for h in leaderboard_scores()}
    assert [h.label for h in leaderboard_scores()][:3] == ["S_l", "S_c", "S_q"]
    assert headlines["copy"].label == "S_copy" and headlines["copy"].diagnostic
    assert "not a quality score" in headlines["copy"].about
    assert not any(headlines[n].diagnostic for n in ("length", "consistency", "quality"))


@pytest.mark.parametrize("words", [0, 7])
def test_a_summary_shorter_than_a_span_has_nothing_copied(tmp_path, words):
    text = " ".join(PAPER.split()[:words])
    assert _score(tmp_path, text)[0] == 0.0
