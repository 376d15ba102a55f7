"""The prompts every method shares (DESIGN §7), in lilo's own words.

Each prompt kind carries one distinctive phrase that the offline engine's handler for it
looks for (`tasks/llm/offline/write.py`, `plan.py`, `step.py`), so keep those phrases
when rewording: `SINGLE_ASK`, `PLAN_ASK`, `STEP_ASK`.
"""

from __future__ import annotations

from tasks.prompting import paper_blocks

__all__ = [
    "PLAN_ASK",
    "SINGLE_ASK",
    "STEP_ASK",
    "planner_prompt",
    "restatement_block",
    "single_prompt",
    "task_instruction",
    "writer_prompt",
]

SINGLE_ASK = "Write the complete summary now, in a single reply"
PLAN_ASK = "break the writing task into numbered paragraph steps"
STEP_ASK = "Now write only the next paragraph, for this step of the plan:"


def task_instruction(texts: list[str], target_words: int) -> str:
    """The shared task: every field and requirement of DESIGN §7's instruction."""
    return (
        "You are an experienced researcher. The following related research papers are each "
        "enclosed in numbered paper tags.\n\n"
        f"{paper_blocks(texts)}\n\n"
        f"Task: write a summary of these papers of about {target_words} words, with a title. "
        "It should contain:\n"
        "1. An introduction to the field: its history, the progress made and the open "
        "challenges.\n"
        "2. The content of each paper.\n"
        "3. What the papers have in common and what each of them contributes that is new.\n"
        "4. A comparison of their results.\n"
        "5. A conclusion that points to future research directions.\n"
        "Requirements: write in Markdown; report the important data and equations; compare "
        "the papers in tables; spell out every technical term in full with its abbreviation "
        "the first time it appears; use your own words; do not mention the papers' titles."
    )


def single_prompt(instruction: str) -> str:
    return f"{instruction}\n\n{SINGLE_ASK}, starting with its title."


def planner_prompt(
    instruction: str, target_words: int, previous_steps: int = 0, limit: int = 0
) -> str:
    """AgentWrite's planner. A re-ask (RAL-Writer, DESIGN §7) says why the last plan failed."""
    prompt = (
        f"{instruction}\n\n"
        f"Do not write the summary yet. First {PLAN_ASK}, one step per line, in exactly "
        "this format:\n"
        "Paragraph 1 - Main Point: <what this paragraph covers> - Word Count: <words>\n"
        "Each step asks for at least 200 and at most 1000 words, and the word counts add up "
        f"to {target_words}. Reply with the step lines only."
    )
    if previous_steps:
        prompt += (
            f"\nYour previous plan had {previous_steps} steps, which is too many: "
            f"use fewer than {limit} steps."
        )
    return prompt


def writer_prompt(instruction: str, plan: list[str], written: str, step: str) -> str:
    """AgentWrite's writer: the instruction, all steps, the text so far and the current step."""
    steps = "\n".join(plan)
    return (
        f"{instruction}\n\n"
        "You are writing this summary one paragraph at a time, following this plan:\n"
        f"{steps}\n\n"
        f"The text written so far:\n<written>\n{written or '(nothing yet)'}\n</written>\n\n"
        f"{STEP_ASK}\n{step}\n"
        "Reply with the new paragraph only; do not repeat the text written so far."
    )


def restatement_block(chunks: list[tuple[int, str]]) -> str:
    """RAL-Writer's restatement, appended at the tail of a writer prompt (DESIGN §7).
    `chunks` come in ascending importance: the most important sits closest to the end."""
    body = "\n".join(f'<restated chunk="{i}">\n{text}\n</restated>' for i, text in chunks)
    return "\n\nPassages of the papers restated for this step, the most important last:\n" + body
