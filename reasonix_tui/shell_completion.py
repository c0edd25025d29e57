"""``reasonix completion bash|zsh|fish``: shell completion scripts built from the CLI's
own parser, so a new flag or command completes without a second list to keep.

Not the TUI's ``/`` and ``@`` menus (those are :mod:`reasonix_tui.completion`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

__all__ = ["completion_script"]

# Options whose value is a path: the shell completes file names there.
_PATH_METAVARS = frozenset({"PATH", "FILE"})


@dataclass
class _Command:
    options: list[str] = field(default_factory=list)
    # option -> its fixed choices ("" list: a free value, None: a path)
    values: dict[str, list[str] | None] = field(default_factory=dict)
    subcommands: dict[str, _Command] = field(default_factory=dict)
    # choices of a positional (``completion bash|zsh|fish``)
    positional: list[str] = field(default_factory=list)


def _describe(parser: argparse.ArgumentParser) -> _Command:
    command = _Command()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                command.subcommands[name] = _describe(sub)
            continue
        if not action.option_strings:
            command.positional.extend(str(c) for c in action.choices or ())
            continue
        command.options.extend(action.option_strings)
        if action.nargs == 0:
            continue
        if action.choices:
            value: list[str] | None = [str(c) for c in action.choices]
        elif action.metavar in _PATH_METAVARS or "Path" in str(action.type):
            value = None
        else:
            value = []
        for option in action.option_strings:
            command.values[option] = value
    return command


def _walk(command: _Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], _Command]]:
    out = [(path, command)]
    for name, sub in command.subcommands.items():
        out.extend(_walk(sub, (*path, name)))
    return out


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    root = _describe(parser)
    prog = parser.prog
    if shell == "fish":
        return _fish(prog, root)
    script = _bash(prog, root)
    if shell == "zsh":
        # zsh runs bash completion functions through bashcompinit.
        return (
            "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"
            + script
        )
    return script


def _bash(prog: str, root: _Command) -> str:
    fn = f"_{prog}_complete"
    value_cases: dict[str, str] = {}
    words_cases: list[str] = []
    for path, command in _walk(root):
        for option, value in command.values.items():
            if value is None:
                value_cases[option] = 'COMPREPLY=($(compgen -f -- "$cur")); return'
            elif value:
                value_cases[option] = (
                    f'COMPREPLY=($(compgen -W "{" ".join(value)}" -- "$cur")); return'
                )
            else:
                value_cases.setdefault(option, "return")
        words = [*command.options, *command.subcommands, *command.positional]
        words_cases.append(f'        "{" ".join(path)}") words="{" ".join(words)}" ;;')
    names = sorted({name for path, _ in _walk(root) for name in path})
    lines = [
        f"# bash completion for {prog} (reasonix completion bash)",
        f"{fn}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local path="" word words',
        '    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do',
        '        case "$word" in',
        f'            {"|".join(names)}) path="${{path:+$path }}$word" ;;',
        "        esac",
        "    done",
        '    case "$prev" in',
        *(f"        {option}) {action} ;;" for option, action in sorted(value_cases.items())),
        "    esac",
        '    case "$path" in',
        *words_cases,
        '        *) words="" ;;',
        "    esac",
        '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        f"complete -o default -F {fn} {prog}",
        "",
    ]
    return "\n".join(lines)


def _fish(prog: str, root: _Command) -> str:
    lines = [f"# fish completion for {prog} (reasonix completion fish)"]
    for path, command in _walk(root):
        if not path:
            condition = "__fish_use_subcommand"
        else:
            condition = " and ".join(f"__fish_seen_subcommand_from {name}" for name in path)
        for name in command.subcommands:
            lines.append(f"complete -c {prog} -n '{condition}' -f -a {name}")
        if command.positional:
            lines.append(
                f"complete -c {prog} -n '{condition}' -f -a '{' '.join(command.positional)}'"
            )
        for option in command.options:
            value = command.values.get(option, [])
            spec = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            if value is None:
                extra = " -r -F"
            elif value:
                extra = f" -x -a '{' '.join(value)}'"
            elif option in command.values:
                extra = " -x"
            else:
                extra = ""
            lines.append(f"complete -c {prog} -n '{condition}' {spec}{extra}")
    return "\n".join(lines) + "\n"
