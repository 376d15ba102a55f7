"""The seven methods against known answers on the synthetic corpus (docs/design.md §15), with the
offline reader's neglect of a long prompt's middle on (`llm.offline.middle_neglect`):

    .venv/bin/python -m bench.methods_position [--lengths 4000,8000,16000] [--neglect 1.0]

- planted-fact recall per position bin: each synthetic paper plants 8 result sentences
  (a method's value on a dataset); a fact's bin is where it sits in the whole input the
  methods read (first, middle, last third of the papers in reading order); a fact counts as
  recalled when one sentence of the summary holds both its value and its dataset;
- S_single by paper position (1st, 2nd, 3rd) from a separate offline judge that reads in
  full (`judge.backend=offline`), on QA pairs made without neglect;
- Kendall tau between Markov-cluster's section order and the clusters' source order;
- calls and tokens per summary (what the `cost` view shows) per method and length.

Prints Markdown tables. The triplet is the first topic's three papers, as in
tests/test_position_analysis.py.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from lilo.tasks.config import Settings
from lilo.tasks.config_loading import load_settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import make_client, make_judge_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.qa import generate_qa
from lilo.tasks.records import Generation, PaperText, Sample
from lilo.tasks.scoring import ScoreContext, get_scorer
from lilo.tasks.synthetic.known_answers import BINS, Located, cleaned_triplet, locate, recall_by_bin

METHODS = (
    "single",
    "agentwrite",
    "compress",
    "ral_writer",
    "markov_cluster",
    "rapid",
    "longscope",
)


def settings_for(data_dir: Path, neglect: float, extra: dict[str, Any] | None = None) -> Settings:
    return load_settings(
        None,
        {
            "data_dir": str(data_dir),
            "llm.offline.middle_neglect": neglect,
            "judge.backend": "offline",
            "qa.single_per_paper": 6,
            **(extra or {}),
        },
    )


def run(
    root: Path,
    methods: tuple[str, ...],
    lengths: tuple[int, ...],
    neglect: float,
    score: bool,
    preset: str = "paper",
) -> dict[tuple[str, int], dict[str, Any]]:
    """Each method at each length on one triplet; LongScope-style with `preset`."""
    topic, papers, facts = cleaned_triplet(root)
    located = locate(papers, facts)
    settings = settings_for(root / "data", neglect, {"generate.longscope.preset": preset})
    llm, embedder, pack = (
        make_client(settings),
        Embedder(settings.embedding, settings.data_dir),
        lilo_pack(),
    )
    sample = Sample(
        "s1",
        "v1",
        tuple(p.paper_id for p in papers),
        topic,
        "survey",
        sum(p.words for p in papers),
        "command",
    )
    qa = []
    if score:
        qa_settings = settings.with_overrides({"llm.offline.middle_neglect": 0.0})
        qa = generate_qa(
            sample, papers, qa_settings.qa, qa_settings.judge, make_client(qa_settings), embedder
        ).pairs
    results: dict[tuple[str, int], dict[str, Any]] = {}
    for name in methods:
        spec = get_method(name, settings.generate, settings.llm, settings.embedding)
        for length in lengths:
            gen = spec.run(Unit(sample, papers, length), llm, embedder, pack)
            results[spec.variant, length] = _measure(gen, located, sample, papers, qa, settings)
    return results


def _measure(
    gen: Generation,
    located: list[Located],
    sample: Sample,
    papers: list[PaperText],
    qa: list[Any],
    settings: Settings,
) -> dict[str, Any]:
    if gen.error:
        raise RuntimeError(f"{gen.method} failed: {gen.error}")
    row: dict[str, Any] = {
        "generation": gen,
        "words": gen.words,
        "calls": gen.llm_calls,
        "tokens_in": gen.tokens_in,
        "tokens_out": gen.tokens_out,
        "kendall_tau": gen.structure.get("kendall_tau"),
    }
    row.update({f"recall_{b}": v for b, v in recall_by_bin(gen.text, located).items()})
    if qa:
        judge = make_judge_client(settings)
        context = ScoreContext(gen, sample, papers, qa, judge, lilo_pack(), settings)
        rows = get_scorer("consistency")(context).rows
        for i in (1, 2, 3):
            row[f"s_pos{i}"] = next(r.value for r in rows if r.score == f"single_pos{i}")
    return row


def _table(results: dict[tuple[str, int], dict[str, Any]], columns: list[str]) -> str:
    lines = ["| method | length | " + " | ".join(columns) + " |"]
    lines.append("|---|---|" + "---|" * len(columns))
    for (method, length), row in results.items():
        cells = [_cell(row.get(c)) for c in columns]
        lines.append(f"| {method} | {length} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "-" if value is None else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="4000,8000,16000")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--neglect", type=float, default=1.0)
    parser.add_argument("--no-score", action="store_true", help="skip S_single (faster)")
    parser.add_argument("--longscope-preset", default="paper", choices=("paper", "quick"))
    args = parser.parse_args()
    lengths = tuple(int(x) for x in args.lengths.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        results = run(
            Path(tmp),
            tuple(args.methods.split(",")),
            lengths,
            args.neglect,
            not args.no_score,
            args.longscope_preset,
        )
    recall = [f"recall_{b}" for b in BINS]
    scores = [] if args.no_score else ["s_pos1", "s_pos2", "s_pos3"]
    print(f"## Position (middle_neglect={args.neglect})\n")
    print(_table(results, ["words", *recall, *scores, "kendall_tau"]))
    print("\n## Cost per summary\n")
    print(_table(results, ["calls", "tokens_in", "tokens_out"]))


if __name__ == "__main__":
    main()
