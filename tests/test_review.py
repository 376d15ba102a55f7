"""Human review, three ways, one record: the Prefect UI form (a paused flow resumed with
run input, as the UI does), the `lilo review` CLI and JSONL files; manual mode end to end."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime

import duckdb
import pytest
from artifacts import read_artifacts
from conftest import MANUAL_REVIEW_DEMO, copy_data_dir

from lilo.flows.cli import main
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import flow_parameters
from lilo.tasks.qa import Verdict, apply_verdicts, decide
from lilo.tasks.records import QAPair

DEMO = MANUAL_REVIEW_DEMO  # the session's demo (tests/conftest.py), run again by the tests


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


def _pairs(*ids: str, status: str = "pending") -> dict[str, QAPair]:
    return {i: QAPair(**{**_pair(status).__dict__, "qa_id": i}) for i in ids}


def test_bad_verdicts_are_problems_not_crashes():
    pairs = {**_pairs("q1", "q3"), **_pairs("q2", status="filtered")}
    verdicts = [
        Verdict(qa_id="q1", decision="reject"),  # no reason
        Verdict(qa_id="q2", decision="approve"),  # never reached review
        Verdict(qa_id="nope", decision="approve"),
        Verdict(qa_id="q3", decision="edit"),  # changes nothing
        Verdict(qa_id="q1"),  # pending: skipped
    ]
    changed, decisions, problems, unchanged = apply_verdicts(
        verdicts, pairs, "ana", "ui", datetime.now()
    )
    assert changed == [] and decisions == [] and unchanged == []
    assert [p.qa_id for p in problems] == ["q1", "q2", "nope", "q3"]
    assert {p.reason for p in problems} == {"review_input_rejected"}
    assert "needs a reason" in problems[0].message and "filtered" in problems[1].message


def test_different_verdicts_on_one_pair_record_none_of_them():
    verdicts = [
        Verdict(qa_id="q1", decision="approve"),
        Verdict(qa_id="q1", decision="reject", reason="vague"),
        Verdict(qa_id="q2", decision="approve"),
        Verdict(qa_id="q2", decision="approve"),  # the same twice: one decision
    ]
    applied = apply_verdicts(verdicts, _pairs("q1", "q2"), "ana", "file", datetime.now())
    assert [d.qa_id for d in applied.decisions] == ["q2"]
    (problem,) = applied.problems
    assert (problem.qa_id, problem.reason) == ("q1", "review_conflict")
    assert "2 different verdicts on this pair (approve, reject): none recorded" in str(problem)


def test_a_decision_made_after_the_pair_was_shown_wins_and_is_named():
    """Shown at 10:00; bob approved from the CLI at 10:05; the form sent at 10:10 says..."""
    shown, cli_at, now = (datetime(2026, 1, 2, 10, m) for m in (0, 5, 10))
    before = _pairs("q1", "q2", "q3")
    after = {}
    latest = {}
    for qa_id in ("q1", "q2"):
        after[qa_id], latest[qa_id] = decide(before[qa_id], "approve", "bob", "cli", cli_at)
    pairs = {**before, **after}
    verdicts = [
        Verdict(qa_id="q1", decision="approve", shown_at=shown),  # the same: already so
        Verdict(qa_id="q2", decision="reject", reason="vague", shown_at=shown),  # conflict
        Verdict(qa_id="q3", decision="reject", reason="vague", shown_at=shown),  # recorded
    ]
    applied = apply_verdicts(verdicts, pairs, "carla", "ui", now, latest)
    assert [(d.qa_id, d.action, d.reviewer) for d in applied.decisions] == [
        ("q3", "reject", "carla")
    ]
    (conflict,) = applied.problems
    assert (conflict.qa_id, conflict.reason) == ("q2", "review_conflict")
    assert str(conflict) == (
        "q2: your reject conflicts with the approve by bob (cli) at 2026-01-02 10:05:00 UTC, "
        "made after the pair was shown to you at 2026-01-02 10:00:00 UTC: not recorded; "
        "it stays approved"
    )
    (same,) = applied.unchanged
    assert str(same) == (
        "q1: already approved (approve by bob (cli) at 2026-01-02 10:05:00 UTC): "
        "nothing new recorded"
    )
    # Without shown_at (a CLI command on the pair as it is now) bob's own change of mind is
    # recorded; carla's contradicts bob's decision: the conflict is said, naming it.
    reject = [Verdict(qa_id="q2", decision="reject", reason="vague")]
    again = apply_verdicts(reject, pairs, "bob", "cli", now, latest)
    assert [d.action for d in again.decisions] == ["reject"] and again.problems == []
    other = apply_verdicts(reject, pairs, "carla", "cli", now, latest)
    assert other.decisions == [] and [str(p) for p in other.problems] == [
        "q2: your reject conflicts with the approve by bob (cli) at 2026-01-02 10:05:00 UTC: "
        "not recorded; it stays approved (--replace records yours over it)"
    ]
    assert other.problems[0].reason == "review_conflict"
    # Shown now (`--replace`), hers replaces his; auto-review's approval is no one's.
    replaced = [Verdict(qa_id="q2", decision="reject", reason="vague", shown_at=now)]
    assert len(apply_verdicts(replaced, pairs, "carla", "cli", now, latest).decisions) == 1
    auto = {"q2": decide(before["q2"], "approve", "auto", "auto", cli_at)[1]}
    assert len(apply_verdicts(reject, pairs, "carla", "cli", now, auto).decisions) == 1


def test_a_second_reviewer_on_the_cli_is_told_of_the_first_and_the_conflict_recorded(data, capsys):
    """ana approves a pair, then bob rejects it from his terminal: bob's is not recorded, he
    is told in one line naming the pair and ana's decision, and the conflict is quarantined;
    with --replace his decision is recorded over hers."""
    (qa_id,) = _sql(data, "SELECT min(qa_id) FROM fct_qa_pairs WHERE status = 'pending'")[0]
    common = ["--data-dir", str(data)]
    assert main(["review", "approve", qa_id, *common, "--reviewer", "ana"]) == 0
    capsys.readouterr()
    bob = ["review", "reject", qa_id, "--reason", "vague", *common, "--reviewer", "bob"]
    assert main(bob) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"not recorded: {qa_id}: your reject conflicts with the approve by ana (cli) at "
    )
    assert _sql(data, f"SELECT status, reviewer FROM fct_qa_pairs WHERE qa_id = '{qa_id}'") == [
        ("approved", "ana")
    ]
    assert _sql(data, f"SELECT reason FROM quarantine WHERE item_id = '{qa_id}'") == [
        ("review_conflict",)
    ]
    assert main([*bob, "--replace"]) == 0
    assert _sql(data, f"SELECT status, reviewer FROM fct_qa_pairs WHERE qa_id = '{qa_id}'") == [
        ("rejected", "bob")
    ]


def test_the_ui_form_has_one_entry_per_pair_kept_as_is_until_decided():
    """A batch of 10 was 10 required choices; a decision left as it is ("keep as is")
    leaves the pair pending."""
    from pydantic import ValidationError

    from lilo.flows.qa_review import review_form

    form = review_form([_pair(), QAPair(**{**_pair().__dict__, "qa_id": "q2"})], {})
    with pytest.raises(ValidationError):  # an entry missing
        form(reviewer="ana", pair_01={"decision": "approve"})
    kept = form(reviewer="ana", pair_01={}, pair_02={"decision": "approve"})
    assert [(v.qa_id, v.decision) for v in kept.verdicts()] == [
        ("q1", "pending"),
        ("q2", "approve"),
    ]
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


@pytest.fixture
def manual_run(manual_review_demo):
    """`lilo demo --review manual`, built once per test run (tests/conftest.py); read only."""
    return manual_review_demo


@pytest.fixture
def data(manual_run, tmp_path):
    return copy_data_dir(manual_run, tmp_path / "data", published=False)


def test_manual_run_leaves_samples_waiting_and_writes_no_summaries(manual_run):
    statuses = dict(_sql(manual_run, "SELECT status, count(*) FROM fct_qa_pairs GROUP BY 1"))
    assert statuses["pending"] > 0 and "approved" not in statuses
    assert _sql(manual_run, "SELECT count(*) FROM fct_generations") == [(0,)]
    assert _sql(manual_run, "SELECT count(*) FROM fct_qa_decisions") == [(0,)]
    assert _sql(manual_run, "SELECT count(*) FROM res_versions") == [(0,)]  # nothing to show
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
    # The two samples that wait for review are expected and missing: 1/3, partial.
    out = capsys.readouterr().out
    assert "(PARTIAL)" in out and "1/3" in out
    assert _sql(data, "SELECT scored, expected, partial FROM leaderboard") == [(1, 3, True)]
    assert main(["failures", "--data-dir", str(data)]) == 0
    listed = capsys.readouterr().out.splitlines()
    waiting = sorted(set(samples) - {chosen})
    assert listed[-1] == "2 failures"
    assert [line.split("\t")[:4] for line in listed[:-1]] == [
        ["review", "-", "-", sample] for sample in waiting
    ]
    assert all("\twaiting for review: single: 0/" in line for line in listed[:-1])
    assert main(["review", "report", "--data-dir", str(data)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["samples_ready"] == 1 and report["reviewers"] == {"ana": report["decisions"]}
    coverage = report["coverage"]
    assert (coverage["facts"], coverage["facts_in_sampled_papers"]) == (96, 72)
    assert 0 < coverage["covered"] <= 24  # one sample's three papers, eight facts each


def test_a_decision_reaches_the_analysts_copy_at_once_and_empty_commands_say_why(
    manual_run, tmp_path, capsys
):
    """Analysts read the published copy: a review decision is there when the command ends,
    not after the next run; a command with nothing to show says what waits, and how."""
    data = copy_data_dir(manual_run, tmp_path / "data", published=True)
    counts = "SELECT status, count(*) FROM fct_qa_pairs GROUP BY 1 ORDER BY 1"
    assert main(["leaderboard", "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert "no result versions yet" in err and "of 3 samples wait for review" in err
    assert "`lilo review ui`" in err
    assert main(["failures", "--data-dir", str(data)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "0 failures"
    assert "of 3 samples wait for review" in captured.err
    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    args = ["--sample", sample, "--data-dir", str(data), "--reviewer", "ana"]
    assert main(["review", "approve", *args]) == 0
    with duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True) as con:
        published = con.execute(counts).fetchall()
    assert published == _sql(data, counts) and dict(published)["approved"] > 0


def test_export_edit_import_jsonl(data, tmp_path, capsys):
    out = tmp_path / "pairs.jsonl"
    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    common = ["--data-dir", str(data), "--sample", sample]
    assert main(["review", "export", str(out), *common]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) >= 5 and all(line["shown_at"] for line in lines)
    lines[0]["decision"] = "approve"
    lines[1].update(decision="reject", reason="ambiguous: two RMSE figures fit")
    # A line's own reviewer and time are not recorded: the importer's are.
    lines[2].update(
        decision="approve",
        answer="Edited: " + lines[2]["answer"],
        reviewer="alice-the-admin",
        decided_at="2099-12-31T00:00:00",
    )
    lines[3].update(decision="reject")  # no reason: not recorded
    conflicting = [dict(lines[4], decision=d, reason="vague") for d in ("approve", "reject")]
    text = "\n".join(json.dumps(line) for line in [*lines, *conflicting]).encode()
    text += b'\n{"qa_id": 1, "oops": true}\n{"qa_id": "caf\xe9"}\n'
    out.write_bytes(text)
    n = len(lines) + len(conflicting)
    imported = ["--data-dir", str(data), "--reviewer", "ana"]  # the file says which pairs
    assert main(["review", "import", str(out), *imported]) == 1
    captured = capsys.readouterr()
    err = captured.err
    assert "needs a reason" in err and f"{out}:{n + 1}: qa_id" in err
    assert f"skipped {out}:{n + 2}: not UTF-8 text (byte 15)" in err
    assert f"ignored the reviewer or decided_at given in {out}:3: every decision is" in err
    assert f"{lines[4]['qa_id']}: 2 different verdicts on this pair (approve, reject)" in err
    rows = _sql(
        data,
        "SELECT qa_id, action, reviewer, channel, original_answer, answer, decided_at "
        "FROM fct_qa_decisions",
    )
    by_id = {r[0]: r[1:] for r in rows}
    assert by_id[lines[0]["qa_id"]][:3] == ("approve", "ana", "file")
    assert by_id[lines[1]["qa_id"]][0] == "reject"
    edit = by_id[lines[2]["qa_id"]]
    assert edit[:2] == ("edit", "ana") and edit[4] == "Edited: " + edit[3]
    assert edit[5].year < 2099
    assert lines[3]["qa_id"] not in by_id and lines[4]["qa_id"] not in by_id
    assert sorted(
        _sql(data, "SELECT item_id, reason FROM quarantine WHERE stage = 'review'")
    ) == sorted(
        [(lines[3]["qa_id"], "review_input_rejected"), (lines[4]["qa_id"], "review_conflict")]
    )
    # Importing the same file again adds no decision, and says so pair by pair.
    assert main(["review", "import", str(out), *imported]) == 1
    assert len(_sql(data, "SELECT * FROM fct_qa_decisions")) == len(rows)
    again = capsys.readouterr().out
    assert f"unchanged: {lines[0]['qa_id']}: already approved (approve by ana (file) at" in again
    assert "0 decisions recorded, 2 not recorded, 3 already so" in again


def test_review_flow_form_resumed_like_the_ui(data):
    from prefect import get_client
    from prefect.flow_runs import resume_flow_run

    from lilo.flows.qa_review import qa_review

    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    # as `lilo review ui` passes its settings to the flow it runs in itself
    tuned = {"qa.review_poll_s": 1, "qa.review_batch": 50}
    overrides = flow_parameters(Settings(data_dir=data).with_overrides(tuned))
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
    choices = ["keep as is", "approve", "reject", "edit"]
    assert all(e["decision"]["enum"] == choices for e in entries)
    assert entries[0]["decision"]["default"] == "keep as is"
    # The paused run's page says a review waits and where its form is.
    (waiting,) = [a for a in read_artifacts("qa-review-waiting") if a.flow_run_id == paused.id]
    assert "**Resume**" in waiting.data and "`lilo review`" in waiting.data
    assert f"{len(pairs)} of the {len(pairs)} QA pairs pending" in waiting.data
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
    assert len(pairs) >= 4
    answer[pairs[-1]].update(decision="keep as is")  # the UI sends the default
    resume_flow_run(paused.id, run_input=answer)
    runner.join(timeout=120)
    assert result and result[0]["decisions"] == len(pairs) - 1 and result[0]["problems"] == []
    actions = dict(
        _sql(
            data,
            "SELECT action, count(*) FROM fct_qa_decisions WHERE reviewer = 'carla' "
            "AND channel = 'ui' GROUP BY 1",
        )
    )
    assert actions == {"approve": len(pairs) - 3, "reject": 1, "edit": 1}
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
    assert statuses == {"approved": len(pairs) - 2, "rejected": 1, "pending": 1}
    # The run leaves the decisions as an artifact.
    (artifact,) = [a for a in read_artifacts("qa-review-batch-1") if a.flow_run_id == paused.id]
    rows = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    assert len(rows) == len(pairs) - 1 and {r["decision"] for r in rows} == {
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
    out = capsys.readouterr().out
    assert "3 decisions recorded this session" in out
    # The choices whole (rich once read "[a]" as markup), the evidence under its title.
    assert "[a]pprove, [r]eject, [e]dit, [s]kip, [q]uit" in out
    titles = [t for (t,) in _sql(data, "SELECT title FROM dim_papers WHERE title <> ''")]
    assert any(f'│ "{t[:12]}' in out for t in titles)
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


def test_review_list_refuses_an_unknown_status(data, capsys):
    assert main(["review", "list", "--status", "pending,bogus", "--data-dir", str(data)]) == 2
    err = capsys.readouterr().err
    assert "unknown status bogus: use pending, approved, rejected, filtered, duplicate" in err


def test_the_cli_knows_every_qa_status():
    from lilo.flows.cli.review import _QA_STATUSES
    from lilo.tasks.qa.review import QA_STATUSES

    assert _QA_STATUSES == QA_STATUSES


def _paused_run(client):
    for _ in range(240):
        paused = next((r for r in client.read_flow_runs() if r.state.is_paused()), None)
        if paused:
            return paused
        time.sleep(0.5)
    raise AssertionError("the review flow never paused for its form")


@pytest.fixture
def lilo_logs_to_prefect():
    """What PREFECT_LOGGING_EXTRA_LOGGERS=lilo does in the CLI and the deployments (set
    before Prefect is imported there, which a test session cannot do): lilo's logger gets
    Prefect's handlers, the run's logs in the API among them."""
    import logging

    lilo = logging.getLogger("lilo")
    added = [h for h in logging.getLogger("prefect.extra").handlers if h not in lilo.handlers]
    for handler in added:
        lilo.addHandler(handler)
    yield
    for handler in added:
        lilo.removeHandler(handler)


def test_a_form_submitted_after_cli_decisions_reports_each_conflict(
    data, caplog, lilo_logs_to_prefect
):
    """The form is open; bob decides three of its pairs from the CLI; then the form comes
    back deciding every pair: each verdict is recorded, already so, or a conflict that
    names bob's decision, in the flow's result, the run's logs and the batch's artifact."""
    from prefect import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.flow_runs import resume_flow_run

    from lilo.flows.qa_review import qa_review

    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    # as `lilo review ui` passes its settings to the flow it runs in itself
    tuned = {"qa.review_poll_s": 1, "qa.review_batch": 50}
    overrides = flow_parameters(Settings(data_dir=data).with_overrides(tuned))
    result: list[dict] = []
    runner = threading.Thread(
        target=lambda: result.append(qa_review(sample=sample, overrides=overrides))
    )
    runner.start()
    with get_client(sync_client=True) as client:
        paused = _paused_run(client)
        key = paused.state.state_details.run_input_keyset
        schema = json.loads(client.read_flow_run_input(paused.id, key["schema"]))
    pairs = sorted(k for k in schema["properties"] if k.startswith("pair_"))
    qa_ids = [schema["properties"][k]["title"].rsplit("QA ", 1)[1] for k in pairs]
    assert len(qa_ids) >= 4
    common = ["--data-dir", str(data), "--reviewer", "bob"]
    assert main(["review", "approve", qa_ids[0], qa_ids[1], *common]) == 0
    assert main(["review", "reject", qa_ids[2], "--reason", "off topic", *common]) == 0
    entries = [
        schema["definitions"][f"Pair{i:02d}"]["properties"] for i in range(1, 1 + len(pairs))
    ]
    answer: dict = {"reviewer": "carla"} | {
        k: {"decision": "approve"} | {f: e[f]["default"] for f in ("question", "answer", "reason")}
        for k, e in zip(pairs, entries, strict=True)
    }
    answer["pair_02"].update(decision="reject", reason="trivial")  # bob approved it
    resume_flow_run(paused.id, run_input=answer)  # pair 3: bob rejected, carla approves
    runner.join(timeout=120)
    totals = result[0]
    assert totals["decisions"] == len(pairs) - 3
    assert len(totals["unchanged"]) == 1 and totals["unchanged"][0].startswith(
        f"{qa_ids[0]}: already approved (approve by bob (cli) at "
    )
    conflicts = sorted(totals["problems"])
    assert len(conflicts) == 2
    assert any(
        c.startswith(f"{qa_ids[1]}: your reject conflicts with the approve by bob (cli) at ")
        for c in conflicts
    )
    assert any(
        c.startswith(f"{qa_ids[2]}: your approve conflicts with the reject by bob (cli) at ")
        and c.endswith("not recorded; it stays rejected")
        for c in conflicts
    )
    assert dict(_sql(data, "SELECT reviewer, count(*) FROM fct_qa_decisions GROUP BY 1")) == {
        "bob": 3,
        "carla": len(pairs) - 3,
    }
    with get_client(sync_client=True) as client:
        (artifact,) = [a for a in read_artifacts("qa-review-batch-1") if a.flow_run_id == paused.id]
        logs: list[str] = []
        for _ in range(40):  # the API's log worker sends in batches
            logs = [
                entry.message
                for entry in client.read_logs(
                    log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[paused.id]))
                )
            ]
            if any("batch 1:" in m for m in logs):
                break
            time.sleep(0.5)
    rows = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    assert len(rows) == len(pairs)
    outcomes = sorted(r["outcome"] for r in rows if r["outcome"] != "recorded")
    assert outcomes == [
        "not recorded (review_conflict)",
        "not recorded (review_conflict)",
        "not recorded (unchanged)",
    ]
    assert any(m.startswith("qa-review: a review waits: form batch-1 (") for m in logs)
    assert sum("conflicts with the" in m for m in logs) == 2
    assert any(
        f"batch 1: {len(pairs) - 3} decisions recorded, 2 not recorded, 1 already so" in m
        for m in logs
    )
    assert "a review waits: form batch-1" in caplog.text  # the terminal's log lines


@pytest.mark.slow  # `lilo review` in a subprocess, stopped with a signal
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_review_waiting_for_its_reviewer_stops_on_a_signal_in_one_line(data, signum, code):
    """`lilo review` stops as `lilo run` does (tasks/lifetime.py): SIGTERM like Ctrl-C, one
    line, exit 128 + the signal; the decisions already made stay."""
    review = subprocess.Popen(
        [sys.executable, "-m", "lilo.flows.cli", "review", "--reviewer", "bob", "--data-dir", data],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert review.stdout is not None and review.stdin is not None
    while "pairs wait" not in review.stdout.readline():
        assert review.poll() is None, review.stderr.read() if review.stderr else ""
    review.stdin.write("a\n")
    review.stdin.flush()
    while " 2/" not in review.stdout.readline():  # the next pair: the first is saved
        assert review.poll() is None, review.stderr.read() if review.stderr else ""
    review.send_signal(signum)
    _, stderr = review.communicate(timeout=30)
    assert review.returncode == code, stderr
    assert stderr.strip().splitlines() == [
        f"lilo: interrupted by {signal.Signals(signum).name}: the run is recorded "
        "`interrupted`, its finished work kept; run the same command again to resume"
    ]
    assert _sql(data, "SELECT count(*) FROM fct_qa_decisions") == [(1,)]


def test_review_ui_fills_in_the_reviewer_it_is_given(data, capsys):
    """`lilo review ui --reviewer carol`: the form's name is carol's until changed, so the
    form opens without a missing name; the reason says when it is needed. Before it holds
    the terminal, the command says for how long and how to stop it."""
    from prefect import get_client
    from prefect.flow_runs import resume_flow_run

    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    argv = ["review", "ui", "--reviewer", "carol", "--sample", sample, "--data-dir", str(data),
            "--set", "qa.review_poll_s=1", "--set", "qa.review_batch=50",
            "--set", "qa.review_timeout_s=180"]  # fmt: skip
    seen: list[object] = []

    def reviewer() -> None:  # in the UI: reads the form, submits it with the name as filled
        try:
            with get_client(sync_client=True) as client:
                paused = _paused_run(client)
                key = paused.state.state_details.run_input_keyset
                schema = json.loads(client.read_flow_run_input(paused.id, key["schema"]))
            seen.append(schema)
            # As the UI sends it: every entry whole; the name left as it was filled in.
            entries = {
                k: schema["definitions"][f"Pair{k[5:]}"]["properties"]
                for k in schema["properties"]
                if k.startswith("pair_")
            }
            answer = {
                k: {"decision": "approve"} | {f: e[f]["default"] for f in ("question", "answer")}
                for k, e in entries.items()
            }
            resume_flow_run(paused.id, run_input=answer)
        except Exception as exc:  # reported below; the form then times out
            seen.append(exc)

    ui = threading.Thread(target=reviewer)
    ui.start()
    code = main(argv)  # the command's own thread: it takes the signals
    ui.join(timeout=120)
    assert code == 0 and all(isinstance(s, dict) for s in seen), seen
    assert (
        "holds this terminal while its forms wait, up to 180 s for each" in capsys.readouterr().out
    )
    (schema,) = seen
    assert schema["properties"]["reviewer"]["default"] == "carol"
    assert "reviewer" not in schema["required"]
    reason = schema["definitions"]["Pair01"]["properties"]["reason"]
    assert reason["title"] == "Reason" and "reject" in reason["description"]
    decided = "SELECT DISTINCT reviewer FROM fct_qa_decisions WHERE channel = 'ui'"
    assert _sql(data, decided) == [("carol",)]
