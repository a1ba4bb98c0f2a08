"""The builders: each Swift value into its protobuf-c struct, in the CMessageBuilder's arena."""

from schema import (
    C_FUNCTION_PREFIX, FD, GeneratorError, SCALARS, builder_name, c_type, camel_to_snake, envelope_parts, is_real_oneof, lower_camel, oneof_constant, oneof_fields, unwrapped,
)


def field_builder(schema, message, field, value, target):
    """Statements that set `target` (a C member) from the Swift expression `value`, one line each."""
    label_repeated = field.label == FD.LABEL_REPEATED
    t = field.type
    if label_repeated:
        count = target.rsplit(".", 1)
        count_target = f"{count[0]}.n_{count[1]}"
        if t == FD.TYPE_STRING:
            return [f"({count_target}, {target}) = strings({value})"]
        if t == FD.TYPE_MESSAGE:
            return [f"({count_target}, {target}) = repeated({value}) {{ $0.{builder_name(schema.short(field.type_name))}($1) }}"]
        if t in SCALARS:
            return [f"{count_target} = {value}.count", f"{target} = arena.copy({value})"]
        raise GeneratorError(f"{message.name}.{field.name}: repeated {FD.Type.Name(t)} is not supported")
    if t == FD.TYPE_STRING:
        return [f"{target} = string({value})"]
    if t == FD.TYPE_BYTES:
        return [f"{target} = bytes({value})"]
    if t == FD.TYPE_BOOL:
        return [f"{target} = {value} ? 1 : 0"]
    if t in SCALARS:
        return [f"{target} = {value}"]
    if t == FD.TYPE_ENUM:
        return [f"{target} = {c_type(schema.short(field.type_name))}(rawValue: {value}.rawValue)"]
    if t == FD.TYPE_MESSAGE:
        return [f"{target} = {builder_name(schema.short(field.type_name))}({value})"]
    raise GeneratorError(f"{message.name}.{field.name}: {FD.Type.Name(t)} is not supported")


def write_builder(schema, message, w):
    swift = schema.swift_type(message.name)
    name = message.name
    w(f"    mutating func {builder_name(name)}(_ m: {swift}) -> UnsafeMutablePointer<{c_type(name)}> {{")
    w(f"        let c = arena.make({c_type(name)}.self)")
    w(f"        {C_FUNCTION_PREFIX}{camel_to_snake(name)}__init(c)")
    write_builder_fields(schema, message, w, "m", "c.pointee", "        ")
    w("        return c")
    w("    }")


def write_builder_fields(schema, message, w, m, c, indent):
    done_oneofs = set()
    for field in message.field:
        mapping = schema.field_map(message, field)
        target = f"{c}.{field.name}"
        if mapping.get("codec"):
            continue  # WireCodec sets it (the envelope's witnessed position)
        if "constant" in mapping:
            w(f"{indent}{target} = {mapping['constant']}")
            continue
        if is_real_oneof(field, message):
            oneof = message.oneof_decl[field.oneof_index].name
            if oneof in done_oneofs:
                continue
            done_oneofs.add(oneof)
            write_oneof_builder(schema, message, oneof, w, m, c, indent)
            continue
        value = f"{m}.{schema.member(message, field)}"
        if field.type == FD.TYPE_MESSAGE and field.label != FD.LABEL_REPEATED:
            w(f"{indent}if let value = {value} {{")
            for line in field_builder(schema, message, field, "value", target):
                w(f"{indent}    {line}")
            w(f"{indent}}}")
        else:
            for line in field_builder(schema, message, field, value, target):
                w(f"{indent}{line}")


def write_oneof_builder(schema, message, oneof, w, m, c, indent):
    mapping = schema.oneof_map(message, oneof)
    fields = oneof_fields(message, oneof)
    if mapping.get("message"):
        return  # the envelope: written by write_envelope_builder
    if "type" in mapping:
        w(f"{indent}switch {m}.{mapping['swift']} {{")
        for field in fields:
            w(f"{indent}case .{lower_camel(field.name)}(let value):")
            w(f"{indent}    {c}.{oneof}_case = {oneof_constant(message, oneof, field)}")
            for line in field_builder(schema, message, field, "value", f"{c}.{field.name}"):
                w(f"{indent}    {line}")
        w(f"{indent}}}")
        return
    if len(fields) != 1:
        raise GeneratorError(f"{message.name}.{oneof}: a oneof of several fields needs a Swift enum (`type` in the mapping)")
    field = fields[0]
    w(f"{indent}if let value = {m}.{schema.member(message, field)} {{")
    w(f"{indent}    {c}.{oneof}_case = {oneof_constant(message, oneof, field)}")
    for line in field_builder(schema, message, field, "value", f"{c}.{field.name}"):
        w(f"{indent}    {line}")
    w(f"{indent}}}")


def write_unwrap_builder(schema, name, w):
    field = unwrapped(schema, name)
    element = schema.swift_type(field.type_name)
    w(f"    mutating func {builder_name(name)}(_ m: [{element}]) -> UnsafeMutablePointer<{c_type(name)}> {{")
    w(f"        let c = arena.make({c_type(name)}.self)")
    w(f"        {C_FUNCTION_PREFIX}{camel_to_snake(name)}__init(c)")
    w(f"        (c.pointee.n_{field.name}, c.pointee.{field.name}) = repeated(m) {{ $0.{builder_name(schema.short(field.type_name))}($1) }}")
    w("        return c")
    w("    }")


def write_envelope_builder(schema, w):
    message, oneof = envelope_parts(schema)
    swift = schema.swift_type(message.name)
    w(f"    mutating func {builder_name(message.name)}(_ message: {swift}) -> UnsafeMutablePointer<{c_type(message.name)}> {{")
    w(f"        let c = arena.make({c_type(message.name)}.self)")
    w(f"        {C_FUNCTION_PREFIX}{camel_to_snake(message.name)}__init(c)")
    write_builder_fields(schema, message, w, "message", "c.pointee", "        ")
    w("        switch message {")
    for field in oneof_fields(message, oneof):
        w(f"        case .{lower_camel(field.name)}(let value):")
        w(f"            c.pointee.{oneof}_case = {oneof_constant(message, oneof, field)}")
        w(f"            c.pointee.{field.name} = {builder_name(schema.short(field.type_name))}(value)")
    w("        }")
    w("        return c")
    w("    }")
