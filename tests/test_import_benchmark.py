"""`lilo import longinoutbench`: a small benchmark in the published layout (docs/design.md §14),
written here with synthetic text and templates of our own (the real one has no license),
then every bad case, the one-transaction write, a second import adding nothing, exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import random
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from lilo.flows.cli import main
from lilo.tasks.benchmark import (
    BenchmarkError,
    build_dataset,
    header_stripped,
    read_longinoutbench,
)
from lilo.tasks.benchmark._files import paper_id_of
from lilo.tasks.prompt_packs import PromptPack, template_problem
from lilo.tasks.synthetic._prose import ProseWriter
from lilo.tasks.synthetic._topics import TOPICS

GROUPS = (2, 3, 10)
ASPECTS = ("instruction", "structure", "data", "relations", "critique", "insight", "reflection")
TEMPLATES = {
    "survey_gen.jinja": "Summarize these papers.\n{% for paper in papers %}"
    "<paper {{ loop.index }}>\n{{ paper }}\n</paper {{ loop.index }}>\n{% endfor %}"
    "<keys>\n- Use Markdown tables.\n- Own words only.\n</keys>\nAbout {{ length }} words.",
    "gpt_qa.jinja": "Answer from this text only.\n<paper>{{ paper }}</paper>\nQ: {{ question }}",
    "judge_qa.jinja": "Q: {{ question }}\nGold: {{ answer }}\nPredicted: {{ predict }}\n"
    'Reply {"reason": "...", "score": 0.5}.',
    "checklist.jinja": "Grade this summary:\n{{ response }}\nItems: {{ checklists }}\n"
    "There are {num_checklist} items.",
    "checklist_winrate.jinja": "A:\n{{ response_A }}\nB:\n{{ response_B }}\n"
    "Items ({{ num_checklist }}): {{ checklists }}",
}

# The reference's method templates (src/template/) in words of our own, with its variables:
# write_step reads `written`, which the reference's AgentWrite passes as `text`.
_STEPS = "Plan:\n<steps>\n{{ plan }}\n</steps>\n"
METHOD_TEMPLATES = {
    "plan": "Split the task into paragraph lines.\n<instruction>\n{{ instruction }}\n"
    "</instruction>\nOne line per paragraph with its word count.",
    "write_begin": "Task:\n<instruction>\n{{ instruction }}\n</instruction>\n"
    + _STEPS
    + "Write the first one:\n<step>\n{{ step }}\n</step>\nParagraph only.",
    "write_step": "Task:\n<instruction>\n{{ instruction }}\n</instruction>\n"
    + _STEPS
    + "So far:\n<written>\n{{ written }}\n</written>\n"
    "Write the next one:\n<step>\n{{ step }}\n</step>\nParagraph only.",
    "write_begin_with_restate": "Task:\n<instruction>\n{{ instruction }}\n</instruction>\n"
    + _STEPS
    + "Again:\n<restatement>\n{{ restatement }}\n</restatement>\n"
    "Write the first one:\n<step>\n{{ step }}\n</step>\nParagraph only.",
    "write_step_with_restate": "Task:\n<instruction>\n{{ instruction }}\n</instruction>\n"
    + _STEPS
    + "So far:\n<written>\n{{ written }}\n</written>\n"
    "Again:\n<restatement>\n{{ restatement }}\n</restatement>\n"
    "Write the next one:\n<step>\n{{ step }}\n</step>\n{{ keys }}\nParagraph only.",
}
# The two scripts holding prompt text as string literals, in the reference's structure.
SCRIPTS = {
    "quality_score.py": "def judge(prompt):\n    return [\n"
    '        {"role": "system", "content": "FIXTURE-SYSTEM: grade each item."},\n'
    '        {"role": "user", "content": prompt},\n    ]\n',
    "consistency_score.py": "def ask(qa_instruction):\n"
    '    return [{"role": "user", "content": qa_instruction + " FIXTURE-SUFFIX."}]\n',
}


def _paper(group: int, slot: int, words: int = 380) -> tuple[str, str]:
    """(file name, text) of a cleaned paper in the published format, 2,000+ words."""
    topic = TOPICS[group % len(TOPICS)]
    method = topic.methods[slot]
    prose = ProseWriter(random.Random(group * 10 + slot), topic, method, ["ref1", "ref2"])
    sections = []
    for role in ("intro", "related", "method", "experiments", "discussion", "conclusion"):
        paragraphs = prose.paragraphs(role, words)
        sections.append(f"\\section{{{role.title()}}}\n\n" + "\n\n".join(map(" ".join, paragraphs)))
    text = (
        f"\\title{{{method.name}:\\\\ {method.subtitle}}}\n\n\\begin{{document}}\n\n\\maketitle\n\n"
        + "\n\n".join(sections)
        + "\n\n\\end{document}\n"
    )
    return f"arXiv-24{group:02d}.{10000 + slot * 7}v{slot + 1}.tex", text


def _checklist() -> dict[str, list[dict[str, object]]]:
    """8 aspects x 5 items; levels as "0: ..." strings and as {"0": ...} objects."""
    levels = ("0", "0.25", "0.5", "0.75", "1")
    return {
        aspect: [
            {
                "question": f"How well does the summary handle {aspect} point {i}?",
                "metrics": [f"{v}: level {v}" for v in levels]
                if n % 2
                else {v: f"level {v}" for v in levels},
            }
            for i in range(5)
        ]
        for n, aspect in enumerate((*ASPECTS, "innovation"))
    }


def write_benchmark(root: Path, groups: tuple[int, ...] = GROUPS) -> Path:
    """A clone of the published benchmark in miniature; returns the clone's root."""
    ds = root / "dataset"
    description = []
    for g in groups:
        folder = ds / "papers" / "cleaned" / f"group_{g}"
        folder.mkdir(parents=True)
        names = []
        for slot in (2, 0, 1):  # written out of order: samples list them sorted
            name, text = _paper(g, slot)
            (folder / name).write_text(text, encoding="utf-8")
            names.append(name)
        single = [
            {
                "paper": name,
                "topic": "data",
                "subtopic": "results",
                "question": f"What does {name} report, question {i}?",
                "answer": f"It reports result {i}.",
                "reference": f"Section Experiments of {name}",
            }
            for name in names
            for i in range(2)
        ]
        combine = [
            {**single[0], "paper": sorted(names), "question": f"How do the papers differ ({i})?"}
            for i in range(6)
        ]
        for kind, items in (("single", single), ("combine", combine)):
            (ds / "questions" / kind).mkdir(parents=True, exist_ok=True)
            (ds / "questions" / kind / f"group_{g}.json").write_text(json.dumps(items, indent=2))
        description.append(
            {
                "id": g,
                "source": f"https://arxiv.org/abs/2401.{g:05d}",
                "urls": [],
                "titles": [],
                "abstracts": [],
                "citations": [],
                "category": ["cs.CL"],
            }
        )
    (ds / "datasetDescription.json").write_text(json.dumps(description, indent=2))
    (ds / "checklist").mkdir()
    (ds / "checklist" / "checklist.json").write_text(json.dumps(_checklist(), indent=2))
    winrate = {a: [f"Which summary is better on {a}?"] * 5 for a in ASPECTS}
    (ds / "checklist" / "checklist_winrate.json").write_text(json.dumps(winrate))
    (ds / "checklist" / "checklist_winrate_struct.json").write_text("{not read")
    (ds / "prompt").mkdir()
    for name, text in TEMPLATES.items():
        (ds / "prompt" / name).write_text(text)
    (root / "src" / "template").mkdir(parents=True)
    for name, text in METHOD_TEMPLATES.items():
        (root / "src" / "template" / f"{name}.jinja").write_text(text)
    (root / "experiments").mkdir()
    for name, text in SCRIPTS.items():
        (root / "experiments" / name).write_text(text)
    return root


