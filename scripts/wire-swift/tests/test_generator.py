"""Unit tests of the wire-swift generator itself (scripts/wire-swift), on small schemas built here: the name
conversions, the mapping's checks, that the payload walk visits `bytes` fields in the builders' order, members
held by reference (`boxed`, a message that contains itself), `unreadableField`, and the files per group.
Run by `scripts/generate-wire-swift --self-test` (the Swift test WireSwiftGeneratorTests calls it), so that a
generator change that breaks them fails before the staleness test compares any output."""

import os
import re
import sys
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from google.protobuf import descriptor_pb2  # noqa: E402

from builders import write_builder, write_envelope_builder  # noqa: E402
from decoders import write_decoder, write_envelope_decoder  # noqa: E402
from enum_types import case_name, write_enum  # noqa: E402
from generate import generate  # noqa: E402
from payloads import has_bytes, write_payloads  # noqa: E402
from schema import PACKAGE, GeneratorError, Schema, Writer, camel_to_snake, lower_camel, oneof_constant  # noqa: E402
from value_types import write_struct  # noqa: E402

FD = descriptor_pb2.FieldDescriptorProto


def field(name, number, kind, type_name=None, repeated=False, oneof_index=None):
    f = FD(name=name, number=number, type=kind, label=FD.LABEL_REPEATED if repeated else FD.LABEL_OPTIONAL)
    if type_name:
        f.type_name = f".{PACKAGE}.{type_name}"
    if oneof_index is not None:
        f.oneof_index = oneof_index
    return f


def small_schema(mapping_text="", extend=None):
    """Envelope { major; oneof body { Blob blob = 10; Plain plain = 11; } }, Blob { bytes first; Inner inner;
    repeated Inner many; bytes last; }, Inner { string name; bytes data; }, Plain { string text; }."""
    file = descriptor_pb2.FileDescriptorProto(name="small.proto", package=PACKAGE, syntax="proto3")
    inner = file.message_type.add(name="Inner")
    inner.field.extend([field("name", 1, FD.TYPE_STRING), field("data", 2, FD.TYPE_BYTES)])
    blob = file.message_type.add(name="Blob")
    blob.field.extend([
        field("first", 1, FD.TYPE_BYTES), field("inner", 2, FD.TYPE_MESSAGE, "Inner"),
        field("many", 3, FD.TYPE_MESSAGE, "Inner", repeated=True), field("last", 4, FD.TYPE_BYTES),
    ])
    plain = file.message_type.add(name="Plain")
    plain.field.extend([field("text", 1, FD.TYPE_STRING)])
    envelope = file.message_type.add(name="Envelope")
    envelope.oneof_decl.add(name="body")
    envelope.field.extend([
        field("major", 1, FD.TYPE_UINT32),
        field("blob", 10, FD.TYPE_MESSAGE, "Blob", oneof_index=0),
        field("plain", 11, FD.TYPE_MESSAGE, "Plain", oneof_index=0),
    ])
    if extend:
        extend(file)
    mapping = tomllib.loads(
        '[messages.Envelope]\nswift = "Message"\n[messages.Envelope.fields.major]\nconstant = "1"\n'
        '[messages.Envelope.oneofs.body]\nmessage = true\n' + mapping_text)
    return Schema([file], mapping)


class NameTests(unittest.TestCase):
    def test_lower_camel_spells_id_as_ID(self):
        self.assertEqual(lower_camel("task_id"), "taskID")
        self.assertEqual(lower_camel("from_task_id"), "fromTaskID")
        self.assertEqual(lower_camel("s3_endpoint"), "s3Endpoint")
        self.assertEqual(lower_camel("data"), "data")

    def test_camel_to_snake_is_protobuf_c_s_lower_case(self):
        self.assertEqual(camel_to_snake("TiltShiftParameters"), "tilt_shift_parameters")
        self.assertEqual(camel_to_snake("Envelope"), "envelope")

    def test_oneof_constant_is_protobuf_c_s_case_name(self):
        schema = small_schema()
        envelope = schema.messages["Envelope"]
        self.assertEqual(oneof_constant(envelope, "body", envelope.field[1]), "SHIFTWORK__V1__ENVELOPE__BODY_BLOB")


