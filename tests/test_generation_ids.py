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
            "agentwrite": "a4b1c8debe825535ab90ca5d",
            "longscope": "efc476e653024f5a4a64d0c7",
            "markov_cluster": "b44f228e1a44c0b0e93be5b7",
            "ral_writer": "a9162a1d93f8de16bca7cafe",
            "rapid": "c78fc3db9cc92f61d96a3b6f",
            "single": "ce51056bc6edeb2b0898f825",
            "agentwrite[sees-written]": "03261f83228ad5aec35fe3f3",
            "compress[llmlingua]": "877318536b2bba4870515048",
            "compress[llmlingua2]": "9c1db299796cf58dc8d6ca8f",
            "compress[extractive]": "608620c48838af610065bf75",
        },
    ),
    "paper": (
        "3139897a3fed03da",
        {
            "agentwrite": "a4b1c8debe825535ab90ca5d",
            "longscope": "efc476e653024f5a4a64d0c7",
            "markov_cluster": "b44f228e1a44c0b0e93be5b7",
            "ral_writer": "a9162a1d93f8de16bca7cafe",
            "rapid": "c78fc3db9cc92f61d96a3b6f",
            "single": "ce51056bc6edeb2b0898f825",
            "agentwrite[sees-written]": "03261f83228ad5aec35fe3f3",
            "compress[llmlingua]": "877318536b2bba4870515048",
            "compress[llmlingua2]": "9c1db299796cf58dc8d6ca8f",
            "compress[extractive]": "608620c48838af610065bf75",
        },
    ),
    "local-model": (
        "5454bd0f37cc5119",
        {
            "agentwrite": "696b7a83fe36e0ee67be674a",
            "longscope": "a1af721cbcde4d84a47004bc",
            "markov_cluster": "5457f8fa9c5361ffaae89192",
            "ral_writer": "cdec023f3801643ac1709d3e",
            "rapid": "153f018036c690ae52490171",
            "single": "ed17ee93eb907f3440ce382a",
            "agentwrite[sees-written]": "7d854e4f71995d9618e6b5f6",
            "compress[llmlingua]": "4b66b38008220cb882ab0b60",
            "compress[llmlingua2]": "cfd05fd3895aede3c6a572b3",
            "compress[extractive]": "bec667b69f60ee05ce5e5482",
        },
    ),
    "custom": (
        "52b450b5f5463887",
        {
            "agentwrite": "8975a23224e34c2396ff7fbc",
            "longscope": "74451ffb750a8dd3394916d7",
            "markov_cluster": "3db438dde40eed7965cbdc30",
            "ral_writer": "a621e73c7d199b4060f750a2",
            "rapid": "d5432fa21f650fb9d33a40ef",
            "single": "ce51056bc6edeb2b0898f825",
            "agentwrite[sees-written]": "65432f25a7ac126d49222a51",
            "compress[llmlingua]": "0fd4a3a3215d2bdc283c5049",
            "compress[llmlingua2]": "a80350468279581204b153bc",
            "compress[extractive]": "c9e93578f534bc78ca5a9e31",
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
