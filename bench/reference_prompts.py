"""Fidelity check: the reference's templates, rendered with the reference's own bindings for
each imported sample run, against the prompts lilo recorded for it.

    .venv/bin/python -m bench.reference_prompts CLONE [--data-dir DIR] [--sample ID]

CLONE is the user's clone of the published benchmark (its templates, checklist and scripts
are read there at run time; lilo holds none of their text). DIR holds a warehouse where
`lilo import longinoutbench CLONE` then `lilo run --dataset longinoutbench` ran (the full
requests are in its `llm_cache`). For each template it prints `identical` or the first
differing lines (of the first sample where it differs), and exits 1 on any difference (2
when something needed is missing). Only the imported benchmark's samples are checked
(`group_kind = import`), every one with an AgentWrite summary (`--sample`: those whose id
starts so), at its shortest length, whatever else the warehouse holds.

The reference's bindings (docs/reference.md, "Method templates"): the task renders the
sample's papers in the order lilo's Single read them (sorted file names, or the folder's
listing order, the reference's, under `generate.paper_order=listing`; the first line says
for how many samples they were the listing's order) and the length; the planner the task;
the writers the planner's reply as it came, the step line, the replies so far each after a
newline, AgentWrite's `write_step` with `text=` (its `<written>` block renders empty);
RAL-Writer's the chunks lilo's run restated (by index into the reference's splitter's
chunks) and the task's `<keys>` block; the QA answer the summary and the question with the
script's appended sentence; the QA judge the question, the gold answer and the answer lilo's
judge gave (every approved pair, its question and answer as the clone publishes them); the
checklist `json.dumps` of the aspect's published items, with the script's
system message.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from jinja2.sandbox import ImmutableSandboxedEnvironment

from lilo.tasks.benchmark._files import paper_id_of
from lilo.tasks.benchmark._scripts import appended_sentence, system_message
from lilo.tasks.config_loading import load_settings
from lilo.tasks.methods._splitter import split_recursive

TEMPLATES = (
    "survey_gen",
    "planner",
    "write_begin",
    "write_step",
    "write_begin_with_restate",
    "write_step_with_restate",
    "gpt_qa",
    "judge_qa",
    "checklist",
)
_SHOWN = 160  # characters of a differing line shown


class Missing(RuntimeError):
    """Something the check needs is not there; the message says what to run."""


@dataclass(frozen=True)
class Call:
    messages: list[dict[str, str]]
    reply: str


class Recorded:
    """The calls lilo recorded, read from the warehouse (read-only)."""

    def __init__(self, db: Path) -> None:
        if not db.is_file():
            raise Missing(f"{db} not found: give --data-dir where lilo ran on the benchmark")
        self.con = duckdb.connect(str(db), read_only=True)
        self._judge_calls: dict[str, list[Call]] = {}  # the judges' calls, read once

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, params or []).fetchall()

    def calls(self, purpose_like: str) -> list[Call]:
        if ":" in purpose_like:  # one sample's generation calls: read when asked
            return self._read_calls(purpose_like)
        if purpose_like not in self._judge_calls:
            self._judge_calls[purpose_like] = self._read_calls(purpose_like)
        return self._judge_calls[purpose_like]

    def _read_calls(self, purpose_like: str) -> list[Call]:
        rows = self.rows(
            "SELECT r.request, r.response FROM fct_llm_calls AS c JOIN llm_cache AS r "
            "USING (key) WHERE c.purpose LIKE ? ORDER BY c.run_id, c.seq",
            [purpose_like],
        )
        return [Call(json.loads(q)["messages"], a) for q, a in rows]


def _render(source: str, **variables: Any) -> str:
    """As the reference compiles them (`jinja2.Template`'s defaults), in Jinja's sandbox: the
    clone's templates come from outside lilo."""
    return ImmutableSandboxedEnvironment().from_string(source).render(**variables)


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _first_difference(expected: list[dict[str, str]], got: list[dict[str, str]]) -> str:
    """ "" when identical, else where they first differ (message, line) and both lines."""
    if [m["role"] for m in expected] != [m["role"] for m in got]:
        roles = [m["role"] for m in expected], [m["role"] for m in got]
        return f"messages: reference {roles[0]}, lilo {roles[1]}"
    for n, (a, b) in enumerate(zip(expected, got, strict=True)):
        if a["content"] == b["content"]:
            continue
        ours, theirs = a["content"].split("\n"), b["content"].split("\n")
        for i in range(max(len(ours), len(theirs))):
            x = ours[i] if i < len(ours) else "<end>"
            y = theirs[i] if i < len(theirs) else "<end>"
            if x != y:
                return (
                    f"message {n + 1} ({a['role']}), line {i + 1}:\n"
                    f"      reference: {x[:_SHOWN]!r}\n      lilo:      {y[:_SHOWN]!r}"
                )
    return ""


class Check:
    """The reference's prompts for one sample, built from the clone and lilo's replies."""

    def __init__(self, clone: Path, recorded: Recorded, sample_id: str, target: int) -> None:
        self.clone, self.rec = clone, recorded
        self.sample_id, self.target = sample_id, target
        self.group = self.clone / "dataset" / "papers" / "cleaned" / self.sample_id.split("/")[-1]

    def text(self, rel: str) -> str:
        path = self.clone / rel
        if not path.is_file():
            raise Missing(f"{path} not found: give the clone of the benchmark")
        return path.read_text(encoding="utf-8")

    def papers(self) -> list[Path]:
        """The group's papers in the order lilo's Single read them (sorted file names where
        the generation recorded none)."""
        files = {paper_id_of(p.name): p for p in sorted(self.group.glob("*.tex"))}
        read = self.rec.rows(
            "SELECT papers_read FROM fct_generations WHERE variant = 'single' AND "
            "sample_id = ? AND target_words = ? AND coalesce(rotation, 0) = 0 AND error = ''",
            [self.sample_id, self.target],
        )
        order = list(read[0][0] or []) if read else []
        if sorted(order) != sorted(files):
            return list(files.values())
        return [files[p] for p in order]

    def in_listing_order(self) -> bool:
        """Whether lilo read the papers in the folder's listing order here, the reference's."""
        listing = [f for f in os.listdir(self.group) if f.endswith(".tex")]
        return [p.name for p in self.papers()] == listing

    def instruction(self) -> str:
        papers = [p.read_text(encoding="utf-8") for p in self.papers()]
        return _render(
            self.text("dataset/prompt/survey_gen.jinja"), papers=papers, length=self.target
        )

    def _calls(self, variant: str, label: str) -> list[Call]:
        like = f"generate:{variant}:{self.sample_id}:{self.target}:0:{label}"
        calls = self.rec.calls(like)
        if not calls:
            raise Missing(f"no recorded call {like}: run {variant} on {self.sample_id}")
        return calls

    def _generation(self, variant: str) -> dict[str, Any]:
        rows = self.rec.rows(
            "SELECT text, plan, restated, method_args FROM fct_generations WHERE variant = ? "
            "AND sample_id = ? AND target_words = ? AND coalesce(rotation, 0) = 0 "
            "AND error = ''",
            [variant, self.sample_id, self.target],
        )
        if not rows:
            raise Missing(f"no {variant} summary of {self.sample_id} at {self.target} words")
        text, plan, restated, args = (json.loads(v) if i else v for i, v in enumerate(rows[0]))
        return {"text": text, "plan": plan, "restated": restated, "args": args}

    def _plan(self, variant: str, lines: list[str]) -> str:
        """The planner reply the method used (the last re-ask, for RAL-Writer)."""
        for call in reversed(self._calls(variant, "plan")):
            if [s.strip() for s in call.reply.split("\n") if s.strip()] == lines:
                return call.reply
        raise Missing(f"no recorded plan of {variant} gives its steps")

    def pairs(self) -> Iterator[tuple[str, list[dict[str, str]], list[dict[str, str]]]]:
        """(template, the reference's messages, lilo's) for each template."""
        instruction = self.instruction()
        yield "survey_gen", _user(instruction), self._calls("single", "write")[0].messages
        agent = self._generation("agentwrite")
        plan_reply = self._plan("agentwrite", agent["plan"])
        steps = self._calls("agentwrite", "step%")
        plan_template = self.text("src/template/plan.jinja")
        yield (
            "planner",
            _user(_render(plan_template, instruction=instruction)),
            (self._calls("agentwrite", "plan")[0].messages),
        )
        step_vars = {"instruction": instruction, "plan": plan_reply}
        begin = _render(
            self.text("src/template/write_begin.jinja"), step=agent["plan"][0], **step_vars
        )
        yield "write_begin", _user(begin), steps[0].messages
        if len(steps) > 1:
            written = "\n" + steps[0].reply
            # ConcatAgent passes the text written so far as `text`; the template reads `written`.
            second = _render(
                self.text("src/template/write_step.jinja"),
                step=agent["plan"][1],
                text=written,
                **step_vars,
            )
            yield "write_step", _user(second), steps[1].messages
        yield from self._restated(instruction)
        yield from self._judges(agent["text"])

    def _restated(self, instruction: str) -> Iterator[tuple[str, Any, Any]]:
        """RAL-Writer's two templates, where this run wrote RAL-Writer (else not checked)."""
        ran = self.rec.rows(
            "SELECT count(*) FROM fct_generations WHERE variant = 'ral_writer' AND "
            "sample_id = ? AND target_words = ? AND coalesce(rotation, 0) = 0 AND error = ''",
            [self.sample_id, self.target],
        )
        if not ran[0][0]:
            return
        ral = self._generation("ral_writer")
        plan_reply = self._plan("ral_writer", ral["plan"])
        steps = self._calls("ral_writer", "step%")
        args = ral["args"]
        chunks = split_recursive(instruction, args["chunk_words"], args["overlap_words"])
        keys = instruction.split("<keys>")[1].split("</keys>")[0].strip()
        written = ""
        for n, (call, record) in enumerate(zip(steps[:2], ral["restated"], strict=False)):
            restatement = "\n\n---\n\n".join(chunks[i] for i in record["chunks"])
            begin = n == 0 or record["k"] < args["k"]
            name = "write_begin_with_restate" if begin else "write_step_with_restate"
            extra = {} if begin else {"written": written, "keys": keys}
            prompt = _render(
                self.text(f"src/template/{name}.jinja"),
                instruction=instruction,
                plan=plan_reply,
                step=ral["plan"][n],
                restatement=restatement,
                **extra,
            )
            yield name, _user(prompt), call.messages
            written += "\n" + call.reply

    def _judges(self, summary: str) -> Iterator[tuple[str, Any, Any]]:
        """The QA answer and grade prompts of every approved pair of the sample."""
        reasons = self.rec.rows(
            "SELECT reason FROM fct_qa_pairs WHERE sample_id = ? "
            "AND status = 'approved' ORDER BY kind DESC, reason",
            [self.sample_id],
        )
        if not reasons:
            raise Missing(f"no approved QA pair of {self.sample_id}: import the benchmark again")
        pairs = [self._published(r[0]) for r in reasons]
        suffix = appended_sentence(ast.parse(self.text("experiments/consistency_score.py")))
        answered = [
            c for c in self.rec.calls("consistency_answer") if summary in c.messages[-1]["content"]
        ]
        for question, gold in pairs:
            asked = _render(
                self.text("dataset/prompt/gpt_qa.jinja"), paper=summary, question=question
            )
            answers = [c for c in answered if question.strip() in c.messages[-1]["content"]]
            if not answers:
                raise Missing(f"no recorded QA answer for {self.sample_id}: run the score stage")
            yield "gpt_qa", _user(asked + (suffix or "")), answers[0].messages
            graded = _render(
                self.text("dataset/prompt/judge_qa.jinja"),
                question=question,
                answer=gold,
                predict=answers[0].reply,
            )
            judged = [
                c
                for c in self.rec.calls("consistency_evaluate")
                if question.strip() in c.messages[-1]["content"]
                and answers[0].reply in c.messages[-1]["content"]
            ]
            if not judged:
                raise Missing(f"no recorded QA grade for {self.sample_id}: run the score stage")
            # another summary's answer may begin with this one: the grade of this answer is
            # the one where it ends its line
            reply = answers[0].reply
            ends = [c for c in judged if f"{reply}\n" in c.messages[-1]["content"]]
            judged = ends or judged
            yield "judge_qa", _user(graded), judged[0].messages
        yield "checklist", *self._checklist(summary)

    def _published(self, reason: str) -> tuple[str, str]:
        """The question and answer as the clone publishes them (`reason`: the import's
        `questions/KIND/group_N.json#INDEX`), which the reference renders as they are."""
        rel, index = reason.rsplit("#", 1)
        item = json.loads(self.text(f"dataset/{rel}"))[int(index)]
        return str(item["question"]), str(item["answer"])

    def _checklist(self, summary: str) -> tuple[Any, Any]:
        """The first aspect whose prompt differs, or the last one (all identical)."""
        system = system_message(ast.parse(self.text("experiments/quality_score.py")))
        checklist = json.loads(self.text("dataset/checklist/checklist.json"))
        template = self.text("dataset/prompt/checklist.jinja")
        recorded = [
            c for c in self.rec.calls("quality_checklist") if summary in c.messages[-1]["content"]
        ]
        pair: tuple[Any, Any] = ([], [])
        for checks in checklist.values():
            items = [{"checklist_id": i, "checklist_content": q} for i, q in enumerate(checks)]
            user = _render(template, checklists=json.dumps(items), response=summary)
            expected = [{"role": "system", "content": system or ""}, *_user(user)]
            # the aspect's first question, as JSON shows it (with or without ASCII escapes)
            first = {json.dumps(checks[0]["question"], ensure_ascii=a)[1:-1] for a in (0, 1)}
            match = [c for c in recorded if any(q in c.messages[-1]["content"] for q in first)]
            pair = (expected, match[0].messages if match else [])
            if not match or _first_difference(*pair):
                return pair
        return pair


def imported_samples(recorded: Recorded, wanted: str | None) -> list[tuple[str, int]]:
    """(sample id, its shortest length) of every imported sample with an AgentWrite summary,
    whatever else the warehouse holds (a demo's samples are not the benchmark's)."""
    rows = recorded.rows(
        "SELECT g.sample_id, min(g.target_words) FROM fct_generations AS g "
        "WHERE g.method = 'agentwrite' AND g.error = '' AND coalesce(g.rotation, 0) = 0 "
        "AND starts_with(g.sample_id, ?) AND g.sample_id IN "
        "(SELECT sample_id FROM dim_samples WHERE group_kind = 'import') "
        "GROUP BY g.sample_id",
        [wanted or ""],
    )
    if not rows:
        raise Missing(
            f"no AgentWrite summary of {wanted or 'an imported sample'}: run lilo run "
            "--dataset longinoutbench --samples 1 first"
        )
    number = re.compile(r"(\d+)")
    return sorted(
        ((r[0], r[1]) for r in rows),
        key=lambda r: [int(t) if t.isdigit() else t for t in number.split(r[0])],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.reference_prompts", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("clone", type=Path, help="the clone of the published benchmark")
    parser.add_argument("--data-dir", type=Path, help="lilo's data dir (default: the settings')")
    parser.add_argument(
        "--sample", help="a sample id or its prefix (default: every imported sample run)"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or load_settings().data_dir
    differ: dict[str, list[tuple[str, str]]] = {t: [] for t in TEMPLATES}
    seen: dict[str, int] = dict.fromkeys(TEMPLATES, 0)
    try:
        recorded = Recorded(data_dir / "lilo.duckdb")
        samples = imported_samples(recorded, args.sample)
        listed = 0
        for sample_id, target in samples:
            check = Check(args.clone, recorded, sample_id, target)
            listed += check.in_listing_order()
            for name, expected, got in check.pairs():
                seen[name] += 1
                why = _first_difference(expected, got) if got else "no recorded prompt"
                if why:
                    differ[name].append((sample_id, why))
    except Missing as exc:
        print(f"bench.reference_prompts: {exc}", file=sys.stderr)
        return 2
    print(
        f"reference prompts for {len(samples)} imported samples ({args.clone}); papers read in "
        f"the group folder's listing order, as the reference reads them here: {listed} of "
        f"{len(samples)}" + ("" if listed == len(samples) else " (--profile paper reads so)")
    )
    for name in TEMPLATES:
        if not seen[name]:
            continue
        if not differ[name]:
            print(f"  {name:<26} identical ({seen[name]} prompts)")
            continue
        first, why = differ[name][0]
        n = len(differ[name])
        print(f"  {name:<26} differs in {n} of {seen[name]} prompts, first {first}: {why}")
    unchecked = [t for t in TEMPLATES if not seen[t]]
    different = [t for t in TEMPLATES if differ[t]]
    print(
        f"{len(TEMPLATES) - len(different) - len(unchecked)} of {len(TEMPLATES)} identical"
        + (f"; differ: {', '.join(different)}" if different else "")
        + (
            f"; not checked (method not run, or too few steps): {', '.join(unchecked)}"
            if unchecked
            else ""
        )
    )
    return 1 if different or unchecked else 0


if __name__ == "__main__":
    sys.exit(main())
