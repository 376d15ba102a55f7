"""`lilo run --dataset NAME --samples N` on an imported benchmark: no fetching, the
benchmark's own prompts rendered for the task, the QA answer and judge and the checklist,
a judge named on every score and on the leaderboard, n scored / n expected per cell.

The templates below are written here, in the published benchmark's structure (numbered
paper tags, a `<keys>` block, `<paper>`/`<question>`, `<gold>`/`<predict>`, a ```rules
block, a `"checklists":` list answered with checklist_id/evaluation_score or winner): the
real ones have no license and never enter this repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import copy_imported_longinoutbench
from test_import_benchmark import write_benchmark

from lilo.flows.cli import main

# The methods embed through the loopback server: what this module checks no vector decides.
pytestmark = pytest.mark.usefixtures("loopback_embeddings")

RULES = "```rules\n- Title, introduction, each paper, comparison, conclusion.\n- Own words.\n```"
TEMPLATES = {
    "survey_gen.jinja": (
        "You are a researcher. Read these papers and summarise them.\n\n"
        "{% for paper in papers %}\n<paper {{ loop.index }}>\n{{ paper }}\n"
        "</paper {{ loop.index }}>\n{% endfor %}\n"
        "Steps: a title, an introduction, each paper, a comparison, a conclusion.\n\n"
        "<keys>\nKEY-POINTS-OF-THE-FIXTURE:\n- Use Markdown for data.\n- Compare in tables.\n"
        "</keys>\n\nTotal word count should be about {{ length }} words."
    ),
    "gpt_qa.jinja": (
        "Answer from the text only.\n\nText:\n<paper>\n{{ paper }}\n</paper>>\n\n"
        "Question:\n<question>\n{{ question }}\n</question>\n\n"
        'Between 50 and 200 characters; otherwise say "I don\'t know".'
    ),
    "judge_qa.jinja": (
        "Compare the predicted answer with the standard one.\n\n<question>\n{{ question }}\n"
        "</question>\n\n<gold>\n{{ answer }}\n</gold>\n\n<predict>\n{{ predict }}\n</predict>>\n\n"
        'Output: {"reason": "...", "score": "0.5"} with a score of 0, 0.25, 0.5, 0.75 or 1.'
    ),
    "checklist.jinja": (
        f"Grade the survey on each checklist.\n\n{RULES}\n\nThe survey:\n{{{{ response }}}}\n\n"
        'The survey has ended.\n\n"checklists": {{checklists}}\n\n'
        'Reply [{"checklist_id": "...", "reason": "...", "evaluation_score": "..."}] '
        "for all {num_checklist} items."
    ),
    "checklist_winrate.jinja": (
        f"Compare two surveys.\n\n{RULES}\n\nThe survey given by A:\n{{{{ response_A }}}}\n\n"
        "The survey given by B:\n{{ response_B }}\n\nThey have ended.\n\n"
        '"checklists": {{ checklists }}\n\nReply [{"checklist_id": "...", "reason": "...", '
        '"winner": "A, B or E"}] for all {{ num_checklist }} items.'
    ),
}


@pytest.fixture(scope="module")
def run(
    tmp_path_factory, imported_longinoutbench, loopback_embeddings
) -> tuple[Path, int, int, tuple[int, int]]:
    """The imported benchmark (its clone beside it), run twice with five methods: its data
    folder, the two exit codes and the embedding requests each run sent."""
    root = tmp_path_factory.mktemp("bench-run")
    data = copy_imported_longinoutbench(imported_longinoutbench, root)
    args = ["run", "--dataset", "longinoutbench", "--samples", "2", "--data-dir", str(data)]
    args += ["--target-words", "1000", "--set", "judge.backend=offline"]
    args += ["--set", "winrate_against=ral_writer"]
    args += ["--methods", "single,agentwrite,compress,ral_writer,agentwrite[sees-written]"]
    first = main(args)
    asked = len(loopback_embeddings.requests)
    second = main(args)
    return data, first, second, (asked, len(loopback_embeddings.requests) - asked)


def _sql(data: Path, query: str, file: str = "published/lilo.duckdb") -> list[tuple]:
    con = duckdb.connect(str(data / file), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_run_on_the_imported_version_renders_its_prompts(run):
    data, first, *_ = run
    assert first == 0
    # Full prompts stay in the warehouse; the published copy leaves them out.
    requests = [
        json.loads(r[0]) for r in _sql(data, "SELECT request FROM llm_cache", "lilo.duckdb")
    ]
    prompts = [m["content"] for r in requests for m in r["messages"]]
    tasks = [p for p in prompts if "Total word count should be about 1000 words" in p]
    assert tasks and all("<paper 1>" in p for p in tasks)  # the benchmark's paper tags
    # RAL-Writer restates the benchmark's key requirements after its first step
    assert any(p.count("KEY-POINTS-OF-THE-FIXTURE") == 2 for p in prompts)
    assert any(p.startswith("Answer from the text only.") for p in prompts)
    assert any(p.startswith("Compare the predicted answer") for p in prompts)
    assert any(p.startswith("Grade the survey on each checklist.") for p in prompts)
    # the benchmark's checklist: its aspects are the quality rows
    aspects = {
        r[0] for r in _sql(data, "SELECT score FROM fct_scores WHERE score LIKE 'quality_%'")
    }
    assert "quality_structure" in aspects and "quality_instruction" in aspects


def test_leaderboard_names_the_judge_and_counts_each_cell(run):
    data, *_ = run
    rows = _sql(data, "SELECT variant, target_words, judge, scored, expected FROM leaderboard")
    assert {r[0] for r in rows} == {
        "single",
        "agentwrite",
        "compress[extractive]",
        "ral_writer",
        "agentwrite[sees-written]",
    }
    assert all(r[1] == 1000 and r[2] == "offline:offline-extractive-v1" for r in rows)
    assert all(r[4] == 2 for r in rows)  # --samples 2 of the 3 imported
    assert _sql(data, "SELECT count(*) FROM dim_samples")[0][0] == 3
    judges = _sql(data, "SELECT DISTINCT judge FROM fct_scores WHERE judge IS NOT NULL")
    assert judges == [("offline:offline-extractive-v1",)]
    assert _sql(data, "SELECT count(*) FROM winrate")[0][0] == 4  # 4 methods vs RAL-Writer


def test_a_second_run_makes_no_calls(run):
    data, _, second, (embedded, embedded_again) = run
    assert second == 0
    latest = _sql(data, "SELECT llm_calls_made FROM runs ORDER BY started_at DESC LIMIT 1")
    assert latest == [(0,)]
    assert embedded > 0 and embedded_again == 0  # nor for a vector: they are cached too


def _writer_prompts(data: Path, method: str) -> list[str]:
    rows = _sql(
        data,
        "SELECT c.purpose, r.request FROM fct_llm_calls AS c JOIN llm_cache AS r USING (key) "
        f"WHERE c.purpose LIKE 'generate:{method}:%:step%' ORDER BY c.purpose",
        "lilo.duckdb",
    )
    return [json.loads(r[1])["messages"][0]["content"] for r in rows]


def test_agentwrite_as_run_shows_an_empty_written_block_and_its_variant_the_text(run):
    data, *_ = run
    as_run = [p for p in _writer_prompts(data, "agentwrite") if "<written>" in p]
    assert as_run and all("<written>\n\n</written>" in p for p in as_run)
    assert all(p.startswith("Task:\n<instruction>") for p in as_run)  # the benchmark's template
    corrected = [p for p in _writer_prompts(data, "agentwrite[sees-written]") if "<written>" in p]
    assert corrected and all("<written>\n\n</written>" not in p for p in corrected)


def test_each_method_draws_its_own_plan(run):
    data, *_ = run
    rows = _sql(
        data,
        "SELECT split_part(c.purpose, ':', 2) AS method, c.key, r.request "
        "FROM fct_llm_calls AS c JOIN llm_cache AS r USING (key) "
        "WHERE c.purpose LIKE '%:plan' AND c.purpose LIKE '%group_2:1000:0:plan'",
        "lilo.duckdb",
    )
    keys = {method: key for method, key, _ in rows}
    prompts = {method: json.loads(r)["messages"] for method, _, r in rows}
    same = ("agentwrite", "ral_writer", "agentwrite[sees-written]")
    assert set(keys) == {*same, "compress[extractive]"}
    assert len({json.dumps(prompts[m]) for m in same}) == 1  # one prompt ...
    assert len(set(keys.values())) == 4  # ... and a draw for each method


def test_reference_prompts_bench_renders_each_template_and_diffs(run, tmp_path, capsys):
    from bench.reference_prompts import main as reference_prompts

    data, *_ = run
    clone = data.parent / "clone"
    code = reference_prompts([str(clone), "--data-dir", str(data)])
    out = capsys.readouterr().out
    # one line per template; a difference adds indented reference/lilo lines
    rows = [line for line in out.splitlines()[1:-1] if not line.startswith("    ")]
    lines = {line.split()[0]: line for line in rows}
    generation = ("survey_gen", "planner", "write_begin", "write_step")
    restate = ("write_begin_with_restate", "write_step_with_restate")
    for name in (*generation, *restate):
        assert lines[name].split()[1:] == ["identical", "(2", "prompts)"], out
    assert set(lines) == {*generation, *restate, "gpt_qa", "judge_qa", "checklist"}
    assert code == (1 if "differs" in out else 0)
    # a template edited in the clone: its first differing line is shown, exit 1
    edited = tmp_path / "clone"
    shutil.copytree(clone, edited)
    step = edited / "src" / "template" / "write_step.jinja"
    step.write_text(step.read_text().replace("So far:", "Text so far:"))
    assert reference_prompts([str(edited), "--data-dir", str(data)]) == 1
    out = capsys.readouterr().out
    assert (
        "write_step                 differs in 2 of 2 prompts, first longinoutbench/group_" in out
    )
    assert ": message 1 (user), line " in out
    assert "reference: 'Text so far:'" in out and "lilo:      'So far:'" in out


def test_reference_prompts_checks_the_imported_samples_whatever_else_the_warehouse_holds(
    run, tmp_path, capsys
):
    """The README's order: `lilo demo` first leaves its own samples and summaries in the
    warehouse; the check reads only the imported benchmark's, all of those run."""
    from bench.reference_prompts import main as reference_prompts

    data = tmp_path / "data"
    shutil.copytree(run[0], data)
    clone = run[0].parent / "clone"
    reference_prompts([str(clone), "--data-dir", str(run[0])])
    alone = capsys.readouterr().out
    con = duckdb.connect(str(data / "lilo.duckdb"))
    try:  # a demo's sample, sorting before the benchmark's, with a summary of each method
        con.execute(
            "INSERT INTO dim_samples SELECT * REPLACE ('demo/s1' AS sample_id, 'demo-v1' AS "
            "dataset_version, 'command' AS group_kind) FROM dim_samples LIMIT 1"
        )
        con.execute(
            "INSERT INTO fct_generations SELECT * REPLACE ('demo/s1' AS sample_id, "
            "generation_id || '-demo' AS generation_id) FROM fct_generations"
        )
    finally:
        con.close()
    code = reference_prompts([str(clone), "--data-dir", str(data)])
    out = capsys.readouterr().out
    assert out == alone and code in (0, 1)
    assert out.startswith("reference prompts for 2 imported samples")