class MappingTests(unittest.TestCase):
    def test_the_mapping_file_parses_and_names_only_what_proto_declares(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "mapping.toml"), "rb") as handle:
            mapping = tomllib.load(handle)
        self.assertIn("Envelope", mapping["messages"])
        self.assertTrue(mapping["messages"]["Envelope"]["oneofs"]["body"]["message"])

    def test_a_field_the_message_lacks_is_an_error(self):
        with self.assertRaisesRegex(GeneratorError, r"Blob has no field missing"):
            small_schema("[messages.Blob.fields.missing]\nswift = \"x\"\n")

    def test_a_message_proto_lacks_is_an_error(self):
        with self.assertRaisesRegex(GeneratorError, r"\[messages.Nowhere\] names no message"):
            small_schema("[messages.Nowhere]\nskip = true\n")

    def test_an_unknown_key_is_an_error(self):
        with self.assertRaisesRegex(GeneratorError, r"\[messages.Blob.fields.inner\] has an unknown key 'computed'"):
            small_schema("[messages.Blob.fields.inner]\ncomputed = true\n")
        with self.assertRaisesRegex(GeneratorError, r"\[messages.Blob\] has an unknown key 'flie'"):
            small_schema("[messages.Blob]\nflie = \"Blobs\"\n")

    def test_an_unknown_section_is_an_error(self):
        with self.assertRaisesRegex(GeneratorError, r"unknown section \[extra\]"):
            small_schema("[extra]\nkey = 1\n")

    def test_member_names_follow_the_mapping_else_lower_camel(self):
        schema = small_schema("[messages.Inner.fields.data]\nswift = \"payload\"\n")
        inner = schema.messages["Inner"]
        self.assertEqual(schema.member(inner, inner.field[0]), "name")
        self.assertEqual(schema.member(inner, inner.field[1]), "payload")
        self.assertEqual(schema.swift_type(".shiftwork.v1.Envelope"), "Message")


class CodecFieldTests(unittest.TestCase):
    def test_a_codec_field_of_the_envelope_is_left_to_wire_codec(self):
        def extend(file):
            envelope = next(m for m in file.message_type if m.name == "Envelope")
            envelope.field.append(field("witnessed", 3, FD.TYPE_MESSAGE, "Plain"))
        schema = small_schema("[messages.Envelope.fields.witnessed]\ncodec = true\n", extend=extend)
        builder, decoder, walk = Writer(), Writer(), Writer()
        write_envelope_builder(schema, builder)
        write_envelope_decoder(schema, decoder)
        write_payloads(schema, walk)
        for text in (builder.text(), decoder.text(), walk.text()):
            self.assertNotIn("witnessed", text)
        self.assertIn("c.pointee.major = 1", builder.text())


class PayloadOrderTests(unittest.TestCase):
    def test_only_messages_that_reach_bytes_have_a_walk(self):
        schema = small_schema()
        self.assertTrue(has_bytes(schema, "Blob"))
        self.assertTrue(has_bytes(schema, "Inner"))
        self.assertFalse(has_bytes(schema, "Plain"))

    def test_the_walk_visits_bytes_in_the_builders_order(self):
        """The `bytes(...)` calls of each builder and the `payloads.append` / `appendPayloads` calls of its
        walk name the same members in the same order."""
        schema = small_schema("[messages.Blob.fields.last]\nswift = \"trailer\"\n")
        for name in ("Blob", "Inner"):
            builder, walk = Writer(), Writer()
            write_builder(schema, schema.messages[name], builder)
            write_payloads(schema, walk)
            built = re.findall(r"bytes\(m\.(\w+)\)|repeated\(m\.(\w+)\)|= inner\((value)\)", builder.text())
            built = [next(part for part in match if part) for match in built]
            section = walk.text().split(f"extension {name} {{", 1)[1].split("\n}\n", 1)[0]
            walked = re.findall(r"payloads\.append\(self\.(\w+)\)|for element in self\.(\w+)|(value)\.appendPayloads", section)
            walked = [next(part for part in match if part) for match in walked]
            self.assertEqual(walked, built, f"{name}: builder\n{builder.text()}\nwalk\n{section}")
        self.assertIn("payloads.append(self.trailer)", walk.text())

    def test_the_envelope_walk_covers_the_bodies_with_bytes_only(self):
        schema = small_schema()
        walk, builder = Writer(), Writer()
        write_payloads(schema, walk)
        write_envelope_builder(schema, builder)
        self.assertIn("case .blob(let value):\n            value.appendPayloads(to: &payloads)", walk.text())
        self.assertIn("case .plain:\n            break", walk.text())
        self.assertNotIn("extension Plain", walk.text())

    def test_repeated_bytes_is_refused(self):
        schema = small_schema()
        schema.messages["Inner"].field[1].label = FD.LABEL_REPEATED
        with self.assertRaisesRegex(GeneratorError, r"Inner.data: repeated bytes is not supported"):
            write_payloads(schema, Writer())


