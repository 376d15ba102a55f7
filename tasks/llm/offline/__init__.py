"""The offline engine: lilo's embedded default LLM (docs/design.md §9).

Deterministic, honest heuristics that read only what the prompt shows and answer in the
same text protocol a chat model would (plan lines, paragraphs, QA JSON, judge JSON), so
the same parsers run on its output. Each prompt kind has one reply, a function registered
with `@offline_reply(name, matches=..., priority=...)` (base.py): `matches(prompt)` accepts
a phrase of lilo's own prompts, or the tags that lilo's and a dataset's templates share,
such as `<gold>`/`<predict>`; the reply reads the messages and the engine's settings section
(`offline`), all it reads; the bare task instruction, which Single sends, is the last
resort. The replies are this package's public modules, and those a method carries in its
own file (Markov-cluster's cluster summary, tasks/methods/markov_cluster.py); a new one is
found, nothing else changes. The engine is recorded as the backbone (`offline:<model>`)
in every row it produces.

Replies are computed in `llm.offline.processes` worker processes (`_process.py`), as a
real endpoint runs apart from its client: in lilo's process the engine would hold the
interpreter lock that the methods, the embedder and the writes need.
"""

from lilo.tasks.llm.offline._engine import ENGINE_VERSION, OfflineEngine
from lilo.tasks.llm.offline._reply import reply

__all__ = ["ENGINE_VERSION", "OfflineEngine", "reply"]
