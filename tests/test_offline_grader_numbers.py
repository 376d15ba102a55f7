"""The offline QA judge on known answers: a prediction missing a number of the gold answer
scores 0; numbers are compared normalised (docs/design.md §9)."""

from __future__ import annotations

import json

import pytest

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline import reply
from lilo.tasks.llm.offline.evaluate import number_values


def _grade(gold: str, predict: str) -> float:
    prompt = f"Grade.\n<question>Q?</question>\n<gold>{gold}</gold>\n<predict>{predict}</predict>"
    text = reply([{"role": "user", "content": prompt}], OfflineSettings()).text
    return json.loads(text)["score"]


GOLD = "KernelForge obtains a test RMSE of 0.635 on Kin40k."

RIGHT = [
    (GOLD, "KernelForge obtains a test RMSE of 0.635 on Kin40k."),
    (GOLD, "On Kin40k, KernelForge obtains a test RMSE of 0.6350."),
    (GOLD, "KernelForge obtains a test RMSE of 0.635 on Kin40k, a strong result overall."),
    ("The accuracy is 0.5 on the test split.", "The accuracy is .50 on the test split."),
    ("Accuracy rises by 12% on the test split.", "Accuracy rises by 12 % on the test split."),
    ("Training takes 3.5 GPU hours.", "Training takes 3.50 GPU hours."),
    ("The corpus holds 1,200 documents.", "The corpus holds 1200 documents."),
    ("The clock runs at 3 GHz.", "The clock runs at 3.0 GHz."),
    ("The loss drops by -3 dB.", "The loss drops by -3 dB overall."),
    ("Two runs: 4 and 7.", "Two runs: 7 and 4."),
    ("The method is KernelForge.", "The method is KernelForge."),
]

WRONG = [
    (GOLD, "KernelForge obtains a test RMSE of 0.653 on Kin40k."),
    (GOLD, "KernelForge obtains a test RMSE of 0.64 on Kin40k."),
    (GOLD, "KernelForge obtains a test RMSE of 6.35 on Kin40k."),
    (GOLD, "KernelForge obtains a test RMSE on Kin40k."),
    (GOLD, "KernelForge obtains a good test RMSE on Kin40k, lower than the baselines."),
    ("The accuracy is 0.5 on the test split.", "The accuracy is 0.05 on the test split."),
    ("The accuracy is 0.5 on the test split.", "The accuracy is 5 on the test split."),
    ("Accuracy rises by 12% on the test split.", "Accuracy rises by 12 on the test split."),
    ("Accuracy rises by 12% on the test split.", "Accuracy rises by 21% on the test split."),
    ("Training takes 3.5 GPU hours.", "Training takes 35 GPU hours."),
    ("The corpus holds 1,200 documents.", "The corpus holds 1,300 documents."),
    ("The loss drops by -3 dB.", "The loss drops by 3 dB."),
    ("Two runs: 4 and 7.", "Two runs: 4 and 8."),
    ("Two runs: 4 and 7.", "One run: 4."),
]


@pytest.mark.parametrize(("gold", "predict"), RIGHT)
def test_right_numbers_keep_credit(gold: str, predict: str) -> None:
    assert _grade(gold, predict) > 0


@pytest.mark.parametrize(("gold", "predict"), WRONG)
def test_a_wrong_or_missing_number_scores_zero(gold: str, predict: str) -> None:
    assert _grade(gold, predict) == 0.0


def test_the_wrong_number_once_graded_half_now_scores_zero() -> None:
    gold = "KernelForge obtains a test RMSE of 0.635 on Kin40k."
    assert _grade(gold, "KernelForge obtains a test RMSE of 0.9 on Kin40k.") == 0.0


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("0.5", {"0.5"}),
        (".50", {"0.5"}),
        ("12%", {"12%"}),
        ("12 %", {"12%"}),
        ("1,200 items", {"1200"}),
        ("3.0 GHz", {"3"}),
        ("ends at 7.", {"7"}),
        ("-3 dB", {"-3"}),
        ("version v1.2", set()),
        ("no numbers here", set()),
    ],
)
def test_numbers_are_normalised(text: str, values: set[str]) -> None:
    assert number_values(text) == values