def commented(file):
    """Gives every message and field of `file` a comment, as a generated value type needs."""
    for index, message in enumerate(file.message_type):
        file.source_code_info.location.add(path=[4, index], leading_comments=f" {message.name}.")
        for field_index, _ in enumerate(message.field):
            file.source_code_info.location.add(path=[4, index, 2, field_index], trailing_comments=" a field")


def node_message(file):
    """Node { string name; Node next; repeated Node children; }: a message that contains itself."""
    node = file.message_type.add(name="Node")
    node.field.extend([
        field("name", 1, FD.TYPE_STRING), field("next", 2, FD.TYPE_MESSAGE, "Node"),
        field("children", 3, FD.TYPE_MESSAGE, "Node", repeated=True),
    ])
    commented(file)


class ByReferenceTests(unittest.TestCase):
    def test_a_boxed_field_is_a_computed_member_over_private_shared_storage(self):
        schema = small_schema(
            "[messages.Blob]\nfile = \"Blobs\"\n[messages.Blob.fields.inner]\nboxed = true\n", extend=commented)
        struct, decoder = Writer(), Writer()
        write_struct(schema, schema.messages["Blob"], struct)
        write_decoder(schema, schema.messages["Blob"], decoder)
        text = struct.text()
        self.assertIn("    public var inner: Inner? {\n        get { innerStorage?.value }\n"
                      "        set { innerStorage = newValue.map(Shared.init) }\n    }", text)
        self.assertIn("    private var innerStorage: Shared<Inner>?", text)
        self.assertIn("        self.innerStorage = inner.map(Shared.init)", text)
        self.assertNotIn("self.inner = inner", text)
        # The decoder sets the computed member once every stored one is set.
        lines = decoder.text().splitlines()
        self.assertGreater(
            next(i for i, line in enumerate(lines) if "inner = try" in line),
            next(i for i, line in enumerate(lines) if "self.last = " in line))
        self.assertIn("        inner = try c.inner.map", decoder.text())

    def test_an_unboxed_field_is_stored_inline(self):
        schema = small_schema("[messages.Blob]\nfile = \"Blobs\"\n", extend=commented)
        struct = Writer()
        write_struct(schema, schema.messages["Blob"], struct)
        self.assertIn("    public var inner: Inner?\n", struct.text())
        self.assertNotIn("Shared", struct.text())

    def test_a_message_that_contains_itself_is_held_by_reference_without_a_key(self):
        schema = small_schema("[messages.Node]\nfile = \"Nodes\"\n", extend=node_message)
        node = schema.messages["Node"]
        self.assertTrue(schema.is_boxed(node, node.field[1]))
        self.assertFalse(schema.is_boxed(node, node.field[2]), "an array holds its elements by reference already")
        struct = Writer()
        write_struct(schema, node, struct)
        self.assertIn("    private var nextStorage: Shared<Node>?", struct.text())
        self.assertIn("    public var children: [Node]\n", struct.text())

    def test_a_cycle_through_a_oneof_is_refused(self):
        def cyclic(file):
            node = file.message_type.add(name="Node")
            node.oneof_decl.add(name="link")
            node.field.extend([
                field("next", 1, FD.TYPE_MESSAGE, "Node", oneof_index=0),
                field("text", 2, FD.TYPE_STRING, oneof_index=0)])
        with self.assertRaisesRegex(GeneratorError, r"Node.next: through this oneof field Node contains itself"):
            small_schema(extend=cyclic)

    def test_boxed_is_refused_where_it_means_nothing(self):
        with self.assertRaisesRegex(GeneratorError, r"\[messages.Blob.fields.many\] boxed: only a message field"):
            small_schema("[messages.Blob.fields.many]\nboxed = true\n")
        with self.assertRaisesRegex(GeneratorError, r"\[messages.Blob.fields.first\] boxed: only a message field"):
            small_schema("[messages.Blob.fields.first]\nboxed = true\n")


