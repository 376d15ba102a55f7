"""Loading the settings (tasks/config.py holds what they are): defaults, then a TOML file
(`LILO_CONFIG` or `--config`), then environment variables `LILO_<SECTION>__<FIELD>` (e.g.
`LILO_LLM__BASE_URL`), then explicit overrides from the CLI or a flow run's parameters
(`run_settings`), with a named profile's values under the explicit ones. A run's parameters
shape the run but never say where things are or which key goes where: PLACE and SECRET
settings come only from the process's own file and environment, or from the command that
started the flow in this very process (`flow_parameters`). A file or variable that cannot be
read is a `ConfigError` naming it.
"""

from __future__ import annotations

import copy
import difflib
import os
import secrets
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError
from pydantic_settings.exceptions import SettingsError

from lilo.tasks.config import (
    BOUND,
    MODEL_PLACES,
    UNTAKEN,
    Role,
    Settings,
    fields_of,
    given_roles,
    nest_dotted,
    walk_fields,
)
from lilo.tasks.errors import InputError, LiloError
from lilo.tasks.files import FileTooLarge, read_bounded

__all__ = [
    "PROFILES",
    "ConfigError",
    "ParameterRefused",
    "Select",
    "flow_parameters",
    "load_settings",
    "run_settings",
    "setting_path",
]

# A setting named through the model: `lambda s: s.generate.target_words`.
Select = Callable[[Settings], object]


# PLACE and SECRET values this process holds for the flows it runs in itself: a flow
# parameter names each by a random reference (`flow_parameters`), which only this process
# can turn back into the value (`run_settings`).
_HELD: dict[str, Any] = {}
_REFERENCE = "lilo-held:"

# Named sets of settings (`profile`, `--profile`): each value applies unless the same setting
# is given explicitly (TOML file, LILO_* variable, `--set`, a flow's overrides).
PROFILES: dict[str, dict[str, Any]] = {
    # The setting behind the paper's Table 2 (section 6.1 and the published scripts, see
    # docs/reference.md): generation at 0.3 with the reference's output limits, the four
    # methods at 4k/8k/16k words, RAL-Writer a=60 b=0.3 k=12 on 1,024/256 chunks, Compress at
    # rate 0.5, GPT-4o-mini judging at 0. The checklist judge at 0.8: the published quality
    # script's temperature, which produced the published S_q, where the paper's text says 0.
    "paper": {
        "llm.temperature": 0.3,
        "generate.methods": ["single", "agentwrite", "compress", "ral_writer"],
        "generate.target_words": [4000, 8000, 16000],
        "generate.single_max_tokens": 32_768,
        "generate.step_max_tokens": 8192,
        "generate.compress_ratio": 0.5,
        "generate.paper_order": "listing",
        "generate.ral.position_formula": "reference",
        "generate.ral.a": 60.0,
        "generate.ral.b": 0.3,
        "generate.ral.k": 12,
        "generate.ral.chunk_words": 1024,
        "generate.ral.overlap_words": 256,
        "generate.ral.context_limit_tokens": 110_000,
        "judge.backend": "openai",
        "judge.model": "gpt-4o-mini",
        "judge.temperature": 0.0,
        "judge.checklist_temperature": 0.8,
        # the reference's scripts send no output limit to the judge, and keep an empty reply
        "judge.answer_max_tokens": 0,
        "judge.grade_max_tokens": 0,
        "judge.checklist_max_tokens": 0,
        "judge.winrate_max_tokens": 0,
        "llm.empty_reply": "keep",
    },
    # `lilo demo --local-model`: a demo that a 270M model on llama.cpp runs in minutes on 2
    # cores: it writes the Single and RAL-Writer summaries of one sample at 200 words
    # (RAL-Writer restates 4 chunks of 256 words); the offline engine writes the 5 QA
    # pairs (qa.writer: the model writes none that pass the checks) and judges (its 16
    # checklist calls per summary alone would take the model minutes).
    "local-model": {
        "judge.backend": "offline",
        "generate.samples": 1,
        "generate.methods": ["single", "ral_writer"],
        "generate.target_words": [200],
        # 200 words are about 270 tokens: a base model that rambles stops at 3 times that.
        "generate.single_max_tokens": 800,
        "generate.step_max_tokens": 400,
        "generate.plan_max_tokens": 400,
        # A plan is asked once: the model's are unusable (it echoes the prompt), each re-ask
        # costs a read of the three papers.
        "generate.ral.plan_retries": 0,
        # A plan is a step per line, and this model's plan echoes the papers (21 "steps" of
        # LaTeX lines within plan_max_tokens, 21 writer calls): its first 2 are kept.
        "generate.plan_steps_cap": 2,
        "generate.ral.k": 4,
        "generate.ral.chunk_words": 256,
        "generate.ral.overlap_words": 64,
        "qa.writer": "offline",
        "qa.single_per_paper": 1,
        "qa.cross_per_sample": 2,
        "qa.quota_single": 3,
        "qa.quota_cross": 2,
    },
}


