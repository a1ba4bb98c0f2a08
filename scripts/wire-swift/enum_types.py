"""The Swift enums of the wire: each proto enum (UInt32 raw values, the proto's numbers), and each `oneof` the mapping
gives a Swift enum `type` (`TaskOutcome`: a case per field, its value the payload). Documented by the .proto's
comments, as the value types are."""

from schema import FD, GeneratorError, camel_to_snake, lower_camel, oneof_fields
from value_types import swift_member_type

# Swift keywords a case name may collide with (FAILURE_CODE_INTERNAL): written in backticks.
SWIFT_KEYWORDS = {
    "associatedtype", "break", "case", "catch", "class", "continue", "default", "defer", "deinit", "do", "else",
    "enum", "extension", "fallthrough", "false", "fileprivate", "for", "func", "guard", "if", "import", "in", "init",
    "inout", "internal", "is", "let", "nil", "open", "operator", "private", "protocol", "public", "repeat",
    "rethrows", "return", "self", "Self", "static", "struct", "subscript", "super", "switch", "throw", "throws",
    "true", "try", "typealias", "var", "where", "while",
}


def case_name(enum_name, value_name):
    """An enum value as a Swift case: FAILURE_CODE_INPUT_MISSING of FailureCode is `inputMissing`."""
    prefix = camel_to_snake(enum_name).upper() + "_"
    stem = value_name[len(prefix):] if value_name.startswith(prefix) else value_name
    return lower_camel(stem.lower())


def declared(name):
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


def doc_lines(lines, indent):
    return [f"{indent}///{' ' + line if line else ''}" for line in lines]


def write_enum(schema, name, w):
    enum = schema.enums[name]
    swift = schema.enum_map(name).get("swift", name)
    comment = schema.enum_comment(name)
    if not comment:
        raise GeneratorError(f"{name}: a generated enum needs a comment on the enum in the .proto (its doc comment)")
    for line in doc_lines(comment, ""):
        w(line)
    w(f"public enum {swift}: UInt32, Sendable, Equatable, CaseIterable {{")
    seen = {}
    for index, value in enumerate(enum.value):
        case = case_name(name, value.name)
        if case in seen:
            raise GeneratorError(f"{name}.{value.name}: its Swift case `{case}` is also {seen[case]}'s")
        seen[case] = value.name
        lines = schema.enum_comment(name, index)
        if not lines:
            raise GeneratorError(f"{name}.{value.name}: a generated case needs a comment on the value in the .proto")
        for line in doc_lines(lines, "    "):
            w(line)
        w(f"    case {declared(case)} = {value.number}")
    w("}")


def oneof_enums(schema):
    """The Swift enums of typed oneofs: {type: (message, oneof)}, each declared where it is first used (proto order).
    Every later oneof of the same type must have the same fields (names and types)."""
    found = {}
    for name in schema.order:
        message = schema.messages[name]
        for oneof, entry in schema.message_map(name).get("oneofs", {}).items():
            if "type" not in entry:
                continue
            shape = [(f.name, f.type, f.type_name) for f in oneof_fields(message, oneof)]
            if entry["type"] in found:
                first, first_oneof = found[entry["type"]]
                if shape != [(f.name, f.type, f.type_name) for f in oneof_fields(first, first_oneof)]:
                    raise GeneratorError(
                        f"{name}.{oneof}: its Swift type {entry['type']} is {first.name}.{first_oneof}'s, whose fields "
                        "differ; give it a `type` of its own")
                continue
            found[entry["type"]] = (message, oneof)
    return found


def write_oneof_enum(schema, swift, message, oneof, w):
    index = [o.name for o in message.oneof_decl].index(oneof)
    comment = schema.comment(message, oneof_index=index)
    if not comment:
        raise GeneratorError(f"{message.name}.{oneof}: a generated enum needs a comment on the oneof in the .proto")
    for line in doc_lines(comment, ""):
        w(line)
    w(f"public enum {swift}: Sendable, Equatable {{")
    for field in oneof_fields(message, oneof):
        lines = schema.comment(message, list(message.field).index(field))
        if not lines:
            raise GeneratorError(f"{message.name}.{field.name}: a generated case needs a comment on the field in the .proto")
        if field.label == FD.LABEL_REPEATED:
            raise GeneratorError(f"{message.name}.{field.name}: a repeated field cannot be in a oneof")
        for line in doc_lines(lines, "    "):
            w(line)
        w(f"    case {declared(lower_camel(field.name))}({swift_member_type(schema, message, field).rstrip('?')})")
    w("}")
