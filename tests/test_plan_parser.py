"""The plan parser reads plans as the reference does: every non-empty line is a step,
whatever shape a real model gives it; the word count is read wherever it appears; a plan
is never a reason to fail (docs/design.md §7)."""

from __future__ import annotations

import pytest

from lilo.tasks.methods.agentwrite import parse_plan

SHAPES = [
    # (line, main point, words)
    ("Paragraph 1 - Main Point: Intro to the field - Word Count: 400 words",
     "Intro to the field", 400),  # the reference's own example format
    ("**Paragraph 2 - Main Point:** Methods of paper 1 - **Word Count: 800 words**",
     "Methods of paper 1", 800),  # bold
    ("- Step 3: Compare results (600 words)", "Compare results", 600),  # bullet, parentheses
    ("4. Conclusion — 150 words", "Conclusion", 150),  # under 200 words: kept as asked
    ("Paragraph 5 - Main Point: Future work - Word Count: 1,200", "Future work", 1200),
    ("Introduction to the history of Gaussian processes",
     "Introduction to the history of Gaussian processes", None),  # no count at all
    ("## Paragraph 6: Data (~500 words)", "Data", 500),  # heading, tilde
    ("* Paragraph 7 - Main Point: Tables - Word count: about 300 words.", "Tables", 300),
    ("Paragraph 8 – Main Point: Limitations – Word Count: 250 words", "Limitations", 250),
    ("  Step 9) Synthesis; 700 words  ", "Synthesis", 700),
    ("Paragraph 10 - Main Point: Results of 2019 - Word Count: 350 words",
     "Results of 2019", 350),  # a year in the point is not the count
]  # fmt: skip


@pytest.mark.parametrize(("line", "point", "words"), SHAPES)
def test_each_shape_is_a_step(line, point, words):
    [step] = parse_plan(line)
    assert (step.line, step.main_point, step.words) == (line.strip(), point, words)


def test_every_non_empty_line_is_a_step_in_order():
    text = "\n\n".join(line for line, _, _ in SHAPES) + "\n   \n"
    steps = parse_plan(text)
    assert [s.number for s in steps] == list(range(1, len(SHAPES) + 1))
    assert [s.words for s in steps] == [w for _, _, w in SHAPES]


def test_an_empty_reply_is_no_steps_not_an_error():
    assert parse_plan("") == [] and parse_plan("\n \n") == []


@pytest.mark.parametrize("separator", ["\r", "\u2028", "\x85", "\x0c", "\x1e"])
def test_only_a_newline_ends_a_step_as_the_reference_splits(separator):
    """The reference splits the plan at the newline alone (`str.split`), not at every line
    break `str.splitlines` knows: any other stays inside its step."""
    text = f"Paragraph 1 - Intro{separator}more - 400 words\r\nParagraph 2 - End - 200 words"
    steps = parse_plan(text)
    assert [s.line for s in steps] == [
        f"Paragraph 1 - Intro{separator}more - 400 words",
        "Paragraph 2 - End - 200 words",
    ]
