import pytest

from lilo.tasks.arxiv_ids import find_arxiv_id, normalize_arxiv_id


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2102.00007", "2102.00007"),
        ("2102.00007v2", "2102.00007"),
        ("  arXiv:1409.5668v1 ", "1409.5668"),
        ("0705.2219", "0705.2219"),
        ("astro-ph/9911436", "astro-ph/9911436"),
        ("astro-ph/9911436v3", "astro-ph/9911436"),
        ("math.gt/0309136", "math.GT/0309136"),
        ("comp-gas/9405004", "comp-gas/9405004"),
        ("https://rss.onlinelibrary.wiley.com/doi/pdf/10.1111/rssa.12378", None),
        ("ascl:1303.002x", None),
        ("2102.000071", None),
        ("", None),
        # Unicode digits are digits to `\d`, never to arXiv
        ("２３０１.００００１", None),
        ("\u0662\u0663\u0660\u0661.\u0660\u0660\u0660\u0660\u0661", None),
        ("2301.00001v２", None),
        ("astro-ph/９９１１４３６", None),
    ],
)
def test_normalize_arxiv_id(raw: str, expected: str | None) -> None:
    assert normalize_arxiv_id(raw) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("arXiv preprint arXiv:2301.01234", "2301.01234"),
        ("arXiv preprint 2301.01234v4.", "2301.01234"),
        ("see https://arxiv.org/pdf/2301.01234v2.pdf", "2301.01234"),
        ("http://arxiv.org/abs/astro-ph/0601145", "astro-ph/0601145"),
        ("ApJ 529, 2301.01234", None),
        ("arXiv e-prints", None),
        ("arXiv:２３０１.０１２３４", None),
    ],
)
def test_find_arxiv_id_needs_an_arxiv_marker(text: str, expected: str | None) -> None:
    assert find_arxiv_id(text) == expected
