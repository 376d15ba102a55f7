"""A generation's id covers everything that changes the summary, so a changed input or
backbone setting makes a new generation instead of reusing an old one."""

from __future__ import annotations

from dataclasses import replace

from lilo.tasks.config_loading import load_settings
from lilo.tasks.llm import make_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import PaperText, Sample


def test_generation_id_changes_with_what_changes_the_output(tmp_path):
    settings = load_settings(None, {"data_dir": str(tmp_path)})
    paper = PaperText("2601.00001", "T", "text", 1, 1, "main.tex", "1.1", "src", "content-a")
    sample = Sample("s1", "v1", ("2601.00001",), "Topic", "survey", 1, "command")
    method = get_method("ral_writer", settings)

    def gid(s=settings, papers=(paper,), target=4000, name="ral_writer", rotation=0):
        unit = Unit(sample, list(papers), target, rotation)
        return get_method(name, s).generation_id(unit, make_client(s), lilo_pack())

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