def test_winrate_against_a_variant_compares_every_other_variant_with_that_one(run, tmp_path):
    """`winrate_against=agentwrite[sees-written]` is that variant, not every AgentWrite:
    plain `agentwrite` is one of the four judged against it."""
    data = tmp_path / "data"
    shutil.copytree(run[0], data)
    args = ["run", "--dataset", "longinoutbench", "--samples", "2", "--data-dir", str(data)]
    args += ["--target-words", "1000", "--set", "judge.backend=offline"]
    args += ["--set", "winrate_against=agentwrite[sees-written]"]
    args += ["--methods", "single,agentwrite,compress,ral_writer,agentwrite[sees-written]"]
    assert main(args) == 0
    pairs = _sql(
        data,
        "SELECT DISTINCT method_a FROM winrate WHERE method_b = 'agentwrite[sees-written]' "
        "ORDER BY 1",
    )
    assert pairs == [("agentwrite",), ("compress[extractive]",), ("ral_writer",), ("single",)]


def test_a_narrower_run_makes_a_version_of_what_it_asked_for(run, tmp_path, capsys):
    """After five variants on two samples, `--methods single,agentwrite --samples 1`
    publishes a version of exactly those two cells over that one sample (they were made
    already: no call), its scope printed under the leaderboard; the wider version stays
    as it was."""
    data = tmp_path / "data"
    shutil.copytree(run[0], data)
    wider = _sql(data, "SELECT max(version) FROM res_versions")[0][0]
    args = ["run", "--dataset", "longinoutbench", "--samples", "1", "--data-dir", str(data)]
    args += ["--target-words", "1000", "--set", "judge.backend=offline"]
    args += ["--methods", "single,agentwrite"]
    capsys.readouterr()
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    rows = _sql(data, "SELECT variant, scored, expected FROM leaderboard ORDER BY 1")
    assert rows == [("agentwrite", 1, 1), ("single", 1, 1)]
    assert _sql(
        data, f"SELECT count(*), min(expected) FROM res_leaderboard WHERE version = {wider}"
    ) == [(5, 2)]
    assert (
        "Scope: 1 of 3 samples of dataset longinoutbench; methods single, agentwrite; "
        "lengths 1k; backbone offline:offline-extractive-v1" in out
    )
    assert _sql(data, "SELECT llm_calls_made FROM runs ORDER BY started_at DESC LIMIT 1") == [(0,)]


