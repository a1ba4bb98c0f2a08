"""Reads compose files with PyYAML and writes them, merged, as one JSON document.

Usage: python compose-to-json.py OUTPUT.json COMPOSE.yaml [OVERRIDE.yaml ...]

The files after the first are merged in as `docker compose -f compose.yaml -f OVERRIDE` does: mappings
(such as `environment`) merged key by key, `volumes` merged by container path, `ports` concatenated,
any other value replaced. Strings are interpolated as compose does, with each variable's default and not
this process's environment (so that the tests read the file as it runs unconfigured): `${VAR:-default}` and
`${VAR-default}` become the default, `${VAR}` and `$VAR` an empty string, `$$` a `$`. Used by
ComposeFile.load in the deployment tests.
"""
import json
import re
import sys

import yaml


def target(volume):
    """The container path of a volume, in the long or the short (SOURCE:TARGET[:MODE]) syntax."""
    return volume.get("target") if isinstance(volume, dict) else str(volume).split(":")[1 if ":" in str(volume) else 0]


INTERPOLATION = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def interpolate(value):
    """`value` with every variable replaced by its default (or nothing), in strings at any depth."""
    if isinstance(value, dict):
        return {k: interpolate(v) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v) for v in value]
    if isinstance(value, str):
        return INTERPOLATION.sub(lambda m: "$" if m.group(1) else (m.group(3) or ""), value)
    return value


def merge(base, override, key=None):
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for k, v in override.items():
            merged[k] = merge(base[k], v, k) if k in base else v
        return merged
    if key == "volumes" and isinstance(base, list) and isinstance(override, list):
        replaced = {target(v) for v in override}
        return [v for v in base if target(v) not in replaced] + override
    if key == "ports" and isinstance(base, list) and isinstance(override, list):
        return base + override
    return override


document = {}
for path in sys.argv[2:]:
    with open(path) as file:
        document = merge(document, interpolate(yaml.safe_load(file)))
with open(sys.argv[1], "w") as file:
    json.dump(document, file)
