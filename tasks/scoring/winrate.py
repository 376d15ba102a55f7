"""Pairwise win-rate (docs/design.md §8): two summaries of the same sample at the same length,
judged
item by item on the dataset's win-rate checklist, in both orders (A first, then B first)
so that the order they are shown in cannot decide; ties allowed ("E"). A second view of
quality beside S_q. Not a per-generation score, so it does not register with `@scorer`:
the score flow pairs generations and calls `judge_pair`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from lilo.tasks.config import JudgeSettings
from lilo.tasks.llm import LLMClient
from lilo.tasks.prompt_packs import ChecklistItem, PromptPack
from lilo.tasks.qa.parse import QAFormatError, ask_json, load_json_reply
from lilo.tasks.records import Generation
from lilo.tasks.scoring.quality import checklist_messages

__all__ = ["judge_pair", "parse_verdicts"]

_WINNER = {"A": "a", "B": "b", "E": "tie"}


def parse_verdicts(items: list[ChecklistItem], reply: str) -> dict[int, tuple[str, str]]:
    """checklist id -> (winner as shown: a | b | tie, reason), every item required."""
    found: dict[int, tuple[str, str]] = {}
    for entry in load_json_reply(reply, list):
        if not isinstance(entry, dict):
            raise QAFormatError('each entry is {"checklist_id", "reason", "winner"}')
        winner = str(entry.get("winner", "")).strip().upper()
        if winner not in _WINNER:
            raise QAFormatError(f"winner must be A, B or E; got {entry.get('winner')!r}")
        try:
            found[int(entry["checklist_id"])] = (_WINNER[winner], str(entry.get("reason", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise QAFormatError("each entry needs a numeric checklist_id") from exc
    missing = [i.index for i in items if i.index not in found]
    if missing:
        raise QAFormatError(f"checklist ids missing: {missing}; judge every item")
    return found


def judge_pair(
    a: Generation, b: Generation, judge: LLMClient, pack: PromptPack, cfg: JudgeSettings
) -> tuple[list[dict[str, Any]], list[str]]:
    """Win-rate rows for A vs B (winner given as a | b | tie from A's side), and the aspects
    whose reply was unusable after the retry."""
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    for aspect, items in pack.winrate_checklist.items():
        for shown, first, second in (("ab", a, b), ("ba", b, a)):
            verdicts, _, error = ask_json(
                judge,
                checklist_messages(
                    pack, "winrate", items, response_A=first.text, response_B=second.text
                ),
                partial(parse_verdicts, items),
                purpose="winrate",
                temperature=cfg.checklist_temperature,
                max_tokens=cfg.winrate_max_tokens,
            )
            if verdicts is None:
                failed.append(f"{aspect} ({shown}): {error}")
                continue
            for item in items:
                winner, reason = verdicts[item.index]
                if shown == "ba" and winner != "tie":
                    winner = "a" if winner == "b" else "b"
                rows.append(
                    {
                        "generation_a": a.generation_id,
                        "generation_b": b.generation_id,
                        "sample_id": a.sample_id,
                        "target_words": a.target_words,
                        "method_a": a.variant or a.method,
                        "method_b": b.variant or b.method,
                        "aspect": aspect,
                        "item": item.index,
                        "shown": shown,
                        "winner": winner,
                        "reason": reason,
                        "judge": judge.backbone,
                    }
                )
    return rows, failed
