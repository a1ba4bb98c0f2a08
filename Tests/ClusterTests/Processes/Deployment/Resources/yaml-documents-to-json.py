"""Reads a stream of YAML documents (as `kubectl kustomize` prints them) and writes them as one JSON list.

Usage: python yaml-documents-to-json.py INPUT.yaml OUTPUT.json

Empty documents are left out. Used by KubernetesManifests in the deployment tests.
"""
import json
import sys

import yaml

with open(sys.argv[1]) as file:
    documents = [document for document in yaml.safe_load_all(file) if document is not None]
with open(sys.argv[2], "w") as file:
    json.dump(documents, file)
