"""The Swift value types of the messages the mapping gives a `file`, documented by the .proto's comments."""

from schema import (
    FD, GeneratorError, SCALARS, camel_to_snake, is_real_oneof, lower_camel,
)


def swift_member_type(schema, message, field):
    t = field.type
    if t == FD.TYPE_STRING:
        base = "String"
    elif t == FD.TYPE_BYTES:
        base = "[UInt8]"
    elif t == FD.TYPE_BOOL:
        base = "Bool"
    elif t in SCALARS:
        base = SCALARS[t]
    elif t in (FD.TYPE_ENUM, FD.TYPE_MESSAGE):
        base = schema.swift_type(field.type_name)
    else:
        raise GeneratorError(f"{message.name}.{field.name}: {FD.Type.Name(t)} is not supported")
    if field.label == FD.LABEL_REPEATED:
        return f"[{base}]"
    if t == FD.TYPE_MESSAGE or (is_real_oneof(field, message) and "type" not in schema.oneof_map(
            message, message.oneof_decl[field.oneof_index].name)):
        return f"{base}?"
    return base


def swift_default(schema, message, field):
    mapping = schema.field_map(message, field)
    if "default" in mapping:
        return mapping["default"]
    swift = swift_member_type(schema, message, field)
    if swift.endswith("?"):
        return "nil"
    if swift.startswith("["):
        return "[]"
    if swift == "String":
        return '""'
    if swift == "Bool":
        return "false"
    if field.type == FD.TYPE_ENUM:
        zero = next(v for v in schema.enums[schema.short(field.type_name)].value if v.number == 0)
        prefix = camel_to_snake(schema.short(field.type_name)).upper() + "_"
        return "." + lower_camel(zero.name[len(prefix):].lower() if zero.name.startswith(prefix) else zero.name.lower())
    return "0"


def doc_lines(lines, indent):
    return [f"{indent}///{' ' + line if line else ''}" for line in lines]


def struct_members(schema, message):
    """The Swift members of a generated struct, in field order: (name used in `init`/`required`, Swift name, Swift
    type, default, doc lines); a oneof that is a Swift enum is one member, where its first field is."""
    members, seen = [], set()
    for index, field in enumerate(message.field):
        if is_real_oneof(field, message):
            oneof = message.oneof_decl[field.oneof_index].name
            mapping = schema.oneof_map(message, oneof)
            if "type" in mapping:
                if oneof in seen:
                    continue
                seen.add(oneof)
                lines = schema.comment(message, oneof_index=field.oneof_index)
                if not lines:
                    raise GeneratorError(f"{message.name}.{oneof}: a generated member needs a comment on the oneof in the .proto")
                members.append((oneof, mapping["swift"], mapping["type"], None, lines))
                continue
        lines = schema.comment(message, index)
        if not lines:
            raise GeneratorError(f"{message.name}.{field.name}: a generated member needs a comment on the field in the .proto")
        members.append((field.name, schema.member(message, field), swift_member_type(schema, message, field),
                        swift_default(schema, message, field), lines))
    return members


UNREADABLE_DOC = [
    "A field whose value this version cannot act on (an enum value it does not know), as decoding found",
    "it; `nil` for every message a peer of this version sends. Never encoded: the receiver answers for that",
    "field (a worker fails such an assignment, naming it) instead of dropping the whole message.",
]


def write_member(schema, message, field_name, name, swift_type, w):
    """One stored member, or, for a field held by reference, the computed member and its private storage."""
    field = next((f for f in message.field if f.name == field_name), None)
    if field is None or not schema.is_boxed(message, field):
        w(f"    public var {name}: {swift_type}")
        return
    wrapped = swift_type[:-1]
    w(f"    public var {name}: {swift_type} {{")
    w(f"        get {{ {name}Storage?.value }}")
    w(f"        set {{ {name}Storage = newValue.map(Shared.init) }}")
    w("    }")
    w(f"    /// `{name}` by reference (``Shared``): a value without one pays a pointer, not its inline size.")
    w(f"    private var {name}Storage: Shared<{wrapped}>?")


def write_struct(schema, message, w):
    entry = schema.message_map(message.name)
    swift = schema.swift_type(message.name)
    conformances = entry.get("conformances", ["Sendable", "Equatable"])
    comment = schema.comment(message)
    if not comment:
        raise GeneratorError(f"{message.name}: a generated type needs a comment on the message in the .proto (its doc comment)")
    for line in doc_lines(comment, ""):
        w(line)
    w(f"public struct {swift}: {', '.join(conformances)} {{")
    members = struct_members(schema, message)
    for field_name, name, swift_type, _, lines in members:
        for line in doc_lines(lines, "    "):
            w(line)
        write_member(schema, message, field_name, name, swift_type, w)
    if schema.has_unreadable(message):
        for line in doc_lines(UNREADABLE_DOC, "    "):
            w(line)
        w("    public var unreadableField: String?")
    by_name = {member[0]: member for member in members}
    order = list(entry.get("init", [member[0] for member in members]))
    required = set(entry.get("required", []))
    for name in order + sorted(required):
        if name not in by_name:
            raise GeneratorError(f"mapping: [messages.{message.name}] init/required names no field or oneof {name}")
    order += [member[0] for member in members if member[0] not in order]
    w()
    w(f"    /// Creates the value; what is not given is left at its default (empty, 0, false, `nil`, the enum's zero).")
    parameters = []
    for name in order:
        _, swift_name, swift_type, default, _ = by_name[name]
        if name not in required and default is None:
            raise GeneratorError(f"mapping: [messages.{message.name}] {name} has no default: list it in `required`")
        parameters.append(f"{swift_name}: {swift_type}" + ("" if name in required else f" = {default}"))
    w(f"    public init(")
    for index, parameter in enumerate(parameters):
        w(f"        {parameter}{',' if index < len(parameters) - 1 else ''}")
    w("    ) {")
    boxed = {field.name for field in message.field if schema.is_boxed(message, field)}
    for field_name, swift_name, _, _, _ in members:
        if field_name in boxed:
            w(f"        self.{swift_name}Storage = {swift_name}.map(Shared.init)")
        else:
            w(f"        self.{swift_name} = {swift_name}")
    w("    }")
    w("}")
