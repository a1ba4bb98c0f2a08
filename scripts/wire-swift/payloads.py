"""The payload walk: every `bytes` field of a Message, in the order in which the generated builders visit them.

`PinnedPayloads` (Sources/Wire/Encoding/PayloadPinning.swift) pins these arrays in this order, and
`CMessageBuilder.bytes(_:)` takes them in turn. Both walks are written here from the same descriptors, in the
same field order as builders.py (a oneof where its first field is, the envelope's body last), so that no list
kept by hand can pair a `bytes` field with another field's buffer.
"""

from schema import FD, GeneratorError, envelope_parts, is_real_oneof, lower_camel, oneof_fields, unwrapped


def has_bytes(schema, name, seen=None):
    """Whether the builder of message `name` reaches a `bytes` field (through message fields too)."""
    seen = set() if seen is None else seen
    if name in seen:
        return False
    seen.add(name)
    message = schema.messages[name]
    for field in message.field:
        if "constant" in schema.field_map(message, field) or schema.field_map(message, field).get("codec"):
            continue
        if field.type == FD.TYPE_BYTES:
            return True
        if field.type == FD.TYPE_MESSAGE and has_bytes(schema, schema.short(field.type_name), seen):
            return True
    return False


def field_payloads(schema, message, field, value):
    """Statements that append the payloads of `field`, whose Swift value is `value`; [] when it has none."""
    if field.type == FD.TYPE_BYTES:
        if field.label == FD.LABEL_REPEATED:
            raise GeneratorError(f"{message.name}.{field.name}: repeated bytes is not supported")
        return [f"payloads.append({value})"]
    if field.type != FD.TYPE_MESSAGE or not has_bytes(schema, schema.short(field.type_name)):
        return []
    if field.label == FD.LABEL_REPEATED:
        return [f"for element in {value} {{ element.appendPayloads(to: &payloads) }}"]
    return [f"{value}.appendPayloads(to: &payloads)"]


def payload_lines(schema, message, m, indent):
    """The walk of `message`'s fields (the Swift value `m`), in the builder's order (write_builder_fields)."""
    lines, done_oneofs = [], set()
    for field in message.field:
        if "constant" in schema.field_map(message, field) or schema.field_map(message, field).get("codec"):
            continue
        if is_real_oneof(field, message):
            oneof = message.oneof_decl[field.oneof_index].name
            if oneof in done_oneofs:
                continue
            done_oneofs.add(oneof)
            mapping = schema.oneof_map(message, oneof)
            fields = oneof_fields(message, oneof)
            if mapping.get("message"):
                continue  # the envelope's body: written by write_message_payloads
            if not any(field_payloads(schema, message, f, "value") for f in fields):
                continue
            if "type" in mapping:
                lines.append(f"{indent}switch {m}.{mapping['swift']} {{")
                for f in fields:
                    body = field_payloads(schema, message, f, "value")
                    if body:
                        lines.append(f"{indent}case .{lower_camel(f.name)}(let value):")
                        lines += [f"{indent}    {line}" for line in body]
                    else:
                        lines.append(f"{indent}case .{lower_camel(f.name)}:")
                        lines.append(f"{indent}    break")
                lines.append(f"{indent}}}")
            else:
                (only,) = fields  # builders.py rejects a oneof of several fields without a Swift enum
                lines.append(f"{indent}if let value = {m}.{schema.member(message, only)} {{")
                lines += [f"{indent}    {line}" for line in field_payloads(schema, message, only, "value")]
                lines.append(f"{indent}}}")
            continue
        value = f"{m}.{schema.member(message, field)}"
        body = field_payloads(schema, message, field, "value")
        if not body:
            continue
        if field.type == FD.TYPE_MESSAGE and field.label != FD.LABEL_REPEATED:
            lines.append(f"{indent}if let value = {value} {{")
            lines += [f"{indent}    {line}" for line in body]
            lines.append(f"{indent}}}")
        else:
            lines += [f"{indent}{line}" for line in field_payloads(schema, message, field, value)]
    return lines


def write_message_payloads(schema, w):
    """`Message.payloads`: the envelope's body, case by case."""
    message, oneof = envelope_parts(schema)
    swift = schema.swift_type(message.name)
    w(f"extension {swift} {{")
    w("    /// The `bytes` fields of this message in the order in which ``CMessageBuilder`` visits them, for")
    w("    /// ``PinnedPayloads`` to pin. (Arrays are copied by reference here, not by content.)")
    w("    var payloads: [[UInt8]] {")
    w("        var payloads: [[UInt8]] = []")
    for line in payload_lines(schema, message, "self", "        "):
        w(line)
    w("        switch self {")
    quiet = []
    for field in oneof_fields(message, oneof):
        name = schema.short(field.type_name)
        case = lower_camel(field.name)
        if schema.message_map(name).get("unwrap"):
            element = schema.short(unwrapped(schema, name).type_name)
            if has_bytes(schema, element):
                w(f"        case .{case}(let value):")
                w("            for element in value { element.appendPayloads(to: &payloads) }")
                continue
        elif has_bytes(schema, name):
            w(f"        case .{case}(let value):")
            w("            value.appendPayloads(to: &payloads)")
            continue
        quiet.append(f".{case}")
    if quiet:
        rows = [", ".join(quiet[i:i + 6]) for i in range(0, len(quiet), 6)]
        w(f"        case {rows[0]}{',' if len(rows) > 1 else ':'}")
        for index, row in enumerate(rows[1:], 1):
            w(f"            {row}{',' if index < len(rows) - 1 else ':'}")
        w("            break")
    w("        }")
    w("        return payloads")
    w("    }")
    w("}")


def write_payloads(schema, w):
    """The whole file: `Message.payloads` and, per message that reaches a `bytes` field, its walk."""
    w("/// The `bytes` fields of every message in the order in which the generated builders visit them: a")
    w("/// `bytes` field's pinned buffer (``PinnedPayloads``) is found by this order.")
    write_message_payloads(schema, w)
    for name in schema.order:
        if not schema.is_generated(name) or not has_bytes(schema, name):
            continue
        w()
        w(f"extension {schema.swift_type(name)} {{")
        w("    fileprivate func appendPayloads(to payloads: inout [[UInt8]]) {")
        for line in payload_lines(schema, schema.messages[name], "self", "        "):
            w(line)
        w("    }")
        w("}")