class ConfigError(InputError):
    """Settings that cannot be read: a config file or a LILO_* variable; the message names
    which one and, where it can, the line."""


class ParameterRefused(InputError):
    """A run's parameters set where things are or a key (a PLACE or SECRET setting): the
    message names each, and where to set them instead."""


class _Reads:
    """Records the attributes read from it: the path of a `Select`."""

    def __init__(self, parts: tuple[str, ...] = ()) -> None:
        self.parts = parts

    def __getattr__(self, name: str) -> _Reads:
        return _Reads((*self.parts, name))


def setting_path(select: Select) -> str:
    """The dotted name of the setting `select` reads (`lambda s: s.generate.target_words`
    -> "generate.target_words"): code names a setting through the model, so a misspelt or
    renamed one fails type checking, and here, rather than travelling as a string."""
    read = select(cast(Settings, _Reads()))
    path = ".".join(read.parts) if isinstance(read, _Reads) else ""
    if path not in {name for name, _ in walk_fields(Settings)}:  # methods' sections included
        raise LiloError(f"{path or select!r} is not a setting: select one, e.g. s.llm.model")
    return path


def flow_parameters(settings: Settings) -> dict[str, Any]:
    """`settings` as the `overrides` of a flow run in this process (a command runs
    its flows in itself). A run's parameters may not say where things are or carry a
    key, and Prefect stores and shows them: each PLACE and SECRET value (a model too), and
    each BOUND one (this process's own, which it may have raised), is a reference only this
    process can resolve (`run_settings`); a flow run anywhere else gets them from its own
    configuration."""
    data = settings.model_dump(mode="json")
    for name, role in walk_fields(Settings):
        if role in UNTAKEN or role is BOUND or name in MODEL_PLACES:
            *parents, leaf = name.split(".")
            node = data
            for part in parents:
                node = node[part]
            node[leaf] = _reference(settings.value_at(name))
    return data


def _reference(value: Any) -> str:
    for reference, held in _HELD.items():
        if type(held) is type(value) and held == value:
            return reference
    reference = _REFERENCE + secrets.token_hex(8)
    _HELD[reference] = value
    return reference


def run_settings(parameters: dict[str, Any] | None) -> Settings:
    """The settings of a flow run: this process's own (`load_settings`: its LILO_CONFIG
    file, its LILO_* environment) under the run's `parameters`, dotted or nested settings.
    Parameters shape the run (surveys, methods, lengths, samples, method settings); a
    PLACE or SECRET setting among them (a folder, an endpoint, a key, a sweep of one) is
    refused with `ParameterRefused` naming each, unless it is a reference this process made
    (`flow_parameters`, for a flow a command runs in itself); so is a model (MODEL_PLACES),
    a BOUND setting raised past this process's own value, and a key that names no setting
    (a mis-cased one too), with the nearest valid name."""
    given = copy.deepcopy(nest_dotted(parameters or {}))  # references are resolved in place
    unknown = _unknown(given, Settings)
    if unknown:
        raise ParameterRefused(f"a run's parameters name no setting: {'; '.join(unknown)}")
    refused: list[str] = []
    bounds: list[str] = []
    for name, role, value in given_roles(given, Settings):
        if isinstance(value, str) and value in _HELD:
            _set(given, name, _HELD[value])  # this process's own value
        elif role is BOUND:
            bounds.append(name)
        elif role in UNTAKEN or name in MODEL_PLACES:
            refused.append(name)
    sweep = given.get("generate", {}).get("sweep", {})
    roles = dict(walk_fields(Settings))
    refused += [f"generate.sweep[{k}]" for k in sweep if roles.get(k, Role.OUTPUT) in UNTAKEN]
    if refused:
        raise ParameterRefused(
            f"a run's parameters may not set {', '.join(refused)}: folders, endpoints and "
            "keys come from the worker's own configuration (its LILO_CONFIG file or LILO_* "
            "variables); set them there"
        )
    settings = load_settings(None, given)
    if bounds:
        own = load_settings(None)
        raised = [
            f"{name}={settings.value_at(name)!r} (the worker's: {own.value_at(name)!r})"
            for name in bounds
            if settings.value_at(name) > own.value_at(name)
        ]
        if raised:
            raise ParameterRefused(
                f"a run's parameters may lower bounds and resources, not raise them: "
                f"{', '.join(raised)}; raise them in the worker's own configuration"
            )
    return settings


def _dotted(name: str, value: Any) -> list[str]:
    """The dotted names of the leaves of `value`, given under `name`."""
    if not isinstance(value, dict) or not value:
        return [name]
    return [leaf for key, inner in value.items() for leaf in _dotted(f"{name}.{key}", inner)]