class UnreadableFieldTests(unittest.TestCase):
    def test_an_unreadable_field_gives_the_type_unreadable_field_outside_init(self):
        schema = small_schema(
            "[messages.Blob]\nfile = \"Blobs\"\n[messages.Blob.fields.inner]\nunreadable = true\n", extend=commented)
        struct, decoder = Writer(), Writer()
        write_struct(schema, schema.messages["Blob"], struct)
        write_decoder(schema, schema.messages["Blob"], decoder)
        self.assertIn("    public var unreadableField: String?\n", struct.text())
        self.assertNotIn("unreadableField:", struct.text().split("public init(", 1)[1])
        self.assertIn("unreadableField = unreadableField ?? detail", decoder.text())

    def test_a_type_without_unreadable_fields_has_no_such_member(self):
        schema = small_schema("[messages.Blob]\nfile = \"Blobs\"\n", extend=commented)
        struct = Writer()
        write_struct(schema, schema.messages["Blob"], struct)
        self.assertNotIn("unreadableField", struct.text())


class FileTests(unittest.TestCase):
    GROUPS = (
        "[messages.Blob]\nfile = \"Blobs\"\n[messages.Inner]\nfile = \"Blobs\"\n"
        "[messages.Plain]\nfile = \"Plains\"\n")

    def test_each_group_has_its_types_builders_and_decoders_files(self):
        outputs = generate(small_schema(self.GROUPS, extend=commented))
        self.assertEqual(sorted(outputs), [
            "Blobs+Builders.generated.swift", "Blobs+Decoders.generated.swift", "Blobs.generated.swift",
            "Enums+Decoders.generated.swift", "Enums.generated.swift", "Message+Builders.generated.swift", "Message+Decoders.generated.swift",
            "MessagePayloads.generated.swift", "Plains+Builders.generated.swift", "Plains+Decoders.generated.swift",
            "Plains.generated.swift",
        ])
        self.assertIn("func blob(", outputs["Blobs+Builders.generated.swift"])
        self.assertIn("func inner(", outputs["Blobs+Builders.generated.swift"])
        self.assertNotIn("func plain(", outputs["Blobs+Builders.generated.swift"])
        self.assertIn("extension Plain {", outputs["Plains+Decoders.generated.swift"])
        self.assertIn("func envelope(", outputs["Message+Builders.generated.swift"])
        self.assertIn("init(envelope c:", outputs["Message+Decoders.generated.swift"])

    def test_a_message_without_a_file_is_an_error_that_says_what_to_add(self):
        schema = small_schema("[messages.Blob]\nfile = \"Blobs\"\n[messages.Inner]\nfile = \"Blobs\"\n", extend=commented)
        with self.assertRaisesRegex(GeneratorError, r'Plain: say in .*mapping.toml.*\[messages.Plain\] file = '):
            generate(schema)


