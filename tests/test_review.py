"""Human review, three ways, one record: the Prefect UI form (a paused flow resumed with
run input, as the UI does), the `lilo review` CLI and JSONL files; manual mode end to end."""

from __future__ import annotations

import json
import shutil
import threading
import time
from datetime import datetime

import duckdb
import pytest

from flows.cli import main
from tasks.qa import Verdict, apply_verdicts, decide
from tasks.records import QAPair

DEMO = ["--review", "manual", "--methods", "single", "--target-words", "4000"]


def _pair(status: str = "pending") -> QAPair:
    return QAPair(
        "q1", "s1", "single", ("p1",), "What RMSE?", "0.635", (), status, 1, "", "", "v", "b"
    )


def _sql(data_dir, query: str) -> list[tuple]:
    con = duckdb.connect(str(data_dir / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


# -- decisions, pure ---------------------------------------------------------------------


def test_an_edit_keeps_the_original_and_approves_the_new_text():
    at = datetime(2026, 1, 2, 3, 4, 5)
    pair, record = decide(_pair(), "approve", "ana", "cli", at, answer="An RMSE of 0.635.")
    assert (pair.status, pair.reviewer, pair.answer) == ("approved", "ana", "An RMSE of 0.635.")
    assert (record.action, record.decided_at, record.channel) == ("edit", at, "cli")
    assert (record.original_answer, record.answer) == ("0.635", "An RMSE of 0.635.")


def test_bad_verdicts_are_problems_not_crashes():
    pairs = {"q1": _pair(), "q2": QAPair(**{**_pair("filtered").__dict__, "qa_id": "q2"})}
    verdicts = [
        Verdict(qa_id="q1", decision="reject"),  # no reason
        Verdict(qa_id="q2", decision="approve"),  # never reached review
        Verdict(qa_id="nope", decision="approve"),
        Verdict(qa_id="q1", decision="edit"),  # changes nothing
        Verdict(qa_id="q1"),  # pending: skipped
    ]
    changed, decisions, problems = apply_verdicts(verdicts, pairs, "ana", "ui", datetime.now())
    assert changed == [] and decisions == []
    assert [p.split(":")[0] for p in problems] == ["q1", "q2", "nope", "q1"]
    assert "needs a reason" in problems[0] and "filtered" in problems[1]


def test_the_ui_form_has_one_required_entry_per_pair():
    from pydantic import ValidationError

    from flows.review import review_form

    form = review_form([_pair(), QAPair(**{**_pair().__dict__, "qa_id": "q2"})], {})
    with pytest.raises(ValidationError):  # an entry missing
        form(reviewer="ana", pair_01={"decision": "approve"})
    with pytest.raises(ValidationError):  # a decision missing
        form(reviewer="ana", pair_01={}, pair_02={"decision": "approve"})
    with pytest.raises(ValidationError):  # an invented entry
        form(reviewer="ana", **{f"pair_0{i}": {"decision": "approve"} for i in (1, 2, 3)})
    answer = form(
        reviewer="ana",
        pair_01={"decision": "approve"},
        pair_02={"decision": "edit", "answer": "An RMSE of 0.635."},
    )
    assert [(v.qa_id, v.decision, v.answer) for v in answer.verdicts()] == [
        ("q1", "approve", "0.635"),
        ("q2", "edit", "An RMSE of 0.635."),
    ]


# -- manual mode end to end --------------------------------------------------------------


@pytest.fixture(scope="module")
def manual_run(tmp_path_factory, prefect_harness):
    """`lilo demo --review manual` once; tests work on copies of its data folder."""
    data = tmp_path_factory.mktemp("manual") / "data"
    assert main(["demo", *DEMO, "--data-dir", str(data)]) == 0
    return data


@pytest.fixture
def data(manual_run, tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(manual_run, copy, ignore=shutil.ignore_patterns("published"))
    return copy


def test_manual_run_leaves_samples_waiting_and_writes_no_summaries(manual_run):
    statuses = dict(_sql(manual_run, "SELECT status, count(*) FROM fct_qa_pairs GROUP BY 1"))
    assert statuses["pending"] > 0 and "approved" not in statuses
    assert _sql(manual_run, "SELECT count(*) FROM fct_generations") == [(0,)]
    assert _sql(manual_run, "SELECT count(*) FROM fct_qa_decisions") == [(0,)]
    assert _sql(manual_run, "SELECT count(*) FROM quarantine WHERE stage = 'qa'") == [(0,)]


def test_run_ends_with_what_waits_and_the_command(data, capsys):
    assert main(["demo", *DEMO, "--data-dir", str(data)]) == 0  # nothing approved: no change
    out = capsys.readouterr().out
    (pending,) = _sql(data, "SELECT count(*) FROM fct_qa_pairs WHERE status = 'pending'")[0]
    assert f"{pending} QA pairs wait for review; review them with: lilo review --data-dir" in out
    assert _sql(data, "SELECT count(*) FROM fct_generations") == [(0,)]


def test_approving_one_sample_makes_the_next_run_summarize_exactly_it(data, capsys):
    samples = [r[0] for r in _sql(data, "SELECT sample_id FROM dim_samples ORDER BY 1")]
    chosen = samples[1]
    args = ["--sample", chosen, "--data-dir", str(data), "--reviewer", "ana"]
    assert main(["review", "approve", *args]) == 0
    decided = _sql(
        data, "SELECT DISTINCT sample_id, reviewer, channel, action FROM fct_qa_decisions"
    )
    assert decided == [(chosen, "ana", "cli", "approve")]
    assert main(["demo", *DEMO, "--data-dir", str(data)]) == 0
    assert _sql(data, "SELECT DISTINCT sample_id FROM fct_generations") == [(chosen,)]
    capsys.readouterr()
    assert main(["review", "report", "--data-dir", str(data)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["samples_ready"] == 1 and report["reviewers"] == {"ana": report["decisions"]}
    coverage = report["coverage"]
    assert (coverage["facts"], coverage["facts_in_sampled_papers"]) == (96, 72)
    assert 0 < coverage["covered"] <= 24  # one sample's three papers, eight facts each


def test_export_edit_import_jsonl(data, tmp_path, capsys):
    out = tmp_path / "pairs.jsonl"
    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    common = ["--data-dir", str(data), "--sample", sample]
    assert main(["review", "export", str(out), *common]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    lines[0]["decision"] = "approve"
    lines[1].update(decision="reject", reason="ambiguous: two RMSE figures fit")
    lines[2].update(decision="approve", answer="Edited: " + lines[2]["answer"], reviewer="bo")
    lines[3].update(decision="reject")  # no reason: not recorded
    text = "\n".join(json.dumps(line) for line in lines) + '\n{"qa_id": 1, "oops": true}\n'
    out.write_text(text)
    assert main(["review", "import", str(out), *common, "--reviewer", "ana"]) == 1
    err = capsys.readouterr().err
    assert "needs a reason" in err and f"{out}:{len(lines) + 1}" in err
    rows = _sql(
        data,
        "SELECT qa_id, action, reviewer, channel, original_answer, answer FROM fct_qa_decisions",
    )
    by_id = {r[0]: r[1:] for r in rows}
    assert by_id[lines[0]["qa_id"]][:3] == ("approve", "ana", "file")
    assert by_id[lines[1]["qa_id"]][0] == "reject"
    edit = by_id[lines[2]["qa_id"]]
    assert edit[:2] == ("edit", "bo") and edit[4] == "Edited: " + edit[3]
    assert lines[3]["qa_id"] not in by_id
    assert _sql(data, "SELECT reason FROM quarantine WHERE stage = 'review'") == [
        ("review_input_rejected",)
    ]
    # Importing the same file again adds no decision.
    assert main(["review", "import", str(out), *common, "--reviewer", "ana"]) == 1
    assert len(_sql(data, "SELECT * FROM fct_qa_decisions")) == len(rows)


def test_review_flow_form_resumed_like_the_ui(data):
    from prefect import get_client
    from prefect.flow_runs import resume_flow_run

    from flows.review import qa_review

    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    overrides = {"data_dir": str(data), "qa.review_poll_s": 1, "qa.review_batch": 50}
    result: list[dict] = []
    runner = threading.Thread(
        target=lambda: result.append(qa_review(sample=sample, overrides=overrides))
    )
    runner.start()
    with get_client(sync_client=True) as client:
        paused = None
        for _ in range(120):
            paused = next((r for r in client.read_flow_runs() if r.state.is_paused()), None)
            if paused:
                break
            time.sleep(0.5)
        assert paused is not None, "the review flow never paused for its form"
        key = paused.state.state_details.run_input_keyset
        description = json.loads(client.read_flow_run_input(paused.id, key["description"]))
        schema = json.loads(client.read_flow_run_input(paused.id, key["schema"]))
    # One required entry per pair, each its own field (no list: nothing to add, remove or
    # reorder, no id to edit); the context sits in the decision's description.
    pairs = [k for k in schema["properties"] if k.startswith("pair_")]
    assert schema["required"] == ["reviewer", *pairs] and "Review" in description
    entries = [
        schema["definitions"][f"Pair{i:02d}"]["properties"] for i in range(1, len(pairs) + 1)
    ]
    assert all(set(e) == {"decision", "question", "answer", "reason"} for e in entries)
    assert all(e["decision"]["enum"] == ["approve", "reject", "edit"] for e in entries)
    assert "default" not in entries[0]["decision"]
    assert entries[0]["question"]["default"] in entries[0]["decision"]["description"]
    assert "EVIDENCE 1 from" in entries[0]["decision"]["description"]
    assert "QA " in schema["properties"]["pair_01"]["title"]
    # As the UI sends it: every entry whole, its text as prefilled unless edited.
    answer: dict = {"reviewer": "carla"} | {
        k: {"decision": "approve"} | {f: e[f]["default"] for f in ("question", "answer", "reason")}
        for k, e in zip(pairs, entries, strict=True)
    }
    answer["pair_02"].update(decision="reject", reason="trivial")
    edited = "Edited? " + entries[2]["question"]["default"]
    answer["pair_03"].update(decision="edit", question=edited)
    resume_flow_run(paused.id, run_input=answer)
    runner.join(timeout=120)
    assert result and result[0]["decisions"] == len(pairs) and result[0]["problems"] == []
    actions = dict(
        _sql(
            data,
            "SELECT action, count(*) FROM fct_qa_decisions WHERE reviewer = 'carla' "
            "AND channel = 'ui' GROUP BY 1",
        )
    )
    assert actions == {"approve": len(pairs) - 2, "reject": 1, "edit": 1}
    (edit,) = _sql(
        data, "SELECT question, original_question FROM fct_qa_decisions WHERE action = 'edit'"
    )
    assert edit == (edited, entries[2]["question"]["default"])
    statuses = dict(
        _sql(
            data,
            f"SELECT status, count(*) FROM fct_qa_pairs WHERE sample_id = '{sample}' "
            "AND status IN ('pending', 'approved', 'rejected') GROUP BY 1",
        )
    )
    assert statuses == {"approved": len(pairs) - 1, "rejected": 1}
    # The run leaves the decisions as an artifact.
    with get_client(sync_client=True) as client:
        (artifact,) = [a for a in client.read_artifacts() if a.key == "qa-review-batch-1"]
    rows = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    assert len(rows) == len(pairs) and {r["decision"] for r in rows} == {
        "approve",
        "reject",
        "edit",
    }


def test_interactive_review_saves_each_decision_and_resumes(data, monkeypatch, capsys):
    import io

    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    args = ["review", "--data-dir", str(data), "--sample", sample, "--reviewer", "dee"]
    keys = "a\nr\nnot answerable from the papers\ne\nWhich RMSE is reported?\n\ns\nq\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(keys))
    assert main(args) == 0
    assert "3 decisions recorded this session" in capsys.readouterr().out
    actions = _sql(data, "SELECT action, question FROM fct_qa_decisions ORDER BY decided_at")
    assert [a for a, _ in actions] == ["approve", "reject", "edit"]
    assert actions[2][1] == "Which RMSE is reported?"
    # The next session starts with the pair skipped last time.
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main(args) == 0
    (skipped,) = _sql(
        data,
        f"SELECT count(*) FROM fct_qa_pairs WHERE sample_id = '{sample}' AND status = 'pending'",
    )[0]
    assert f"{skipped} pairs wait" in capsys.readouterr().out