def break_benchmark(root: Path) -> Path:
    """Every bad case the import must survive, on a fresh fixture."""
    write_benchmark(root, (*GROUPS, 4, 5, 6))
    ds = root / "dataset"
    cleaned = ds / "papers" / "cleaned"
    next((cleaned / "group_4").glob("*.tex")).unlink()  # 2 papers
    (cleaned / "group_5" / _paper(5, 0)[0]).write_bytes(b"\\title{X}\n\xff\xfe latin-1 \xe9")
    short = _paper(6, 1, words=40)
    (cleaned / "group_6" / short[0]).write_text(short[1])  # under 2,000 words
    single = ds / "questions" / "single" / "group_2.json"
    items = json.loads(single.read_text())
    single.write_text(json.dumps([*items, {**items[0], "paper": "arXiv-9999.99999v1.tex"}]))
    (ds / "questions" / "combine" / "group_3.json").write_text('[{"paper": ')
    description = json.loads((ds / "datasetDescription.json").read_text())
    (ds / "datasetDescription.json").write_text(json.dumps([*description, {"id": 7}]))
    (ds / "prompt" / "checklist_winrate.jinja").write_text("{% for x in %}broken")
    return root


def _sql(data_dir: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(data_dir / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _counts(data_dir: Path) -> dict[str, int]:
    tables = [r[0] for r in _sql(data_dir, "SELECT table_name FROM duckdb_tables()")]
    return {t: _sql(data_dir, f"SELECT count(*) FROM {t}")[0][0] for t in tables}


# -- reading, pure -------------------------------------------------------------------------


def test_reader_reads_the_published_layout(tmp_path):
    root = write_benchmark(tmp_path / "clone")
    bench = read_longinoutbench(root, "lib")
    assert read_longinoutbench(root / "dataset", "lib").groups == bench.groups  # either PATH
    assert bench.problems == () and [g.number for g in bench.groups] == [2, 3, 10]
    group = bench.groups[0]
    assert list(group.files) == sorted(group.files)
    assert group.survey_id == "https://arxiv.org/abs/2401.00002"
    assert [q.kind for q in group.questions] == ["single"] * 6 + ["cross"] * 6
    paper = next(p for p in bench.papers if p.paper_id == "2402.10000v1")
    assert paper.title.startswith(f"{TOPICS[2].methods[0].name}: ")
    assert "\\" not in paper.title and paper.text.startswith("\\title{")
    assert paper.main_file == "dataset/papers/cleaned/group_2/arXiv-2402.10000v1.tex"
    assert "\\begin{document}" not in header_stripped(paper).text
    assets = {a.name: a.content for a in bench.assets}
    assert sorted(assets) == sorted(
        ["task", "qa_answer", "qa_judge", "checklist", "winrate"]
        + ["checklist.json", "checklist_winrate.json", "description.json"]
        + [*METHOD_TEMPLATES, "checklist_system", "qa_answer_suffix"]
    )
    pack = PromptPack.from_assets("lib", assets)  # both level shapes parse
    assert len(pack.checklist) == 8 and all(len(i) == 5 for i in pack.checklist.values())
    assert "<paper 2>" in pack.render("task", papers=["a", "b"], length=4000)
    # the method templates as written, the scripts' strings read from their literals
    assert pack.extras["write_step"] == METHOD_TEMPLATES["write_step"]
    assert pack.extras["checklist_system"] == "FIXTURE-SYSTEM: grade each item."
    assert pack.extras["qa_answer_suffix"] == " FIXTURE-SUFFIX."


def test_a_clone_lacking_a_script_or_template_says_so_in_one_line(tmp_path):
    root = write_benchmark(tmp_path / "clone", (2,))
    (root / "experiments" / "quality_score.py").unlink()
    (root / "experiments" / "consistency_score.py").write_text("x = 'no message here'\n")
    (root / "src" / "template" / "plan.jinja").write_text("{{ instruction }} {{ outline }}")
    bench = read_longinoutbench(root, "lib")
    lines = {q.item_id: q.detail for q in bench.problems}
    assert lines == {
        "lib/experiments/quality_score.py#checklist_system": "experiments/quality_score.py: "
        "missing: checklist_system absent, lilo's own prompt stands in",
        "lib/experiments/consistency_score.py#qa_answer_suffix": "experiments/"
        "consistency_score.py: no sentence appended to the QA answer prompt as a string "
        "literal: qa_answer_suffix absent, lilo's own prompt stands in",
        "lib/src/template/plan.jinja": "src/template/plan.jinja: uses outline; lilo renders "
        "it with instruction, keys, plan, restatement, step, text, written: lilo's stands in",
    }
    names = {a.name for a in bench.assets}
    assert not names & {"plan", "checklist_system", "qa_answer_suffix"}
    assert "write_step" in names


def test_reader_reports_each_bad_case_on_one_line(tmp_path):
    bench = read_longinoutbench(break_benchmark(tmp_path / "clone"), "lib")
    by_reason = {q.reason: q for q in bench.problems}
    assert sorted(by_reason) == sorted(
        ["group_size", "not_utf8", "unknown_paper", "malformed_json", "missing_group"]
        + ["bad_template"]
    )
    assert all("\n" not in q.detail and q.stage == "import" for q in bench.problems)
    assert by_reason["group_size"].item_id == "lib/group_4"
    assert by_reason["group_size"].detail.startswith("dataset/papers/cleaned/group_4: 2 papers")
    assert by_reason["unknown_paper"].item_id == "lib/questions/single/group_2.json#6"
    assert by_reason["malformed_json"].detail.startswith("dataset/questions/combine/group_3.json")
    assert "id 7" in by_reason["missing_group"].detail
    assert by_reason["bad_template"].detail.startswith("dataset/prompt/checklist_winrate.jinja")
    assert bench.stand_ins == ("winrate",)
    assert [g.number for g in bench.groups] == [2, 3, 5, 6, 10]


def test_bad_checklists_and_unknown_template_variables_are_not_stored(tmp_path):
    root = write_benchmark(tmp_path / "clone", (2,))
    checklist = _checklist()
    checklist["data"][0]["metrics"] = ["0: none", "1: all"]
    (root / "dataset/checklist/checklist.json").write_text(json.dumps(checklist))
    (root / "dataset/prompt/gpt_qa.jinja").write_text("{{ paper }} {{ context }}")
    bench = read_longinoutbench(root, "lib")
    assert {q.reason for q in bench.problems} == {"bad_checklist", "bad_template"}
    assert "data[0]" in next(q.detail for q in bench.problems if q.reason == "bad_checklist")
    assert "uses context" in next(q.detail for q in bench.problems if q.reason == "bad_template")
    assert set(bench.stand_ins) == {"qa_answer", "checklist.json"}


def test_files_that_link_out_of_the_clone_are_one_problem_each_and_not_read(tmp_path):
    """A template, a paper, a question file, a group folder, a method template and a script
    that link to files outside the clone: each is one line naming it, and none of their text
    is read; links within the clone, and a clone reached through a link, read as usual."""
    root = write_benchmark(tmp_path / "clone", (2, 3, 10))
    private = tmp_path / "private"
    private.mkdir()
    ds = root / "dataset"
    paper = next((ds / "papers/cleaned/group_2").glob("*.tex"))
    linked = {
        "dataset/prompt/gpt_qa.jinja": "PRIVATE {{ paper }} {{ question }}",
        f"dataset/papers/cleaned/group_2/{paper.name}": "\\title{PRIVATE}\n" + "PRIVATE " * 3000,
        "dataset/questions/single/group_3.json": '[{"paper": "x", "question": "PRIVATE"}]',
        "src/template/plan.jinja": "PRIVATE {{ instruction }}",
        "experiments/quality_score.py": 'm = [{"role": "system", "content": "PRIVATE"}]',
    }
    for n, (rel, text) in enumerate(linked.items()):
        (private / f"{n}.txt").write_text(text)
        (root / rel).unlink()
        (root / rel).symlink_to(private / f"{n}.txt")
    group = ds / "papers/cleaned/group_10"
    group.rename(private / "group_10")
    group.symlink_to(private / "group_10")
    (ds / "prompt/judge_qa.jinja").rename(root / "judge.jinja")  # a link within the clone
    (ds / "prompt/judge_qa.jinja").symlink_to(Path("../../judge.jinja"))
    (tmp_path / "via-link").symlink_to(root)

    bench = read_longinoutbench(tmp_path / "via-link", "lib")
    outside = {q.item_id: q.detail for q in bench.problems if q.reason == "link_outside"}
    expected = [*linked, "dataset/papers/cleaned/group_10"]
    assert sorted(outside) == sorted(
        "lib/" + rel.removeprefix("dataset/") for rel in expected if rel.startswith("dataset/")
    )
    for rel, detail in outside.items():
        assert detail.startswith(
            f"dataset/{rel.removeprefix('lib/')}: a link out of via-link/ (to "
        )
    scripts = {q.item_id: q.detail for q in bench.problems if q.reason != "link_outside"}
    assert (
        "src/template/plan.jinja: a link out of via-link/" in scripts["lib/src/template/plan.jinja"]
    )
    assert "a link out of via-link/" in scripts["lib/experiments/quality_score.py#checklist_system"]
    dataset = build_dataset(bench, [], datetime(2026, 1, 1))
    # group_2 lost a paper, group_10 is outside
    assert [s.sample_id for s in dataset.samples] == ["lib/group_3"]
    read = [a.content for a in bench.assets] + [p.text for p in bench.papers]
    read += [q.question for g in bench.groups for q in g.questions]
    assert not any("PRIVATE" in text for text in read)
    assert "judge_qa" not in bench.stand_ins and "qa_answer" in bench.stand_ins


def _flattened(root: Path) -> Path:
    """The fixture with its dataset/ folder's files at the clone's root (no dataset/)."""
    for entry in (root / "dataset").iterdir():
        entry.rename(root / entry.name)
    (root / "dataset").rmdir()
    return root


def test_the_folder_named_is_the_boundary_also_without_a_dataset_folder(tmp_path):
    """A clone whose benchmark files sit at its root: a paper that links to a file beside
    the clone (inside the clone's parent, outside the folder named) is one problem, and
    none of its text is read."""
    root = _flattened(write_benchmark(tmp_path / "clone", (2, 3)))
    (tmp_path / "id_rsa").write_text("\\title{KEY}\n" + "PRIVATE-KEY " * 3000)
    paper = next((root / "papers/cleaned/group_2").glob("*.tex"))
    paper.unlink()
    paper.symlink_to(Path("../../../../id_rsa"))

    bench = read_longinoutbench(root, "lib")
    outside = [q.detail for q in bench.problems if q.reason == "link_outside"]
    assert outside == [
        f"papers/cleaned/group_2/{paper.name}: a link out of clone/ (to {tmp_path / 'id_rsa'}): "
        "file skipped"
    ]
    assert not any("PRIVATE-KEY" in p.text for p in bench.papers)
    samples = build_dataset(bench, [], datetime(2026, 1, 1)).samples
    assert [s.sample_id for s in samples] == ["lib/group_3"]


def test_a_hard_link_is_one_problem_and_not_read_unless_allowed(tmp_path):
    """A paper and a template that are hard links (a second name of any file the user can
    read) are one problem each; `clone_hard_links` reads them (a user's own tree)."""
    root = write_benchmark(tmp_path / "clone", (2, 3))
    paper = next((root / "dataset/papers/cleaned/group_2").glob("*.tex"))
    template = root / "dataset/prompt/gpt_qa.jinja"
    for n, path in enumerate((paper, template)):
        private = tmp_path / f"private-{n}"
        private.write_text(path.read_text().replace("\\title{", "\\title{PRIVATE "))
        path.unlink()
        os.link(private, path)

    bench = read_longinoutbench(root, "lib")
    hard = sorted(q.detail for q in bench.problems if q.reason == "hard_link")
    assert hard == sorted(
        f"{p.relative_to(root)}: a hard link (2 names, any file of the disk may be one): "
        "file skipped"
        for p in (paper, template)
    )
    samples = build_dataset(bench, [], datetime(2026, 1, 1)).samples
    assert [s.sample_id for s in samples] == ["lib/group_3"] and "qa_answer" in bench.stand_ins
    allowed = read_longinoutbench(root, "lib", hard_links=True)
    assert not [q for q in allowed.problems if q.reason == "hard_link"]
    assert len(build_dataset(allowed, [], datetime(2026, 1, 1)).samples) == 2


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{{ papers|attr('__class__') }}", "uses the filter attr on line 1"),
        ("{{ length.__class__ }}", "uses the attribute __class__ on line 1"),
        ("{{ papers[0] }}", "uses a subscript on line 1"),
        ("\n{{ papers.pop() }}", "uses a call on line 2"),
        ("{{ 'x' * 9 }}", "uses {% mul %} on line 1"),
        ("{% include 'other.jinja' %}", "uses {% include %} on line 1"),
        ("{% macro m() %}{% endmacro %}", "uses {% macro %} on line 1"),
        (
            "{{ papers|join(' ') }} {{ context }}",
            "uses context; lilo renders it with length, papers",
        ),
    ],
)
def test_a_template_using_more_than_its_variables_and_plain_filters_is_refused(template, why):
    assert template_problem(template, frozenset({"papers", "length"})).startswith(why)


