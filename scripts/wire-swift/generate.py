"""Writes the protobuf-c bridge of the Swift wire types (Sources/Wire/Generated) from proto/.

Reads the messages from `protoc --descriptor_set_out` (google.protobuf's descriptor module) and how they map
onto the Swift types from scripts/wire-swift/mapping.toml, and writes for every message
  - a builder (`CMessageBuilder.<message>(_:)`): the Swift value into the protobuf-c struct, in the arena;
  - a decoder (`init(_ c:)`): the unpacked protobuf-c struct into the Swift value, every string checked;
  - its payload walk (`appendPayloads(to:)`): its `bytes` fields in the builder's order, for pinning;
and the envelope's switch over `Message` both ways. Deterministic: the same input gives the same bytes.
Run by scripts/generate-wire-swift (`make proto`); docs/protocol.md, "Adding a field", explains the mapping.
"""

import os
import subprocess
import sys
import tempfile
import tomllib

from google.protobuf import descriptor_pb2

from builders import write_builder, write_envelope_builder, write_unwrap_builder
from decoders import write_decoder, write_envelope_decoder, write_enum_decoders
from payloads import write_payloads
from schema import HEADER, GeneratorError, Schema, Writer
from value_types import write_struct


def generate(schema):
    builders = Writer()
    builders(HEADER)
    builders("import CShiftworkProto")
    builders()
    builders("/// The builders of every message: each Swift value into its protobuf-c struct, in the arena.")
    builders("extension CMessageBuilder {")
    first = True
    for name in schema.order:
        if not (schema.is_generated(name) or schema.message_map(name).get("unwrap")):
            continue
        if not first:
            builders()
        first = False
        if schema.message_map(name).get("unwrap"):
            write_unwrap_builder(schema, name, builders)
        else:
            write_builder(schema, schema.messages[name], builders)
    builders()
    write_envelope_builder(schema, builders)
    builders("}")

    decoders = Writer()
    decoders(HEADER)
    decoders("import CShiftworkProto")
    decoders()
    decoders("// The decoders of every message: each unpacked protobuf-c struct into its Swift value. They only read;")
    decoders("// the caller owns the unpacked tree and frees it afterwards.")
    decoders()
    write_envelope_decoder(schema, decoders)
    decoders()
    write_enum_decoders(schema, decoders)
    for name in schema.order:
        if not schema.is_generated(name):
            continue
        write_decoder(schema, schema.messages[name], decoders)
        decoders()
    while decoders.lines and decoders.lines[-1] == "":
        decoders.lines.pop()

    payloads = Writer()
    payloads(HEADER)
    write_payloads(schema, payloads)

    outputs = {
        "MessageBuilders.generated.swift": builders.text(), "MessageDecoders.generated.swift": decoders.text(),
        "MessagePayloads.generated.swift": payloads.text(),
    }
    groups = {}
    for name in schema.order:
        group = schema.message_map(name).get("file")
        if group:
            groups.setdefault(group, []).append(name)
    for group, names in sorted(groups.items()):
        types = Writer()
        types(HEADER)
        for index, name in enumerate(names):
            if index:
                types()
            write_struct(schema, schema.messages[name], types)
        outputs[f"{group}.generated.swift"] = types.text()
    return outputs


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Sources/Wire/Generated")
    proto_root = os.path.join(root, "proto")
    protos = sorted(
        os.path.relpath(os.path.join(d, f), proto_root)
        for d, _, fs in os.walk(proto_root) for f in fs if f.endswith(".proto"))
    with tempfile.TemporaryDirectory() as tmp:
        descriptor_path = os.path.join(tmp, "descriptors.pb")
        subprocess.run(
            ["protoc", f"--proto_path={proto_root}", f"--descriptor_set_out={descriptor_path}", "--include_imports",
             "--include_source_info", *protos],
            check=True)
        files = descriptor_pb2.FileDescriptorSet()
        with open(descriptor_path, "rb") as handle:
            files.ParseFromString(handle.read())
    with open(os.path.join(root, "scripts/wire-swift/mapping.toml"), "rb") as handle:
        mapping = tomllib.load(handle)
    try:
        outputs = generate(Schema(sorted(files.file, key=lambda f: f.name), mapping))
    except GeneratorError as error:
        print(f"generate-wire-swift: {error}", file=sys.stderr)
        sys.exit(1)
    os.makedirs(out, exist_ok=True)
    for name, text in outputs.items():
        with open(os.path.join(out, name), "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
