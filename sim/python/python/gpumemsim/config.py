"""Hardware configs: ``show``, ``preset``, ``resolve``, ``check``, ``doc`` (``gpumemsim config ...``).

A config is named as everywhere in the package: ``None`` or ``"h100"`` the embedded default (what the
CLI uses without ``--config``), another preset's name (``presets()``), or a TOML file's path.
Overrides ``set={"l2.slices": 8}`` are the CLI's ``--set l2.slices=8``, checked the same way.
"""

import json
import os

from . import _native

__all__ = ["show", "preset", "resolve", "check", "doc", "presets", "sets"]


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return json.dumps(list(v))
    return str(v)


def sets(set):
    """``{"l2.slices": 8}`` (or a list of ``"KEY=VALUE"`` strings) as the CLI's ``--set`` arguments."""
    if set is None:
        return []
    if isinstance(set, dict):
        return [f"{k}={_value(v)}" for k, v in set.items()]
    if isinstance(set, str):
        return [set]
    return [str(s) for s in set]


def _name(config):
    return None if config is None else os.fspath(config)


def show(config=None, set=None):
    """The resolved config as TOML, each value with its origin (``gpumemsim config show``)."""
    return _native.config_show(_name(config), sets(set))


def resolve(config=None, set=None):
    """The resolved config (bases merged, overrides applied, validated) as a nested dict."""
    return json.loads(_native.config_json(_name(config), sets(set)))


def preset(name="h100", set=None):
    """An embedded preset (``"h100"``, ``"a100"``, ...) as a nested dict of every key."""
    if name not in presets():
        raise _native.Error(f"preset {name!r}: no such preset; presets: {', '.join(presets())}")
    return resolve(name, set)


def presets():
    """The embedded presets' names."""
    return list(_native.presets())


def check(*files):
    """``gpumemsim config check``: ``{file: None}`` for a valid file, ``{file: "the error"}`` else."""
    return dict(_native.config_check([os.fspath(f) for f in files]))


def doc(markdown=False):
    """Every key with its type, unit, allowed values, default and description."""
    return _native.config_doc(markdown)