_LOOP = "{% for a in papers|join|list %}"
BOMBS = {
    "doubling a string": "{% set a = papers|join %}" + "{% set a = a ~ a %}" * 31 + "{{ a }}",
    "doubling a list": "{% set l = papers|list %}" + "{% set l = l + l %}" * 31 + "{{ l }}",
    "summing lists": "{% set l = papers|list %}" + "{% set l = [l, l]|sum(start=[]) %}" * 31,
    "nested loops": _LOOP * 4 + "{% endfor %}" * 4,
}


@pytest.mark.parametrize("name", BOMBS)
def test_a_template_that_would_exhaust_memory_or_time_is_refused(name, tmp_path):
    """Each is one problem line at import (a trial render with paper-sized inputs stops at
    its bound), and rendering one all the same stops at its bound."""
    from lilo.tasks.prompt_packs import TemplateTooCostly, prompt_template

    why = template_problem(BOMBS[name], frozenset({"papers", "length"}))
    bound = "took over 2 s" if name == "nested loops" else "built a value of over 2,"
    assert why.startswith("rendering ") and bound in why and why.endswith("paper-sized inputs")
    root = write_benchmark(tmp_path / "clone", (2,))
    (root / "dataset/prompt/survey_gen.jinja").write_text(BOMBS[name])
    bench = read_longinoutbench(root, "lib")
    assert [q.detail for q in bench.problems if q.reason == "bad_template"] == [
        f"dataset/prompt/survey_gen.jinja: {why}: not stored, lilo's task template stands in"
    ]
    if name != "nested loops":  # the deadline of a render is 10 s: the trial's shows it
        with pytest.raises(TemplateTooCostly, match="built a value of over 1,000,0"):
            prompt_template(BOMBS[name]).render(papers=["a few words"], length=4000)


