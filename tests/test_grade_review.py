"""Is the judge right: the judge's QA grades as review items, a seeded sample of them, the
reviewed file's grades validated, agreement and weighted kappa per judge by hand."""

from __future__ import annotations

import pytest
from conftest import copy_data_dir
from pydantic import ValidationError

from lilo.tasks.config import Settings
from lilo.tasks.config_loading import flow_parameters
from lilo.tasks.qa.grade_review import GradeVerdict, agreement, grade_items, sample_grades

ROWS = [
    {
        "generation_id": "g1",
        "judge": "openai:judge-a",
        "dataset_version": "v1",
        "detail": '{"questions": [{"qa_id": "q1", "question": "Q1?", "answer": "A1", "score": 1},'
        ' {"qa_id": "q2", "question": "Q2?", "answer": "A2", "score": 0.5}]}',
    },
    {
        "generation_id": "g2",
        "judge": "openai:judge-a",
        "dataset_version": "v1",
        "detail": {"questions": [{"qa_id": "q1", "question": "Q1?", "answer": "B", "score": 0}]},
    },
]


def test_items_carry_question_gold_answer_and_the_judges_grade() -> None:
    items = grade_items(ROWS, {"q1": "gold one", "q2": "gold two"})
    assert [(i["generation_id"], i["qa_id"], i["judge_grade"]) for i in items] == [
        ("g1", "q1", 1.0),
        ("g1", "q2", 0.5),
        ("g2", "q1", 0.0),
    ]
    assert items[0]["gold_answer"] == "gold one" and items[0]["human_grade"] is None
    assert sample_grades(items, 2, seed=1) == sample_grades(items, 2, seed=1)
    assert len(sample_grades(items, 10)) == 3


def test_a_grade_off_the_tiers_is_refused() -> None:
    assert (
        GradeVerdict.model_validate_json(
            '{"generation_id": "g", "qa_id": "q", "human_grade": 0.75, "extra": 1}'
        ).human_grade
        == 0.75
    )
    with pytest.raises(ValidationError, match="one of 0, 0.25"):
        GradeVerdict.model_validate_json('{"generation_id": "g", "qa_id": "q", "human_grade": 0.6}')


def test_agreement_and_kappa_per_judge_by_hand() -> None:
    def rows(judge: str, pairs: list[tuple[float, float]]) -> list[dict[str, object]]:
        return [
            {"judge": judge, "dataset_version": "v1", "human_grade": h, "judge_grade": j}
            for h, j in pairs
        ]

    # Judge a: human (1, 1, 0, 0) vs judge (1, 1, 0, 0.25). Exact 3/4. On the five tiers
    # (weights |i-j|/4), observed disagreement (1/4)(1/4) = 1/16; marginals humans
    # (.5 at 0, .5 at 1), judge (.25 at 0, .25 at .25, .5 at 1): chance disagreement
    # .5*.25*(1/4) + .5*.5*1 + .5*.25*1 + .5*.25*(3/4) = .03125 + .25 + .125 + .09375 = .5;
    # kappa = 1 - (1/16)/.5 = .875.
    a = rows("a", [(1.0, 1.0), (1.0, 1.0), (0.0, 0.0), (0.0, 0.25)])
    b = rows("b", [(1.0, 1.0), (0.5, 0.5)])
    found = agreement(a + b)
    assert found == [
        {"judge": "a", "dataset_version": "v1", "n": 4, "exact_agreement": 0.75,
         "weighted_kappa": 0.875},
        {"judge": "b", "dataset_version": "v1", "n": 2, "exact_agreement": 1.0,
         "weighted_kappa": 1.0},
    ]  # fmt: skip


# -- the same review in the three tools: a JSONL file and the Prefect form, one table -------


@pytest.fixture(scope="module")
def judged(tmp_path_factory, report_demo):
    """A copy of the session's demo run (tests/conftest.py), whose summaries the judge
    graded: the reviews are written to it."""
    return copy_data_dir(report_demo, tmp_path_factory.mktemp("grades") / "data")


