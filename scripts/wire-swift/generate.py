"""Writes the Swift wire types and their protobuf-c bridge (Sources/Wire/Generated) from proto/.

Reads the messages from `protoc --descriptor_set_out` (google.protobuf's descriptor module) and how they map
onto the Swift types from scripts/wire-swift/mapping.toml, and writes, one group of related messages (mapping
`file`) a file each:
  - GROUP.generated.swift: the Swift value types (value_types.py), and the Swift enums of their typed oneofs
    (`TaskOutcome`: enum_types.py);
  - GROUP+Builders.generated.swift: their builders (`CMessageBuilder.<message>(_:)`), the Swift value into the
    protobuf-c struct, in the arena (builders.py);
  - GROUP+Decoders.generated.swift: their decoders (`init(_ c:)`), the unpacked protobuf-c struct into the Swift
    value, every string checked (decoders.py);
and Message+Builders / Message+Decoders (the envelope's switch over `Message` both ways, the list bodies), Enums
(the proto's enums as Swift enums: enum_types.py), Enums+Decoders (the enums whose unknown values are errors) and
MessagePayloads (every `bytes` field in the builders' order, for pinning: payloads.py). Deterministic: the same
input gives the same bytes; a `*.generated.swift` file in the output directory that is no longer generated is
deleted. scripts/wire-swift/README.md lists what stays hand-written in Sources/Wire.
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
from enum_types import oneof_enums, write_enum, write_oneof_enum
from payloads import write_payloads
from schema import HEADER, GeneratorError, Schema, Writer
from value_types import write_struct

GENERATED_SUFFIX = ".generated.swift"


def groups_of(schema):
    """The messages of each generated file group (mapping `file`), in proto order. A message that gets a builder and a
    decoder needs a group: they go into its files."""
    groups = {}
    for name in schema.order:
        group = schema.message_map(name).get("file")
        if group:
            groups.setdefault(group, []).append(name)
        elif schema.is_generated(name):
            raise GeneratorError(
                f"{name}: say in scripts/wire-swift/mapping.toml which generated file its Swift type, builder and "
                f'decoder go into ([messages.{name}] file = "...Messages", a group of related messages), or '
                "`skip = true` if it is coded by hand")
    return groups


def write_group_builders(schema, group, names, w):
    w(HEADER)
    w("import CShiftworkProto")
    w()
    w(f"/// The builders of the messages of {group}.generated.swift: each Swift value into its protobuf-c struct, in the")
    w("/// arena.")
    w("extension CMessageBuilder {")
    for index, name in enumerate(names):
        if index:
            w()
        write_builder(schema, schema.messages[name], w)
    w("}")


def write_group_decoders(schema, group, names, w):
    w(HEADER)
    w("import CShiftworkProto")
    w()
    w(f"// The decoders of the messages of {group}.generated.swift: each unpacked protobuf-c struct into its Swift")
    w("// value. They only read; the caller owns the unpacked tree and frees it afterwards.")
    for name in names:
        w()
        write_decoder(schema, schema.messages[name], w)


def write_message_builders(schema, w):
    """The envelope's builder, and those of the messages that are only a list (`unwrap`)."""
    w(HEADER)
    w("import CShiftworkProto")
    w()
    w("/// The envelope's builder (its body the ``Message``'s case) and those of the bodies that are only a list.")
    w("extension CMessageBuilder {")
    for name in schema.order:
        if schema.message_map(name).get("unwrap"):
            write_unwrap_builder(schema, name, w)
            w()
    write_envelope_builder(schema, w)
    w("}")


def write_message_decoders(schema, w):
    w(HEADER)
    w("import CShiftworkProto")
    w()
    w("// The envelope's decoder: its body into the ``Message``'s case (a list body into the case's array).")
    w()
    write_envelope_decoder(schema, w)


def write_enums(schema, w):
    w(HEADER)
    w("import CShiftworkProto")
    w()
    w("// The decoders of the enums whose unknown values make a message unreadable (WireError.invalidField).")
    w()
    write_enum_decoders(schema, w)
    while w.lines and w.lines[-1] == "":
        w.lines.pop()


def generate(schema):
    """Every generated file, by name: per group (mapping `file`) its value types (and the Swift enums of their typed
    oneofs), builders and decoders; the envelope's builder and decoder; the enums and their decoders; the payload
    walk."""
    outputs = {}

    def emit(name, write, *arguments):
        writer = Writer()
        write(schema, *arguments, writer)
        outputs[name] = writer.text()

    for group, names in sorted(groups_of(schema).items()):
        emit(f"{group}.generated.swift", write_group_types, names)
        built = [name for name in names if schema.is_generated(name)]
        if built:
            emit(f"{group}+Builders.generated.swift", write_group_builders, group, built)
            emit(f"{group}+Decoders.generated.swift", write_group_decoders, group, built)
    emit("Message+Builders.generated.swift", write_message_builders)
    emit("Message+Decoders.generated.swift", write_message_decoders)
    emit("Enums.generated.swift", write_enum_types)
    emit("Enums+Decoders.generated.swift", write_enums)
    emit("MessagePayloads.generated.swift", write_payload_file)
    return outputs


def write_group_types(schema, names, w):
    w(HEADER)
    for index, name in enumerate(names):
        if index:
            w()
        write_struct(schema, schema.messages[name], w)
    for swift, (message, oneof) in oneof_enums(schema).items():
        if message.name in names:
            w()
            write_oneof_enum(schema, swift, message, oneof, w)


def write_enum_types(schema, w):
    w(HEADER)
    first = True
    for name in schema.enums:
        if schema.enum_map(name).get("skip"):
            continue
        if not first:
            w()
        first = False
        write_enum(schema, name, w)


def write_payload_file(schema, w):
    w(HEADER)
    write_payloads(schema, w)


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
    for name in sorted(os.listdir(out)):
        if name.endswith(GENERATED_SUFFIX) and name not in outputs:
            os.remove(os.path.join(out, name))  # no longer generated (a group renamed, a file split)
    for name, text in outputs.items():
        with open(os.path.join(out, name), "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
