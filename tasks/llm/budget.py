"""A run's cap on what its LLM calls spend (`runner.max_tokens`, `runner.max_cost`), held
before each request is sent: a call whose upper bound (its prompt's tokens plus its
`max_tokens`, at its price) would take what was spent plus what is in flight past the cap
is not sent, and the run stops (`stop_for_budget`, tasks/lifetime.py). Calls in flight hold
their upper bound until their reply settles it to what they used. The cap holds per run in
each process: the calls of the run's workers on other processes are not counted here."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from lilo.tasks.config import Price, RunnerSettings
from lilo.tasks.lifetime import stop_for_budget

__all__ = ["Budget", "budget_for"]


@dataclass
class _Spend:
    tokens: int = 0
    cost: float = 0.0


class Budget:
    """What one run may spend, what it spent and what its calls in flight hold."""

    def __init__(self, max_tokens: int, max_cost: float, resume: str) -> None:
        self.max_tokens, self.max_cost, self.resume = max_tokens, max_cost, resume
        self.spent, self.held = _Spend(), _Spend()
        self._lock = threading.Lock()

    def reserve(self, what: str, price: Price | None, tokens_in: int, max_out: int) -> _Spend:
        """Hold a call's upper bound, or stop the run where it would pass the cap."""
        bound = _Spend(tokens_in + max_out, price.of(tokens_in, max_out) if price else 0.0)
        with self._lock:
            tokens = self.spent.tokens + self.held.tokens + bound.tokens
            cost = self.spent.cost + self.held.cost + bound.cost
            if self.max_cost and price is None:
                why = f"no price for {what}, so runner.max_cost cannot be held"
            elif self.max_tokens and tokens > self.max_tokens:
                why = f"the next call ({bound.tokens:,} tokens at most) would pass the cap"
            elif self.max_cost and cost > self.max_cost:
                why = f"the next call ({bound.cost:.6g} at most) would pass the cap"
            else:
                self.held.tokens += bound.tokens
                self.held.cost += bound.cost
                return bound
            raise stop_for_budget(f"{self._said()}: {why}; {self.resume}")

    def settle(self, bound: _Spend, tokens: int, cost: float) -> None:
        """A call's reply (or its failure: 0 tokens): its bound let go, what it used spent."""
        with self._lock:
            self.held.tokens -= bound.tokens
            self.held.cost -= bound.cost
            self.spent.tokens += tokens
            self.spent.cost += cost

    def _said(self) -> str:
        parts = [f"{self.spent.tokens:,} of {self.max_tokens:,} tokens"] if self.max_tokens else []
        parts += [f"{self.spent.cost:.6g} of {self.max_cost:g} in cost"] if self.max_cost else []
        return "stopped by its budget: spent " + " and ".join(parts)


_BUDGETS: dict[str, Budget] = {}
_LOCK = threading.Lock()


def budget_for(run: str, runner: RunnerSettings) -> Budget | None:
    """The cap of run `run` (its call logs' folder) in this process; None without one."""
    if not (runner.max_tokens or runner.max_cost):
        return None
    resume = (
        "finished work is kept: run the same command with a larger --max-tokens or "
        "--max-cost to continue (nothing is asked twice)"
    )
    with _LOCK:
        return _BUDGETS.setdefault(run, Budget(runner.max_tokens, runner.max_cost, resume))
