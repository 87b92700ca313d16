"""Signing in: the methods the agent offers (the remembered one first), Enter picks one.

An `env var` method then asks for each variable in a masked input; what the user types goes
only into the returned choice (`AuthChoice.with_values`), never into a log or the transcript.
Esc gives up (the app says the agent requires sign-in); in the variables, Esc goes back.
"""

from __future__ import annotations

import os
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from acp_tui.conversation.sign_in import AuthChoice
from acp_tui.ui.screens.dialog import Dialog


class SignInScreen(Dialog[AuthChoice | None]):
    """Pick a sign-in method; for an `env var` one, enter its variables."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    DEFAULT_CSS = """
    SignInScreen > Vertical { width: 80; }
    SignInScreen OptionList { height: auto; max-height: 20; border: none; }
    SignInScreen #sign-in-vars { height: auto; display: none; }
    SignInScreen.-vars #sign-in-vars { display: block; }
    SignInScreen.-vars OptionList { display: none; }
    SignInScreen .sign-in--intro { color: $text-muted; padding: 1 0 0 0; }
    SignInScreen .sign-in--label { padding: 1 0 0 0; }
    SignInScreen .sign-in--error { color: $text-error; padding: 1 0 0 0; }
    SignInScreen Input { margin: 0; }
    """

    def __init__(self, choices: list[AuthChoice], remembered: str | None = None) -> None:
        super().__init__()
        first = [c for c in choices if c.id == remembered]
        self.choices = first + [c for c in choices if c.id != remembered]
        self.remembered = remembered
        self.chosen: AuthChoice | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "The agent asks you to sign in"
            box.border_subtitle = "↑↓ choose · enter sign in · esc cancel"
            yield OptionList(*(self._option(index, c) for index, c in enumerate(self.choices)))
            yield Vertical(id="sign-in-vars")

    def _option(self, index: int, choice: AuthChoice) -> Option:
        mark = "● " if choice.id == self.remembered else "  "
        parts: list[tuple[str, str] | str] = [
            (mark, "$text-accent"),
            (choice.name or choice.id, "bold"),
            (f"  {choice.type_label}", "$text-muted"),
        ]
        if choice.description:
            parts.append((f"\n    {choice.description}", "$text-muted"))
        return Option(Content.assemble(*parts), id=str(index))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.choices:
            options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected)
    async def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        choice = self.choices[int(event.option.id or 0)]
        if choice.type != "env_var" or not choice.vars:
            self.dismiss(choice)
            return
        await self._ask_vars(choice)

    async def _ask_vars(self, choice: AuthChoice) -> None:
        """Show one masked input per variable of `choice`."""
        self.chosen = choice
        box = self.query_one("#sign-in-vars", Vertical)
        await box.remove_children()
        intro = f"{choice.name or choice.id}: enter the values to sign in with"
        if choice.link:
            intro += f" (get them at {choice.link})"
        widgets: list[Static | Input] = [Static(intro, classes="sign-in--intro")]
        for index, var in enumerate(choice.vars):
            label = var.name + (f" ({var.label})" if var.label else "")
            if var.optional:
                label += " (optional)"
            placeholder = "set in the environment" if os.environ.get(var.name) else var.name
            widgets.append(Static(label, classes="sign-in--label", markup=False))
            widgets.append(Input(password=True, placeholder=placeholder, id=f"sign-in-var-{index}"))
        widgets.append(Static("", classes="sign-in--error", markup=False))
        await box.mount_all(widgets)
        self.add_class("-vars")
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _entered(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        position = inputs.index(event.input) if event.input in inputs else len(inputs) - 1
        if position + 1 < len(inputs):
            inputs[position + 1].focus()
            return
        self._submit(inputs)

    def _submit(self, inputs: list[Input]) -> None:
        choice = self.chosen
        assert choice is not None
        values: dict[str, str] = {}
        for var, field in zip(choice.vars, inputs, strict=False):
            if field.value:
                values[var.name] = field.value
        missing = choice.with_values(values).missing(os.environ)
        if missing:
            error = self.query_one(".sign-in--error", Static)
            error.update("Needed: " + ", ".join(v.name for v in missing))
            first = choice.vars.index(missing[0])
            inputs[first].focus()
            return
        self.dismiss(choice.with_values(values))

    async def action_back(self) -> None:
        if self.has_class("-vars"):
            self.chosen = None
            self.remove_class("-vars")
            await self.query_one("#sign-in-vars", Vertical).remove_children()
            self.query_one(OptionList).focus()
            return
        self.dismiss(None)
