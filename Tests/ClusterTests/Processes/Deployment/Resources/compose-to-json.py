"""Reads compose files with PyYAML and writes them, merged, as one JSON document.

Usage: python compose-to-json.py OUTPUT.json COMPOSE.yaml [OVERRIDE.yaml ...]

The files after the first are merged in as `docker compose -f compose.yaml -f OVERRIDE` does: mappings
(such as `environment`) merged key by key, `volumes` merged by container path, `ports` concatenated,
any other value replaced. Used by ComposeFile.load in the deployment tests.
"""
import json
import sys

import yaml


def target(volume):
    """The container path of a volume, in the long or the short (SOURCE:TARGET[:MODE]) syntax."""
    return volume.get("target") if isinstance(volume, dict) else str(volume).split(":")[1 if ":" in str(volume) else 0]


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
        document = merge(document, yaml.safe_load(file))
with open(sys.argv[1], "w") as file:
    json.dump(document, file)
