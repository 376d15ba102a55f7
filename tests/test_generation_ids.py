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
            "agentwrite": "917f3692805aa1ce0aaa479d",
            "longscope": "5eeabe02d4cfc0b0f3a78176",
            "markov_cluster": "b87ae8dc317808f79ee16fe7",
            "ral_writer": "186194f4b694f7b49e5491bc",
            "rapid": "49c36c84aa073b29afa35546",
            "single": "2189ba1fde1504f07fc04967",
            "agentwrite[sees-written]": "e4000ed0f863d1cf7e4f61ac",
            "compress[llmlingua]": "84edf00f0008c1aa62ef6e0d",
            "compress[llmlingua2]": "a29ce9c1246b5a033c9ca815",
            "compress[extractive]": "1235aa0347d383319e6bd6a6",
        },
    ),
    "paper": (
        "3139897a3fed03da",
        {
            "agentwrite": "917f3692805aa1ce0aaa479d",
            "longscope": "5eeabe02d4cfc0b0f3a78176",
            "markov_cluster": "b87ae8dc317808f79ee16fe7",
            "ral_writer": "186194f4b694f7b49e5491bc",
            "rapid": "49c36c84aa073b29afa35546",
            "single": "2189ba1fde1504f07fc04967",
            "agentwrite[sees-written]": "e4000ed0f863d1cf7e4f61ac",
            "compress[llmlingua]": "84edf00f0008c1aa62ef6e0d",
            "compress[llmlingua2]": "a29ce9c1246b5a033c9ca815",
            "compress[extractive]": "1235aa0347d383319e6bd6a6",
        },
    ),
    "local-model": (
        "5454bd0f37cc5119",
        {
            "agentwrite": "c2928c3b0174d312749af38f",
            "longscope": "741655170c966fc030fc0731",
            "markov_cluster": "37f5a4c61bfdc7451f9427d4",
            "ral_writer": "b4ba94375a1848dcfce1dae9",
            "rapid": "8ea6f0c4d9dfa283e5ea7d78",
            "single": "3422994e19613f2e59b13e48",
            "agentwrite[sees-written]": "10f548630292a67a07afd8e9",
            "compress[llmlingua]": "2064ac38f398c2428a190b30",
            "compress[llmlingua2]": "3b6cd1a4cc5bcb84c752fbfc",
            "compress[extractive]": "7236dd7df9d448f32cb7cda7",
        },
    ),
    "custom": (
        "52b450b5f5463887",
        {
            "agentwrite": "f5ea63109544c5eed9c304c0",
            "longscope": "ffc34dc3191e3944ebd5b3b1",
            "markov_cluster": "681eb641177d98994848bcc3",
            "ral_writer": "524ae2ca5890196f90d670f5",
            "rapid": "8fd95e5e7f4db0e8338f0e7b",
            "single": "2189ba1fde1504f07fc04967",
            "agentwrite[sees-written]": "a3e9d58affc9c5a5597855f3",
            "compress[llmlingua]": "f7dfabf9d31810bebf6f8156",
            "compress[llmlingua2]": "ea8b59323b00e1acca0eb3fc",
            "compress[extractive]": "8e9dc000fbb17765ace6dd74",
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
