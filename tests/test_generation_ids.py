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
            "agentwrite": "48542662a4a4632ae8390be5",
            "longscope": "efc476e653024f5a4a64d0c7",
            "markov_cluster": "b44f228e1a44c0b0e93be5b7",
            "ral_writer": "db20e114234d2f4523297656",
            "rapid": "c78fc3db9cc92f61d96a3b6f",
            "single": "ce51056bc6edeb2b0898f825",
            "agentwrite[sees-written]": "63f6a6fe7ed48dbce857bcaf",
            "compress[llmlingua]": "2fd1ae8f15c8bdde94c605d0",
            "compress[llmlingua2]": "400b0426a48c5510df0f21d8",
            "compress[extractive]": "e94941045c089da5b452054f",
        },
    ),
    "paper": (
        "3139897a3fed03da",
        {
            "agentwrite": "48542662a4a4632ae8390be5",
            "longscope": "efc476e653024f5a4a64d0c7",
            "markov_cluster": "b44f228e1a44c0b0e93be5b7",
            "ral_writer": "db20e114234d2f4523297656",
            "rapid": "c78fc3db9cc92f61d96a3b6f",
            "single": "ce51056bc6edeb2b0898f825",
            "agentwrite[sees-written]": "63f6a6fe7ed48dbce857bcaf",
            "compress[llmlingua]": "2fd1ae8f15c8bdde94c605d0",
            "compress[llmlingua2]": "400b0426a48c5510df0f21d8",
            "compress[extractive]": "e94941045c089da5b452054f",
        },
    ),
    "local-model": (
        "5454bd0f37cc5119",
        {
            "agentwrite": "29cc60b5645f4fbef4e5259b",
            "longscope": "a1af721cbcde4d84a47004bc",
            "markov_cluster": "5457f8fa9c5361ffaae89192",
            "ral_writer": "40b8ef1237a1e2f94b7c4a68",
            "rapid": "153f018036c690ae52490171",
            "single": "ed17ee93eb907f3440ce382a",
            "agentwrite[sees-written]": "596d601eef0da44ef7856955",
            "compress[llmlingua]": "3644e6eabf233c48c2e5f287",
            "compress[llmlingua2]": "a2222da8758d99331f320911",
            "compress[extractive]": "ba351939ba7371f2a5173ec9",
        },
    ),
    "custom": (
        "52b450b5f5463887",
        {
            "agentwrite": "abddd0fe636c521062e812d9",
            "longscope": "74451ffb750a8dd3394916d7",
            "markov_cluster": "3db438dde40eed7965cbdc30",
            "ral_writer": "48e332a9adb639be0736c611",
            "rapid": "d5432fa21f650fb9d33a40ef",
            "single": "ce51056bc6edeb2b0898f825",
            "agentwrite[sees-written]": "75cdfd60961d6dbc77e6b7fe",
            "compress[llmlingua]": "3a228605d99cb9c811cdadef",
            "compress[llmlingua2]": "219da0b3dc8bdec3ada0367e",
            "compress[extractive]": "f1da7acb19f5989ee888048b",
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
