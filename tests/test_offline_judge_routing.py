"""The offline judge answers a judge's prompt whatever the judged summary holds: a summary
from a model that echoed its writer's prompt (`<instruction>` and all) is still answered
as a QA answer and graded against its checklist, not taken for a planner's prompt."""

from __future__ import annotations

import json

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline import reply
from lilo.tasks.prompt_packs import lilo_pack

# The head of a summary Gemma 3 270M wrote for RAL-Writer: its prompt, echoed.
ECHO = (
    "<instruction>\nYou are an experienced researcher. Below are several research papers "
    "from one field, each inside numbered paper tags. Read them closely and write a "
    "summary of them.\n\nGazetteerMix reaches a span precision of 88.6 on the FewNERD "
    "split.\n"
)


def test_a_summary_echoing_a_planner_prompt_is_answered_as_a_qa_answer() -> None:
    prompt = lilo_pack().render(
        "qa_answer", paper=ECHO, question="What span precision does GazetteerMix reach?"
    )
    answer = reply([{"role": "user", "content": prompt}], OfflineSettings()).text
    assert "88.6" in answer


def test_a_summary_echoing_a_planner_prompt_is_graded_on_its_checklist() -> None:
    pack = lilo_pack()
    checklist = next(iter(pack.checklist.values()))
    prompt = pack.render(
        "checklist",
        response=ECHO,
        checklists=json.dumps([c.as_prompt() for c in checklist]),
        num_checklist=len(checklist),
    )
    grades = json.loads(reply([{"role": "user", "content": prompt}], OfflineSettings()).text)
    assert len(grades) == len(checklist)
