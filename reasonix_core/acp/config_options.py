"""Model and effort as ACP session config options (``session/set_config_option``):
the session's provider's configured models, and the efforts it accepts. A session
keeps its provider (``Session.set_model``): other providers' models are not offered."""

from __future__ import annotations

from acp import RequestError
from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from reasonix_core.session.core import Session

MODEL, EFFORT = "model", "effort"


def config_options(session: Session) -> list[SessionConfigOptionSelect]:
    options = [
        SessionConfigOptionSelect(
            type="select",
            id=MODEL,
            name="Model",
            category="model",
            current_value=session.model,
            options=[SessionConfigSelectOption(value=m, name=m) for m in _models(session)],
        )
    ]
    levels = efforts(session)
    if levels:
        options.append(
            SessionConfigOptionSelect(
                type="select",
                id=EFFORT,
                name="Reasoning effort",
                category="thought_level",
                current_value=session.effort,
                options=[SessionConfigSelectOption(value=e, name=e) for e in levels],
            )
        )
    return options


def set_config_option(session: Session, config_id: str, value: str) -> None:
    """Apply one option for the next request; RequestError for an unknown option or value."""
    if config_id == MODEL and value in _models(session):
        from reasonix_core.config.resolve import resolve_model

        session.set_model(
            resolve_model(session.config, f"{session.resolved.provider.name}/{value}")
        )
    elif config_id == EFFORT and value in efforts(session):
        session.set_effort(value)
    else:
        raise RequestError.invalid_params({config_id: f"unknown option or value {value!r}"})


def _models(session: Session) -> list[str]:
    models = session.resolved.provider.all_models()
    return models if session.model in models else [session.model, *models]


def efforts(session: Session) -> list[str]:
    """The efforts the session's provider accepts (the current one first if not)."""
    levels = list(session.agent.provider.efforts())
    if levels and session.effort not in levels:
        levels.insert(0, session.effort)
    return levels