def _reviews(data) -> list[tuple]:
    import duckdb

    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(
            "SELECT generation_id, qa_id, reviewer, judge_grade, human_grade "
            "FROM fct_grade_reviews ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()


def test_grades_from_a_file_and_from_the_prefect_form_land_in_one_table(judged, tmp_path, capsys):
    """ana grades a file from `grades-export`; carla grades the same sample in the
    grade-review flow's form, resumed with run input as the UI sends it; both are in
    `fct_grade_reviews` and `agreement` counts them."""
    import json
    import threading
    import time

    from prefect import get_client
    from prefect.flow_runs import resume_flow_run

    from lilo.flows.cli import main
    from lilo.flows.grade_review import grade_review

    exported = tmp_path / "grades.jsonl"
    common = ["--data-dir", str(judged)]
    assert main(["review", "grades-export", str(exported), "--n", "4", *common]) == 0
    items = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(items) == 4
    for item in items:
        item["human_grade"] = item["judge_grade"]  # ana agrees with the judge everywhere
    exported.write_text("".join(json.dumps(i) + "\n" for i in items))
    assert main(["review", "grades-import", str(exported), "--reviewer", "ana", *common]) == 0
    assert "recorded 4 human grades by ana" in capsys.readouterr().out

    tuned = {"qa.review_poll_s": 1, "qa.review_batch": 50}  # as the CLI passes its settings
    overrides = flow_parameters(Settings(data_dir=judged).with_overrides(tuned))
    result: list[dict] = []
    runner = threading.Thread(target=lambda: result.append(grade_review(n=4, overrides=overrides)))
    runner.start()
    with get_client(sync_client=True) as client:
        paused = None
        for _ in range(240):
            paused = next((r for r in client.read_flow_runs() if r.state.is_paused()), None)
            if paused:
                break
            time.sleep(0.5)
        assert paused is not None, "the grade-review flow never paused for its form"
        key = paused.state.state_details.run_input_keyset
        description = json.loads(client.read_flow_run_input(paused.id, key["description"]))
        schema = json.loads(client.read_flow_run_input(paused.id, key["schema"]))
    entries = sorted(k for k in schema["properties"] if k.startswith("grade_"))
    assert schema["required"] == ["reviewer", *entries] and len(entries) == 4
    assert "Grade 4 answers" in description
    grade = schema["definitions"]["Grade01"]["properties"]["human_grade"]
    assert grade["enum"] == ["0", "0.25", "0.5", "0.75", "1"]
    for word in ("QUESTION:", "GOLD ANSWER:", "ANSWER GIVEN", "THE JUDGE'S GRADE:"):
        assert word in grade["description"]
    # The same sample as the file, in the same order: the ids sit in each entry's title.
    titles = [schema["properties"][k]["title"] for k in entries]
    assert [t.rsplit("QA ", 1)[1] for t in titles] == [i["qa_id"] for i in items]
    # carla: the tier next to the judge's on the first two, the judge's on the others.
    tiers = ["0", "0.25", "0.5", "0.75", "1"]

    def other(g: float) -> str:
        i = tiers.index(f"{g:g}")
        return tiers[i + 1] if i < 4 else tiers[3]

    grades = [other(i["judge_grade"]) for i in items[:2]] + [
        f"{i['judge_grade']:g}" for i in items[2:]
    ]
    answer = {"reviewer": "carla"} | {
        k: {"human_grade": g} for k, g in zip(entries, grades, strict=True)
    }
    resume_flow_run(paused.id, run_input=answer)
    runner.join(timeout=120)
    assert result and result[0]["grades"] == 4 and result[0]["problems"] == []
    rows = _reviews(judged)
    by = {(g, q, r): h for g, q, r, _, h in rows}
    assert len(rows) == 8
    for item, g in zip(items, grades, strict=True):
        assert by[(item["generation_id"], item["qa_id"], "ana")] == item["judge_grade"]
        assert by[(item["generation_id"], item["qa_id"], "carla")] == float(g)
    assert main(["review", "agreement", *common]) == 0
    (line,) = capsys.readouterr().out.splitlines()[1:]
    assert line.split("\t")[2:4] == ["8", f"{6 / 8:.4f}"]  # 6 of 8 grades agree
