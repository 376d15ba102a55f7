"""Method variants named in brackets (`agentwrite[sees-written]`, `compress[llmlingua]`), and
each method drawing its own replies: the same prompt asked by two methods is two cache
entries unless `generate.shared_plan` pairs them (docs/design.md §7)."""

from __future__ import annotations

import importlib.util

import pytest
from test_formulas import _papers

from lilo.flows._preflight import PreflightError, check_names
from lilo.tasks.config_loading import load_settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.errors import UnknownName
from lilo.tasks.llm import make_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import Sample


def _settings(tmp_path, **overrides):
    return load_settings(None, {"data_dir": str(tmp_path), **overrides})


@pytest.mark.parametrize(
    ("name", "variant", "args"),
    [
        ("agentwrite", "agentwrite", {"sees_written": False}),
        ("agentwrite[sees-written]", "agentwrite[sees-written]", {"sees_written": True}),
        ("compress[extractive]", "compress[extractive]", {"compressor": "extractive"}),
        ("compress[llmlingua]", "compress[llmlingua]", {"compressor": "llmlingua"}),
        ("compress[llmlingua2]", "compress[llmlingua2]", {"compressor": "llmlingua2"}),
        (
            "compress[extractive,sees-written]",
            "compress[extractive,sees-written]",
            {"compressor": "extractive", "sees_written": True},
        ),
    ],
)
def test_bracket_options_set_arguments_and_name_the_variant(tmp_path, name, variant, args):
    settings = _settings(tmp_path)
    method = get_method(name, settings.generate, settings.llm, settings.embedding)
    assert method.variant == variant
    assert {k: method.args[k] for k in args} == args


def test_unknown_options_are_refused_before_a_run(tmp_path):
    with pytest.raises(UnknownName, match=r"no option 'fast'; agentwrite's are: agentwrite\["):
        settings = _settings(tmp_path)
        get_method("agentwrite[fast]", settings.generate, settings.llm, settings.embedding)
    check_names(_settings(tmp_path, **{"generate.methods": ["agentwrite[sees-written]"]}))
    with pytest.raises(PreflightError, match=r"unknown method single\[x\]"):
        check_names(_settings(tmp_path, **{"generate.methods": ["single[x]"]}))


def _unit() -> Unit:
    papers = _papers(15)  # a plan is drawn whatever the papers' length
    ids = tuple(p.paper_id for p in papers)
    sample = Sample("s1", "v1", ids, "Topic", "survey", sum(p.words for p in papers), "command")
    return Unit(sample, papers, 1000)


def test_a_missing_llmlingua_fails_with_what_to_install(tmp_path, shared_embedder):
    if importlib.util.find_spec("llmlingua") is not None:
        pytest.skip("llmlingua is installed here")
    settings = _settings(tmp_path)
    generation = get_method(
        "compress[llmlingua]", settings.generate, settings.llm, settings.embedding
    ).run(_unit(), make_client(settings), shared_embedder, lilo_pack())
    assert generation.variant == "compress[llmlingua]" and generation.text == ""
    assert "llmlingua package is not installed (pip install -e '.[compress]')" in generation.error


def _plan_keys(tmp_path, shared: bool, embedder: Embedder) -> tuple[dict[str, str], int, bool]:
    settings = _settings(tmp_path, **{"generate.shared_plan": shared})
    llm = make_client(settings)
    keys: dict[str, str] = {}
    cached = True
    for name in ("agentwrite", "agentwrite[sees-written]", "ral_writer"):
        generation = get_method(name, settings.generate, settings.llm, settings.embedding).run(
            _unit(), llm, embedder, lilo_pack()
        )
        assert generation.error == ""
        plans = [c for c in llm.take_calls() if c.purpose.endswith(":plan")]
        keys[generation.variant] = plans[0].key
        cached = cached and all(c.cached for c in plans)
    return keys, len(set(keys.values())), cached


def test_each_method_draws_its_own_plan_unless_shared(tmp_path, shared_embedder):
    keys, distinct, cached = _plan_keys(tmp_path / "own", False, shared_embedder)
    assert distinct == 3 and not cached  # the same planner prompt, one draw per method
    again, _, cached = _plan_keys(tmp_path / "own", False, shared_embedder)
    assert again == keys and cached  # a rerun replays each method's own reply
    _, distinct, _ = _plan_keys(tmp_path / "one-plan", True, shared_embedder)
    assert distinct == 1
