"""The three literature methods end to end on one synthetic triplet at 4,000 words, offline,
with the reader's neglect on (docs/design.md §15): each runs, records its structure, keeps
planted facts of the papers, and appears on the leaderboard, position curve and cost view
by its variant. The full table is `python -m bench.methods_position`."""

from __future__ import annotations

import pytest

from lilo.flows._load import load_generations
from lilo.tasks.config_loading import load_settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import make_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import Generation, Sample, ScoreRow
from lilo.tasks.scoring import scored_by
from lilo.tasks.synthetic.known_answers import cleaned_triplet, locate, recall_by_bin
from lilo.warehouse import Warehouse
from lilo.warehouse.results import Expected, materialize_results

NEW = ("markov_cluster", "rapid", "longscope")
# Three generations on the synthetic triplet, its chunks embedded: the methods end to end.
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, dict]:
    """Each method's generation and its recall of the planted facts per third of the input."""
    root = tmp_path_factory.mktemp("methods")
    topic, papers, facts = cleaned_triplet(root)
    located = locate(papers, facts)
    settings = load_settings(
        None,
        {
            "data_dir": str(root / "data"),
            "llm.offline.middle_neglect": 1.0,
            "generate.longscope.preset": "quick",
        },
    )
    llm, embedder = make_client(settings), Embedder(settings.embedding, settings.data_dir)
    ids = tuple(p.paper_id for p in papers)
    sample = Sample("s1", "v1", ids, topic, "survey", sum(p.words for p in papers), "command")
    out = {}
    for name in NEW:
        gen = get_method(name, settings.generate, settings.llm, settings.embedding).run(
            Unit(sample, papers, 4000), llm, embedder, lilo_pack()
        )
        assert gen.error == "", gen.error
        out[gen.variant] = {"generation": gen, "recall": recall_by_bin(gen.text, located)}
    return out


def test_each_method_writes_from_its_recorded_structure(results):
    assert set(results) == {"markov_cluster", "rapid", "longscope[quick]"}
    for row in results.values():
        gen = row["generation"]
        assert gen.words > 1000 and gen.llm_calls > 5 and gen.tokens_in > 0
        # each keeps some of the papers' planted results (the facts are not all lost)
        assert sum(row["recall"].values()) > 0, gen.variant
    markov = results["markov_cluster"]["generation"].structure
    assert sorted(markov["path"]) == list(range(markov["k"])) and markov["path_exact"]
    # the most probable path follows the clusters' reading order more than it reverses it
    assert markov["kendall_tau"] > 0
    assert sum(markov["section_words"]) == 4000
    rapid = results["rapid"]["generation"].structure
    assert rapid["order_acyclic"] and sorted(rapid["order"]) == sorted(
        map(int, rapid["dependencies"])
    )
    scope = results["longscope[quick]"]["generation"]
    assert scope.structure["skeleton"].startswith("# ") and len(scope.structure["layers"]) == 1
    assert scope.method_args["layers"] == 1 and scope.variant == "longscope[quick]"


def test_structure_is_stored_and_the_views_show_each_variant(results, tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    gens: list[Generation] = [r["generation"] for r in results.values()]
    extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
    wh.upsert("fct_generations", gens, ("generation_id",), extra=extra)
    back = {g.method: g for g in load_generations(wh, ["s1"])}
    assert back["rapid"].structure == results["rapid"]["generation"].structure
    scores = [
        ScoreRow(g.generation_id, name, 50.0)
        for g in gens
        for name in ("length", "consistency", "quality", "single_pos1", "single_pos2")
    ]
    wh.upsert("fct_scores", scores, ("generation_id", "score"), extra={"run_id": "r"})
    backbone = gens[0].backbone
    variants = {"markov_cluster", "rapid", "longscope[quick]"}
    materialize_results(
        wh, "v1", "r1", Expected(["s1"], sorted(variants), [4000], backbone), scored_by=scored_by()
    )
    for view in ("leaderboard", "position_curve", "cost"):
        rows = wh.rows(f"SELECT * FROM {view}")
        assert {r.get("variant", r["method"]) for r in rows} == variants, view