def _unknown(given: dict[str, Any], model: type[Any], prefix: str = "") -> list[str]:
    """Each key of nested `given` that names no setting (case counts: `LLM.BASE_URL` is
    none), with the nearest valid name."""
    found = []
    fields = fields_of(model)
    for key, value in given.items():
        field = fields.get(key)
        if field is None:
            names = [n for n, _ in walk_fields(Settings)]
            for name in _dotted(f"{prefix}{key}", value):
                lowered = {n.lower(): n for n in names}
                near = [lowered[name.lower()]] if name.lower() in lowered else []
                near = near or difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.6)
                hint = f" (did you mean {near[0]}?)" if near else ""
                found.append(f"{name} is not a setting{hint}")
            continue
        kind = field.annotation
        if isinstance(value, dict) and isinstance(kind, type) and hasattr(kind, "model_fields"):
            found += _unknown(value, kind, f"{prefix}{key}.")
    return found


def _set(nested: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        nested = nested[part]
    nested[leaf] = value


def load_settings(path: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults < TOML file < environment < overrides. A file or variable that cannot be
    read raises ConfigError; a value out of range, pydantic's ValidationError."""
    if path is None and os.environ.get("LILO_CONFIG"):
        path = Path(os.environ["LILO_CONFIG"])
    try:
        from_env = Settings().model_dump(mode="python", exclude_defaults=True)
    except SettingsError as exc:
        raise ConfigError(_env_problem(exc)) from exc
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        problems = "; ".join(f"{_variable(e['loc'])}: {e['msg']}" for e in errors)
        shapes = {"tuple_type", "list_type", "dict_type", "model_type"}
        hint = f" ({_JSON_HINT})" if any(e["type"] in shapes for e in errors) else ""
        raise ConfigError(problems + hint) from exc
    # Explicit values beat the environment in pydantic-settings, so re-apply the environment.
    settings = _from_file(path) if path else Settings()
    from_file = settings.model_dump(mode="python", exclude_unset=True) if path else {}
    settings = settings.with_overrides(from_env).with_overrides(overrides or {})
    return _with_profile(settings, from_file, from_env, overrides or {})


def _with_profile(settings: Settings, *given: dict[str, Any]) -> Settings:
    """`settings` with its profile's values, except those of settings `given` explicitly."""
    explicit = {key for values in given for key in _leaves(nest_dotted(values))}
    values = PROFILES.get(settings.profile, {})
    return settings.with_overrides({k: v for k, v in values.items() if k not in explicit})


def _leaves(nested: dict[str, Any], prefix: str = "") -> set[str]:
    """The dotted keys of a nested dict's values."""
    keys: set[str] = set()
    for key, value in nested.items():
        dotted = f"{prefix}{key}"
        keys |= _leaves(value, f"{dotted}.") if isinstance(value, dict) else {dotted}
    return keys


_JSON_HINT = """lists and sections are JSON there, e.g. LILO_SURVEYS='["2301.00001"]'"""


# A settings file is a few KB; a bigger one is not one.
_MAX_CONFIG_BYTES = 1_000_000


def _from_file(path: Path) -> Settings:
    if path.is_dir():
        raise ConfigError(f"{path} is a folder: --config (or LILO_CONFIG) names a TOML file")
    try:
        text = read_bounded(path, _MAX_CONFIG_BYTES).decode("utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such config file: fix --config or LILO_CONFIG") from exc
    except FileTooLarge as exc:
        raise ConfigError(f"{exc}: give a TOML settings file") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file ({exc.reason}): give a TOML file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply to read: give a TOML file") from exc
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        lines = _setting_lines(text)
        problems = "; ".join(
            f"{path}:{_line_of(lines, e['loc'])}: {'.'.join(map(str, e['loc']))}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ConfigError(problems) from exc


def _setting_lines(text: str) -> dict[str, int]:
    """Where each dotted setting and each `[section]` header of a TOML text is first set:
    read once for all of a file's errors (pydantic reports where a value sits in the data,
    tomllib not at all)."""
    found: dict[str, int] = {}
    section = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("[") and not line.startswith("[["):
            section = line.strip("[] ")
            found.setdefault(f"[{section}]", n)
        elif "=" in line:
            key = line.split("=", 1)[0].strip().strip("\"'")
            found.setdefault(".".join(filter(None, (section, key))), n)
    return found


def _line_of(lines: dict[str, int], loc: tuple[int | str, ...]) -> int:
    """The line that sets `loc` (a setting or a `[section]`), else its section's header
    line, else 1."""
    keys = [str(k) for k in loc if isinstance(k, str)]
    dotted = ".".join(keys)
    return lines.get(dotted) or lines.get(f"[{dotted}]") or lines.get(f"[{'.'.join(keys[:-1])}]", 1)


def _variable(loc: tuple[int | str, ...]) -> str:
    """The LILO_* variable that sets a setting, e.g. LILO_LLM__CONCURRENCY."""
    return "LILO_" + "__".join(str(k) for k in loc if isinstance(k, str)).upper()


def _env_problem(exc: SettingsError) -> str:
    """Which LILO_* variable pydantic-settings could not parse, and the format it wants."""
    field = str(exc).split('"')[1] if str(exc).count('"') >= 2 else ""
    names = sorted(k for k in os.environ if k.upper().startswith(f"LILO_{field.upper()}"))
    return f"{' or '.join(names) or 'a LILO_* variable'} is not valid JSON ({_JSON_HINT})"
