"""What ``ask_user`` asks and what the user answers: the tool's own types, below the
approver (permission/approver.py) that carries them to the user and re-exports them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """A question the model asks the user (``ask_user``)."""

    question: str
    options: tuple[str, ...]
    multi_select: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionAnswer:
    """The user's answer to a :class:`Question`."""

    question: str
    answers: tuple[str, ...] = ()
    note: str = ""