# Code a template could run if it were compiled outside Jinja's sandbox: it writes a file.
ESCAPE = (
    "{% for c in length.__class__.__mro__[1].__subclasses__() %}"
    "{% if c.__name__=='_wrap_close' %}{{ c.__init__.__globals__['system']('id > MARK') }}"
    "{% endif %}{% endfor %}"
)


def test_a_benchmark_template_that_would_run_code_is_refused_and_never_runs(
    tmp_path, capsys, prefect_harness
):
    """The import refuses it with one line naming the file (lilo's task template stands
    in), and the run on the version runs no code."""
    mark = tmp_path / "ran"
    clone = write_benchmark(tmp_path / "clone", (2,))
    for name, text in TEMPLATES.items():
        (clone / "dataset" / "prompt" / name).write_text(text)
    template = clone / "dataset" / "prompt" / "survey_gen.jinja"
    line = template.read_text().count("\n") + 1  # the escape's, on the last line
    template.write_text(template.read_text() + ESCAPE.replace("MARK", str(mark)))
    data = tmp_path / "data"
    assert main(["import", "longinoutbench", str(clone), "--data-dir", str(data)]) == 0
    assert (
        f"dataset/prompt/survey_gen.jinja: uses a call on line {line}: a template may use only "
        "its variables, loop's counters and plain filters: not stored, lilo's task template "
        "stands in"
    ) in " ".join(capsys.readouterr().out.split())
    args = ["run", "--dataset", "longinoutbench", "--samples", "1", "--data-dir", str(data)]
    assert main([*args, "--methods", "single", "--target-words", "1000"]) == 0
    assert not mark.exists()


def test_a_stored_template_that_would_run_code_renders_in_the_sandbox(tmp_path):
    """A benchmark imported before its templates were checked: the pack's and the method
    templates render in Jinja's sandbox, which refuses the escape before it runs."""
    from jinja2.sandbox import SecurityError

    from lilo.tasks.methods._prompts import MethodPrompts
    from lilo.tasks.prompt_packs import PromptPack

    mark = tmp_path / "ran"
    escape = ESCAPE.replace("MARK", str(mark))
    pack = PromptPack.from_assets(
        "old", {"task": escape, "plan": escape.replace("length", "instruction")}
    )
    with pytest.raises(SecurityError, match="__class__"):
        pack.render("task", papers=["a"], length=1000)
    with pytest.raises(SecurityError, match="__class__"):
        MethodPrompts(pack).plan("write a survey")
    assert not mark.exists()
