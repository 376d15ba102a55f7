"""A generation's id covers everything that changes the summary, so a changed input or
backbone setting makes a new generation instead of reusing an old one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lilo.tasks.config_loading import load_settings
from lilo.tasks.llm import make_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import PaperText, Sample


def test_generation_id_changes_with_what_changes_the_output(tmp_path):
    settings = load_settings(None, {"data_dir": str(tmp_path)})
    paper = PaperText("2601.00001", "T", "text", 1, 1, "main.tex", "1.1", "src", "content-a")
    sample = Sample("s1", "v1", ("2601.00001",), "Topic", "survey", 1, "command")
    method = get_method("ral_writer", settings.generate, settings.llm, settings.embedding)

    def gid(s=settings, papers=(paper,), target=4000, name="ral_writer", rotation=0):
        unit = Unit(sample, list(papers), target, rotation)
        return get_method(name, s.generate, s.llm, s.embedding).generation_id(
            unit, make_client(s), lilo_pack()
        )

    base = gid()
    assert base == method.generation_id(
        Unit(sample, [paper], 4000), make_client(settings), lilo_pack()
    )
    neglect = settings.with_overrides({"llm.offline.middle_neglect": 0.5})
    assert (
        len(
            {
                base,
                gid(s=neglect),  # a backend setting that changes replies
                gid(papers=(replace(paper, content_sha256="content-b"),)),  # re-cleaned text
                gid(target=8000),
                gid(name="single"),
                gid(s=settings.with_overrides({"generate.ral.k": 8})),  # a method argument
                gid(rotation=1),  # another reading order of the papers
            }
        )
        == 7
    )
    # what does not change the output keeps the id: paths, pacing, endpoints of arXiv
    moved = settings.with_overrides({"arxiv.delay_s": 0.0, "qa.review_batch": 2})
    assert gid(s=moved) == base


# Ids of real users' caches: the settings as shipped, under each profile, and with method
# settings of every method section changed. A change here re-pays every LLM call of every
# user, so these only change on purpose. (`compress` and `compress[sees-written]` are left
# out: their compressor depends on whether LLMLingua is installed here.)
CUSTOM = {
    "generate.ral.k": 8,
    "generate.ral.a": 2.5,
    "generate.markov.top_k": 3,
    "generate.rapid.top_k": 4,
    "generate.longscope.preset": "quick",
    "generate.plan_steps_cap": 5,
}
PROFILES = {"none": {}, "paper": {"profile": "paper"}, "local-model": {"profile": "local-model"}}
PINNED: dict[str, tuple[str, dict[str, str]]] = {
    "none": (
        "ed012d95b76b3eab",
        {
            "agentwrite": "ce6ec8ab0af19e55eccb1dd2",
            "longscope": "51e7cafb4c031fc853039131",
            "markov_cluster": "a0534a5ba33f9c254767bc19",
            "ral_writer": "1c54c6257ca313695b8a8621",
            "rapid": "9d9862374ede056ff79d8da2",
            "single": "efe2406ca95270d1755fa1a3",
            "agentwrite[sees-written]": "85ef55e4b1ca65ddbe2447d0",
            "compress[llmlingua]": "125aabb6d14df47e5a6c7654",
            "compress[llmlingua2]": "d9a07c0afa808082698f4806",
            "compress[extractive]": "43fb540dde24736d360dd36a",
        },
    ),
    "paper": (
        "3139897a3fed03da",
        {
            "agentwrite": "ce6ec8ab0af19e55eccb1dd2",
            "longscope": "51e7cafb4c031fc853039131",
            "markov_cluster": "a0534a5ba33f9c254767bc19",
            "ral_writer": "1c54c6257ca313695b8a8621",
            "rapid": "9d9862374ede056ff79d8da2",
            "single": "efe2406ca95270d1755fa1a3",
            "agentwrite[sees-written]": "85ef55e4b1ca65ddbe2447d0",
            "compress[llmlingua]": "125aabb6d14df47e5a6c7654",
            "compress[llmlingua2]": "d9a07c0afa808082698f4806",
            "compress[extractive]": "43fb540dde24736d360dd36a",
        },
    ),
    "local-model": (
        "5454bd0f37cc5119",
        {
            "agentwrite": "0db9eecb10aa50ff99740592",
            "longscope": "7bde0c040cd11757cb3c6e0d",
            "markov_cluster": "909d2d69f24faae3ad9fd7e6",
            "ral_writer": "d45885e80d75810cbb1e5ec4",
            "rapid": "17bf577c680fd3b6ee61dacb",
            "single": "be2f7bc11fef725beecef83c",
            "agentwrite[sees-written]": "7525af2a70cbd31c5514552e",
            "compress[llmlingua]": "641c011fc63f0dc25f694b61",
            "compress[llmlingua2]": "5c7b4bbd063a3807b8807f4d",
            "compress[extractive]": "c69c0430808a2d52ab9e87e8",
        },
    ),
    "custom": (
        "52b450b5f5463887",
        {
            "agentwrite": "17f457111508b62a082ece37",
            "longscope": "58573c08941653314772e926",
            "markov_cluster": "7f1e6d8723327c43002499b4",
            "ral_writer": "ddd85adb29b49d4e614f2d3c",
            "rapid": "7b4c73c65200d5ad5ea076a7",
            "single": "efe2406ca95270d1755fa1a3",
            "agentwrite[sees-written]": "7253fb0eacaa2e3b15216257",
            "compress[llmlingua]": "08b955b117756dfd1731e9db",
            "compress[llmlingua2]": "9bb2a02056e925fee571a508",
            "compress[extractive]": "b8761757933ee6eebe38a9d2",
        },
    ),
}


@pytest.mark.parametrize("case", list(PINNED))
def test_ids_of_runs_and_generations_are_pinned(tmp_path, case):
    settings = load_settings(
        None, {"data_dir": str(tmp_path), **{**PROFILES, "custom": CUSTOM}[case]}
    )
    paper = PaperText("2601.00001", "T", "text", 1, 1, "main.tex", "1.1", "src", "content-a")
    unit = Unit(Sample("s1", "v1", ("2601.00001",), "Topic", "survey", 1, "command"), [paper], 4000)
    llm = make_client(settings)
    config_hash, ids = PINNED[case]
    assert settings.config_hash() == config_hash
    assert {
        n: get_method(n, settings.generate, settings.llm, settings.embedding).generation_id(
            unit, llm, lilo_pack()
        )
        for n in ids
    } == ids
