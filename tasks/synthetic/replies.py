"""Scripted replies for loopback endpoints that stand in for a model across the network (the
overhead and kill benches, the fault tests): a judge's answer in the shape lilo parses."""

from __future__ import annotations

import json
import re

__all__ = ["judge_reply"]


def judge_reply(prompt: str) -> str | None:
    """What a judge says to lilo's grade, checklist and answer prompts, in the shape lilo
    parses (full marks, the KernelForge answer); None for any other prompt."""
    if "<gold>" in prompt:
        return json.dumps({"reason": "matches", "score": 1})
    if '"checklists":' in prompt:
        ids = sorted(set(re.findall(r'"checklist_id": (\d+)', prompt)), key=int)
        return json.dumps([{"checklist_id": i, "reason": "ok", "evaluation_score": 1} for i in ids])
    if "<summary>" in prompt and "<question>" in prompt:
        return "A test RMSE of 0.635."
    return None
