"""Budgets: how much a session may cost, and how much of the agent's context window it may
fill, before acp-tui stops it.

Both come from the agent's own `usage_update`: `cost` (money spent in the session so far) and
`used` / `size` (tokens in the context window). At 80% of a budget the user is warned, once; at
100% the running turn is cancelled and no prompt is sent (neither a queued one nor a new one)
until the user raises the budget. An agent that reports no cost leaves a cost budget nothing to
go by: that is said once, and only the context budget applies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

from acp_tui.session.state import SessionState
from acp_tui.text import money

if TYPE_CHECKING:
    from acp_tui.config import Startup

WARN_AT = 0.8
"""The share of a budget at which the user is warned."""

Measure = Literal["cost", "context"]


class Budget(msgspec.Struct):
    """The limits of one conversation's sessions (None: no limit)."""

    max_cost: float | None = None
    """In the currency the agent reports (`--max-cost DOLLARS`)."""
    max_context: float | None = None
    """Percent of the context window (`--max-context PERCENT`)."""

    @property
    def set(self) -> bool:
        return self.max_cost is not None or self.max_context is not None


class Spent(msgspec.Struct, frozen=True):
    """Where one budget stands: `spent` of `limit`, as the user reads them."""

    measure: Measure
    spent: float
    limit: float
    currency: str = ""

    @property
    def share(self) -> float:
        return self.spent / self.limit

    @property
    def reached(self) -> bool:
        return self.spent >= self.limit

    def describe(self) -> str:
        """E.g. "$1.02 of $1.00" or "81% of the context window, of 80% allowed"."""
        if self.measure == "cost":
            return f"{money(self.spent, self.currency)} of {money(self.limit, self.currency)}"
        return f"{self.spent:.0f}% of the context window, of {self.limit:g}% allowed"


def spent(state: SessionState, budget: Budget) -> list[Spent]:
    """Where each budget set stands in `state`, as far as the agent reported."""
    stands = []
    if budget.max_cost is not None and state.cost is not None:
        stands.append(Spent("cost", state.cost.amount, budget.max_cost, state.cost.currency))
    if budget.max_context is not None and state.usage_used is not None and state.usage_size:
        share = 100 * state.usage_used / state.usage_size
        stands.append(Spent("context", share, budget.max_context))
    return stands


class BudgetWatch:
    """What one session has been told of its budgets, so each thing is said once."""

    def __init__(self) -> None:
        self.warned: set[Measure] = set()
        self.reached: Spent | None = None
        self.no_cost_said = False

    def check(self, state: SessionState, budget: Budget) -> tuple[list[Spent], Spent | None]:
        """The budgets newly past the warning, and the first one reached (if not before)."""
        warnings, reached = [], None
        for stand in spent(state, budget):
            if stand.reached:
                if self.reached is None:
                    self.reached = reached = stand
            elif stand.share >= WARN_AT and stand.measure not in self.warned:
                self.warned.add(stand.measure)
                warnings.append(stand)
        return warnings, reached

    def raised(self, state: SessionState, budget: Budget) -> None:
        """The user raised a budget: what is still past it stays reached."""
        self.reached = next((x for x in spent(state, budget) if x.reached), None)
        self.warned = {x.measure for x in spent(state, budget) if x.share >= WARN_AT}

    def cost_unknown(self, state: SessionState, budget: Budget) -> bool:
        """True once, when a cost budget is set and the agent reported usage without a cost."""
        unknown = budget.max_cost is not None and state.cost is None
        if unknown and state.usage_used is not None and not self.no_cost_said:
            self.no_cost_said = True
            return True
        return False


def budget_of(startup: Startup | None) -> Budget:
    """The budgets `acp-tui` was started with (`--max-cost`, `--max-context`, the config)."""
    if startup is None:
        return Budget()
    return Budget(startup.max_cost, startup.max_context)
