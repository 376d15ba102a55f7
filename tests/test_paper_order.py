"""Paper order (docs/reference.md, "Paper order in a sample"): an imported sample keeps its
papers sorted by file name, and `generate.paper_order=listing` (the paper profile) reads
them in the order the group folder's listing gave at import, as the reference reads them."""

from __future__ import annotations

from lilo.flows._load import in_reading_order
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import load_settings
from lilo.tasks.records import Sample

SORTED = ("2401.00001v1", "2402.00002v2", "2403.00003v1")
LISTED = ("2402.00002v2", "2403.00003v1", "2401.00001v1")


def _sample(listing: tuple[str, ...] | None) -> Sample:
    return Sample("lib/group_1", "lib", SORTED, "t", "", 900, "import", listing)


def test_listing_order_is_read_under_the_paper_profile_only():
    listing = Settings().with_overrides({"generate": {"paper_order": "listing"}})
    assert in_reading_order(_sample(LISTED), listing.generate).paper_ids == LISTED
    assert in_reading_order(_sample(LISTED), Settings().generate).paper_ids == SORTED  # the default
    assert load_settings(overrides={"profile": "paper"}).generate.paper_order == "listing"


def test_a_sample_without_a_usable_listing_keeps_its_own_order():
    listing = Settings().with_overrides({"generate": {"paper_order": "listing"}})
    assert (
        in_reading_order(_sample(None), listing.generate).paper_ids == SORTED
    )  # lilo's own samples
    other = ("2401.00001v1", "2409.99999v1", "2403.00003v1")  # not the sample's papers
    assert in_reading_order(_sample(other), listing.generate).paper_ids == SORTED