def test_deep_nesting_is_one_problem_naming_its_file_and_the_rest_imports(tmp_path):
    """200,000 `[` in datasetDescription.json and checklist.json, a questions file of
    100,000 nested objects and a template of 3,000 nested parentheses: lilo before ended the
    whole import with a RecursionError naming no file."""
    root = write_benchmark(tmp_path / "clone", (2, 3))
    ds = root / "dataset"
    (ds / "datasetDescription.json").write_text("[" * 200_000)
    (ds / "checklist/checklist.json").write_text("[" * 200_000)
    (ds / "questions/single/group_2.json").write_text('{"a":' * 100_000)
    deep = "{{ " + "(" * 3000 + "paper" + ")" * 3000 + " }}{{ question }}"
    (ds / "prompt/gpt_qa.jinja").write_text(deep)
    bench = read_longinoutbench(root, "lib")
    deep_lines = sorted(q.detail for q in bench.problems if "nested too deeply" in q.detail)
    assert deep_lines == [
        "dataset/checklist/checklist.json: malformed JSON (nested too deeply): not stored, "
        "lilo's stands in",
        "dataset/datasetDescription.json: malformed JSON (nested too deeply): file skipped",
        "dataset/prompt/gpt_qa.jinja: nested too deeply: not stored, lilo's qa_answer "
        "template stands in",
        "dataset/questions/single/group_2.json: malformed JSON (nested too deeply): file skipped",
    ]
    assert len(build_dataset(bench, [], datetime(2026, 1, 1)).samples) == 2