def outcome_schema(mapping_text="", comments=True, second_shape=None):
    """Small schema plus Code { CODE_UNSPECIFIED = 0; CODE_INTERNAL = 7; CODE_TIMED_OUT = 100; }, and Result and
    Summary, each with `oneof outcome { Inner inner; Plain plain; }` (Summary's fields `second_shape` if given)."""
    def extend(file):
        code = file.enum_type.add(name="Code")
        for name, number in (("CODE_UNSPECIFIED", 0), ("CODE_INTERNAL", 7), ("CODE_TIMED_OUT", 100)):
            code.value.add(name=name, number=number)
        for message_name, shape in (("Result", None), ("Summary", second_shape)):
            message = file.message_type.add(name=message_name)
            message.oneof_decl.add(name="outcome")
            message.field.extend(shape or [
                field("inner", 1, FD.TYPE_MESSAGE, "Inner", oneof_index=0),
                field("plain", 2, FD.TYPE_MESSAGE, "Plain", oneof_index=0)])
        if comments:
            commented(file)
            file.source_code_info.location.add(path=[5, 0], leading_comments=" Why.")
            for index in range(3):
                file.source_code_info.location.add(path=[5, 0, 2, index], trailing_comments=f" value {index}")
            for index in (4, 5):
                file.source_code_info.location.add(path=[4, index, 8, 0], leading_comments=" How it ended.")
    return small_schema(
        "[messages.Blob]\nfile = \"Blobs\"\n[messages.Inner]\nfile = \"Blobs\"\n[messages.Plain]\nfile = \"Blobs\"\n"
        "[messages.Result]\nfile = \"Results\"\nrequired = [\"outcome\"]\n"
        "[messages.Summary]\nfile = \"Summaries\"\nrequired = [\"outcome\"]\n"
        "[messages.Result.oneofs.outcome]\nswift = \"outcome\"\ntype = \"Outcome\"\n"
        "[messages.Summary.oneofs.outcome]\nswift = \"outcome\"\ntype = \"Outcome\"\n" + mapping_text, extend=extend)


class EnumTests(unittest.TestCase):
    def test_case_names_drop_the_enum_prefix_in_lower_camel_case(self):
        self.assertEqual(case_name("FailureCode", "FAILURE_CODE_INPUT_MISSING"), "inputMissing")
        self.assertEqual(case_name("ImageFormat", "IMAGE_FORMAT_SAME_AS_INPUT"), "sameAsInput")
        self.assertEqual(case_name("TaskKind", "TASK_KIND_TILT_SHIFT"), "tiltShift")
        self.assertEqual(case_name("Falloff", "BLEND"), "blend")

    def test_an_enum_is_a_uint32_swift_enum_with_the_proto_numbers_and_comments(self):
        schema = outcome_schema("[enums.Code]\nswift = \"WireCode\"\n")
        text = generate(schema)["Enums.generated.swift"]
        self.assertIn("/// Why.\npublic enum WireCode: UInt32, Sendable, Equatable, CaseIterable {", text)
        self.assertIn("    /// Value 0.\n    case unspecified = 0\n", text)
        self.assertIn("    case `internal` = 7\n", text, "a Swift keyword is written in backticks")
        self.assertIn("    case timedOut = 100\n", text)

    def test_a_skipped_enum_is_left_to_hand_written_code(self):
        text = generate(outcome_schema("[enums.Code]\nskip = true\n"))["Enums.generated.swift"]
        self.assertNotIn("enum", text)

    def test_an_enum_without_comments_is_an_error(self):
        schema = outcome_schema(comments=False)
        with self.assertRaisesRegex(GeneratorError, r"Code: a generated enum needs a comment"):
            write_enum(schema, "Code", Writer())

    def test_a_typed_oneof_is_one_swift_enum_beside_the_first_message_that_has_it(self):
        outputs = generate(outcome_schema())
        self.assertIn(
            "/// How it ended.\npublic enum Outcome: Sendable, Equatable {\n    /// A field.\n    case inner(Inner)\n",
            outputs["Results.generated.swift"])
        self.assertNotIn("enum Outcome", outputs["Summaries.generated.swift"])
        self.assertIn("public var outcome: Outcome", outputs["Summaries.generated.swift"])

    def test_two_oneofs_of_one_type_must_have_the_same_fields(self):
        schema = outcome_schema(second_shape=[
            field("inner", 1, FD.TYPE_MESSAGE, "Inner", oneof_index=0),
            field("text", 2, FD.TYPE_STRING, oneof_index=0)])
        with self.assertRaisesRegex(GeneratorError, r"Summary.outcome: its Swift type Outcome is Result.outcome's"):
            generate(schema)


if __name__ == "__main__":
    unittest.main()
