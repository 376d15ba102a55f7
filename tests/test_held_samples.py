"""A sample whose paper a newer cleaner rejected is held (quarantined, skipped by later
stages) instead of crashing them, and released once the paper is clean again."""

from __future__ import annotations

from lilo.flows.generate import generate_flow
from lilo.flows.qa import qa_flow
from lilo.flows.samples import samples_flow
from lilo.tasks.config_loading import load_settings
from lilo.tasks.records import PaperText, Sample
from lilo.warehouse import Warehouse

IDS = ("2601.00001", "2601.00002", "2601.00003")


def _paper(paper_id: str) -> PaperText:
    return PaperText(paper_id, "T", "text", 1, 1, "main.tex", "1.1", "src", paper_id)


def test_a_sample_with_a_paper_no_longer_clean_is_held(tmp_path, prefect_harness):
    settings = load_settings(None, {"data_dir": str(tmp_path), "surveys": ["2601.00000"]})
    sample = Sample("s1", "v1", IDS, "Topic", "2601.00000", 3, "command")
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "r0"})
        wh.upsert("dim_papers", [_paper(i) for i in IDS[:2]], ("paper_id",), extra={"run_id": "r0"})

    samples_flow(settings, "r1")
    qa = qa_flow(settings, "r1")  # nothing to do, and no KeyError on the missing paper
    generate_flow(settings, "r1")
    with Warehouse(settings.db_path) as wh:
        held = wh.rows("SELECT item_id, stage, reason, detail FROM quarantine")
        assert wh.count("fct_qa_pairs") == 0
        wh.upsert("dim_papers", [_paper(IDS[2])], ("paper_id",), extra={"run_id": "r2"})
    assert qa.llm_made == 0
    assert held == [
        {
            "item_id": "s1",
            "stage": "samples",
            "reason": "paper_not_clean",
            "detail": "papers no longer clean: 2601.00003",
        }
    ]

    samples_flow(settings, "r2")
    with Warehouse(settings.db_path) as wh:
        assert wh.count("quarantine") == 0