def test_what_the_published_templates_use_is_allowed():
    template = (
        "{% for paper in papers %}<paper {{ loop.index }}>{{ paper|trim }}</paper>"
        "{% if not loop.last %}\n{% endif %}{% endfor %}{% set n = length %}"
        "{{ n }} {{ length|default(4000) }} {{ 'a' ~ length if length is number else '' }}"
    )
    assert template_problem(template, frozenset({"papers", "length"})) == ""


def test_missing_folders_and_bad_names_are_errors(tmp_path):
    with pytest.raises(BenchmarkError, match="not a folder"):
        read_longinoutbench(tmp_path / "nowhere", "lib")
    (tmp_path / "clone" / "dataset").mkdir(parents=True)
    with pytest.raises(BenchmarkError, match="papers/cleaned not found"):
        read_longinoutbench(tmp_path / "clone", "lib")
    with pytest.raises(BenchmarkError, match="dataset name"):
        read_longinoutbench(write_benchmark(tmp_path / "ok"), "no/slash")


# -- the flow, through the CLI -------------------------------------------------------------


def _import(capsys, path: Path, data: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["import", "longinoutbench", str(path), "--data-dir", str(data), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_import_writes_the_version_once(tmp_path, capsys, prefect_harness):
    data = tmp_path / "data"
    code, out, _ = _import(capsys, write_benchmark(tmp_path / "clone"), data)
    assert code == 0, out
    assert "groups:   3 folders, 3 samples" in out
    assert "papers:   9 read, 9 distinct papers kept" in out
    assert "QA pairs: 18 single, 18 cross" in out and "assets:   15" in out
    assert "problems: 0" in out and "next: lilo run --dataset longinoutbench --samples 3" in out
    samples = _sql(
        data, "SELECT sample_id, paper_ids, topic, survey_id, group_kind FROM dim_samples"
    )
    assert [s[0] for s in samples] == [f"longinoutbench/group_{g}" for g in GROUPS]
    assert all(list(s[1]) == sorted(s[1]) and s[2] == "data" and s[4] == "import" for s in samples)
    # the order each group folder's listing gave, which the reference reads
    listed = dict(_sql(data, "SELECT sample_id, listing_order FROM dim_samples"))
    for g in GROUPS:
        folder = tmp_path / "clone" / "dataset" / "papers" / "cleaned" / f"group_{g}"
        names = [f for f in os.listdir(folder) if f.endswith(".tex")]
        assert listed[f"longinoutbench/group_{g}"] == [paper_id_of(f) for f in names]
    version = _sql(data, "SELECT number, n_samples, n_papers, surveys FROM dim_dataset_versions")
    assert version == [(1, 3, 9, [f"https://arxiv.org/abs/2401.{g:05d}" for g in GROUPS])]
    pair = _sql(
        data,
        "SELECT status, reviewer, round, kind, reason, evidence, prompt_version FROM fct_qa_pairs "
        "WHERE reason = 'questions/combine/group_10.json#5'",
    )[0]
    assert pair[:4] == ("approved", "import:longinoutbench", 1, "cross")
    assert pair[6] == "import:longinoutbench"
    assert [e["paper"] for e in json.loads(pair[5])] == [1, 2, 3]
    decisions = _sql(data, "SELECT DISTINCT action, reviewer, channel FROM fct_qa_decisions")
    assert decisions == [("approve", "import:longinoutbench", "file")]
    assert _sql(data, "SELECT count(*), min(cleaner_version) FROM dim_papers") == [
        (9, "import:longinoutbench")
    ]
    assert _sql(data, "SELECT count(*) FROM fct_qa_decisions")[0][0] == 36
    assert _sql(data, "SELECT flow, status FROM runs") == [("import", "completed")]
    before = _counts(data)

    code, out, _ = _import(capsys, write_benchmark(tmp_path / "again"), data)
    assert code == 0 and "rows added: 0: nothing new" in out
    assert _counts(data) == {**before, "runs": before["runs"] + 1}


def test_a_paper_id_another_import_holds_with_other_text_gets_an_id_of_its_own(
    tmp_path, capsys, prefect_harness
):
    """Two clones with one paper id holding other text: each version's samples read its
    own clone's text, the first import's is unchanged, and a second import adds nothing."""
    data = tmp_path / "data"
    first = write_benchmark(tmp_path / "first", (2, 3))
    assert _import(capsys, first, data, "--name", "first")[0] == 0
    second = write_benchmark(tmp_path / "second", (2, 3))
    paper = next((second / "dataset/papers/cleaned/group_2").glob("*.tex"))
    paper.write_text(paper.read_text().replace("\\section{Intro}", "\\section{Intro} SECOND"))
    before = dict(_sql(data, "SELECT paper_id, text FROM dim_papers"))

    code, out, _ = _import(capsys, second, data, "--name", "second")
    assert code == 0, out
    own = f"{paper_id_of(paper.name)}@{hashlib.sha256(paper.read_bytes()).hexdigest()[:12]}"
    assert f"stored under ids of their own text: {own}" in out
    texts = dict(_sql(data, "SELECT paper_id, text FROM dim_papers"))
    assert {k: texts[k] for k in before} == before and "SECOND" in texts[own]
    samples = dict(_sql(data, "SELECT sample_id, paper_ids FROM dim_samples"))
    assert own in samples["second/group_2"] and own not in samples["first/group_2"]
    assert samples["second/group_3"] == samples["first/group_3"]  # the same text: shared
    named = _sql(data, "SELECT paper_ids FROM fct_qa_pairs WHERE sample_id = 'second/group_2'")
    assert any(own in ids for (ids,) in named)
    counts = _counts(data)
    assert _import(capsys, second, data, "--name", "second")[0] == 0
    assert _counts(data) == {**counts, "runs": counts["runs"] + 1}


def test_bad_input_imports_the_rest(tmp_path, capsys, prefect_harness):
    data, clone = tmp_path / "data", break_benchmark(tmp_path / "clone")
    code, out, _ = _import(capsys, clone / "dataset", data, "--name", "lib")
    assert code == 0, out
    # group_6's short paper is imported as published, with a warning
    assert "groups:   6 folders, 4 samples" in out
    assert "papers:   15 read, 12 distinct papers kept" in out
    assert "QA pairs: 24 single, 18 cross" in out
    assert "\n    short_text: 1 paper\n" in out
    # PATH is the dataset folder: the clone's scripts, above it, are not read
    assert "lilo's own stands in for: winrate" in out and "problems: 14" in out
    assert "\n    src/template/plan.jinja: missing: lilo's stands in" in out
    rows = dict(_sql(data, "SELECT item_id, reason FROM quarantine WHERE stage = 'import'"))
    outside = {k: rows.pop(k) for k in list(rows) if "/src/" in k or "/experiments/" in k}
    assert len(outside) == 7 and set(outside.values()) == {"method_template", "script_string"}
    assert rows == {
        "lib/group_4": "group_size",
        "lib/group_5": "paper_unreadable",
        "lib/group_7": "missing_group",
        "2405.10000v1": "not_utf8",
        "lib/questions/single/group_2.json#6": "unknown_paper",
        "lib/questions/combine/group_3.json": "malformed_json",
        "lib/prompt/checklist_winrate.jinja": "bad_template",
    }
    for line in (
        "papers/cleaned/group_4: 2 papers, a sample needs 3: group skipped",
        "questions/single/group_2.json#6: arXiv-9999.99999v1.tex not in group_2",
        "questions/combine/group_3.json: malformed JSON",
        "datasetDescription.json: id 7 has no folder papers/cleaned/group_7",
        "papers/cleaned/group_5/arXiv-2405.10000v1.tex: not UTF-8",
    ):
        assert f"\n    {line}" in out
    assert _sql(data, "SELECT name FROM dim_dataset_assets WHERE name = 'winrate'") == []
    warned = _sql(data, "SELECT sample_id, paper_id, kind FROM benchmark_warnings")
    assert warned == [("lib/group_6", "2406.10007v2", "short_text")]
    before = _counts(data)
    code, out, _ = _import(capsys, clone / "dataset", data, "--name", "lib")
    assert code == 0 and "rows added: 0: nothing new" in out
    assert _counts(data) == {**before, "runs": before["runs"] + 1}


def test_a_failed_write_leaves_nothing_half_written(tmp_path, monkeypatch):
    from lilo.flows._stage import StageReport
    from lilo.flows.import_benchmark import _write
    from lilo.tasks.config_loading import load_settings
    from lilo.tasks.validate import validate_papers
    from lilo.warehouse import Warehouse

    settings = load_settings(overrides={"data_dir": str(tmp_path / "data")})
    bench = read_longinoutbench(write_benchmark(tmp_path / "clone"), "lib")
    validation = validate_papers([header_stripped(p) for p in bench.papers], settings.clean)
    assert validation.quarantine == []
    dataset = build_dataset(bench, [], datetime(2026, 1, 1))
    upsert = Warehouse.upsert

    def failing(self, table, *args, **kwargs):
        if table == "dim_dataset_assets":  # after papers, samples, version and QA pairs
            raise OSError("disk full")
        return upsert(self, table, *args, **kwargs)

    monkeypatch.setattr(Warehouse, "upsert", failing)
    with Warehouse(settings.db_path) as wh:
        with pytest.raises(OSError, match="disk full"):
            _write(
                wh,
                StageReport("import", "r1"),
                settings,
                bench,
                dataset,
                validation,
                datetime(2026, 1, 1),
            )
    counts = _counts(tmp_path / "data")
    schema = {"schema_migrations", "schema_models"}  # the warehouse's own bookkeeping
    assert {t: n for t, n in counts.items() if n and t not in schema} == {}


def test_exit_codes(tmp_path, capsys, prefect_harness):
    data = tmp_path / "data"
    code, _, err = _import(capsys, tmp_path / "nowhere", data)
    assert code == 2 and err.count("\n") == 1 and "is not a folder" in err
    (tmp_path / "empty" / "dataset").mkdir(parents=True)
    code, _, err = _import(capsys, tmp_path / "empty", data)
    assert code == 2 and err.count("\n") == 1 and "papers/cleaned not found" in err
    pairs = write_benchmark(tmp_path / "pairs", (2,))
    next((pairs / "dataset/papers/cleaned/group_2").glob("*.tex")).unlink()
    code, out, _ = _import(capsys, pairs, data, "--name", "pairs")
    assert code == 1 and "nothing imported" in out
    assert _sql(data, "SELECT count(*) FROM dim_samples") == [(0,)]
    _import(capsys, write_benchmark(tmp_path / "three"), data, "--name", "taken")
    code, _, err = _import(
        capsys, write_benchmark(tmp_path / "two", (2, 3)), data, "--name", "taken"
    )
    assert code == 1 and "versions are immutable" in err


def test_questions_are_kept_verbatim_and_the_listing_order_recorded(tmp_path):
    """The reference renders the published question and answer as they are, trailing
    whitespace included (3 of the 1,200 published pairs end in it); and it reads a group's
    papers in its folder's listing order, which the import records beside the sorted one."""
    root = write_benchmark(tmp_path / "clone")
    single = root / "dataset" / "questions" / "single" / "group_2.json"
    items = json.loads(single.read_text())
    items[0]["question"] += " \n"
    items[0]["answer"] += "\t "
    single.write_text(json.dumps(items))
    bench = read_longinoutbench(root, "lib")
    first = bench.groups[0].questions[0]
    assert first.question == items[0]["question"] and first.answer == items[0]["answer"]
    folder = root / "dataset" / "papers" / "cleaned" / "group_2"
    group = bench.groups[0]
    assert list(group.listing) == [f for f in os.listdir(folder) if f.endswith(".tex")]
    assert sorted(group.listing) == list(group.files)


def test_imported_pairs_export_for_review_and_a_forged_reviewer_line_is_refused(
    tmp_path, capsys, prefect_harness
):
    """An imported pair's evidence names its papers by position (integers): `lilo review
    export` writes them as they are and `import` reads them back; a `--reviewer` holding a
    line break is one usage line, and nothing is recorded."""
    data = tmp_path / "data"
    assert _import(capsys, write_benchmark(tmp_path / "clone"), data)[0] == 0
    review = ["review", "--dataset", "longinoutbench", "--data-dir", str(data)]
    exported = tmp_path / "pairs.jsonl"
    code = main([*review, "export", str(exported), "--status", "approved"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(lines) == 36 and {type(e["paper"]) for e in lines[0]["evidence"]} == {int}
    exported.write_text(json.dumps({**lines[0], "decision": "reject", "reason": "vague"}) + "\n")
    forged = "eve\nlilo: all pairs approved"
    code = main([*review, "--reviewer", forged, "import", str(exported)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "reviewer name 'eve lilo: all pairs approved' holds control characters" in err
    assert _sql(data, "SELECT count(*) FROM fct_qa_decisions WHERE action = 'reject'") == [(0,)]
    assert main([*review, "--reviewer", "ana", "import", str(exported)]) == 0
    assert "1 decision recorded" in capsys.readouterr().out
    assert _sql(data, "SELECT reviewer FROM fct_qa_decisions WHERE action = 'reject'") == [("ana",)]
    # bob's line, with no time it was shown, contradicts ana's decision: a conflict, said;
    # with --replace it is recorded over hers.
    line = {k: v for k, v in lines[0].items() if k != "shown_at"}
    exported.write_text(json.dumps({**line, "decision": "approve"}) + "\n")
    assert main([*review, "--reviewer", "bob", "import", str(exported)]) == 1
    assert "conflicts with the reject by ana (file) at " in capsys.readouterr().err
    assert main([*review, "--reviewer", "bob", "import", str(exported), "--replace"]) == 0
    status = f"SELECT status, reviewer FROM fct_qa_pairs WHERE qa_id = '{lines[0]['qa_id']}'"
    assert _sql(data, status) == [("approved", "bob")]
