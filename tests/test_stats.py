from lilo.tasks.records import DatasetStats, SurveyStats
from lilo.tasks.results_report._plots import histogram_png
from lilo.tasks.samples.stats import stats_markdown
from lilo.tasks.samples.title_search import title_similarity

STATS = DatasetStats(
    dataset_version="v3",
    number=3,
    input_words=(9000, 10000, 11000, 30000),
    papers=12,
    surveys=(
        SurveyStats("2209.08940", "GP review", 190, 136, 3),
        SurveyStats("2601.00100", "Synthetic", 0, 0, 1),
    ),
    how={"eprint": 134, "unresolved": 53, "doi": 1},
)


def test_words_summary_and_rates() -> None:
    assert STATS.samples == 4
    assert STATS.words_summary() == {
        "min": 9000,
        "p25": 9750,
        "median": 10500,
        "mean": 15000,
        "p75": 15750,
        "max": 30000,
    }
    assert round(STATS.surveys[0].resolved_rate, 3) == 0.716
    assert STATS.surveys[1].resolved_rate == 0.0
    empty = DatasetStats("v1", None, (), 0, (), {})
    assert empty.words_summary()["max"] == 0


def test_markdown_report() -> None:
    text = stats_markdown(STATS)
    assert text.startswith("# Dataset v3 (#3)\n\n4 samples, 12 papers, 2 surveys.")
    assert "| 2209.08940 | GP review | 190 | 136 | 72% | 3 |" in text
    assert text.index("| eprint | 134 |") < text.index("| unresolved | 53 |")


def test_histogram_png() -> None:
    assert histogram_png(STATS)[:8] == b"\x89PNG\r\n\x1a\n"


def test_title_similarity_reads_latex_and_ignores_case_and_punctuation() -> None:
    assert (
        title_similarity("{Gaussian} Processes: a \\emph{Review}", "Gaussian processes a review")
        == 1
    )
    assert title_similarity("Deep Kernel Learning", "Deep Kernel Learnin") > 0.9
    assert title_similarity("Deep Kernel Learning", "Shallow flows for tabular data") < 0.5
    assert title_similarity("", "anything") == 0
