"""The decoders: each unpacked protobuf-c struct into its Swift value, every string checked."""

from schema import (
    FD, GeneratorError, SCALARS, c_type, camel_to_snake, envelope_parts, is_real_oneof, lower_camel, oneof_constant, oneof_fields, unwrapped,
)


def path_expression(schema, message, suffix):
    """A Swift String expression naming a field for errors: "TaskResult.outcome" or "\\(field()).output_format"."""
    if schema.takes_path(message.name):
        return f'"\\(field()).{suffix}"'
    return f'"{message.name}.{suffix}"'


def message_decoder_call(schema, type_name, pointee, path):
    name = schema.short(type_name)
    swift = schema.swift_type(type_name)
    if schema.takes_path(name):
        return f"try {swift}({pointee}, field: {path})"
    return f"try {swift}({pointee})"


def field_decoder(schema, message, field, c):
    """A Swift expression with the value of `field` read from the C struct `c`."""
    mapping = schema.field_map(message, field)
    source = f"{c}.{field.name}"
    path = path_expression(schema, message, field.name)
    t = field.type
    if field.label == FD.LABEL_REPEATED:
        count = f"{c}.n_{field.name}"
        if t == FD.TYPE_STRING:
            return f"try readStrings({count}, {source}, field: {path})"
        if t == FD.TYPE_MESSAGE:
            call = message_decoder_call(schema, field.type_name, "element.pointee", f'"\\({path})[]"')
            return f"try readRepeated({count}, {source}, field: {path}) {{ (element) throws(WireError) in {call} }}"
        if t in SCALARS:
            return f"readScalars({count}, {source})"
        raise GeneratorError(f"{message.name}.{field.name}: repeated {FD.Type.Name(t)} is not supported")
    if t == FD.TYPE_STRING:
        return f"try readString({source})"
    if t == FD.TYPE_BYTES:
        return f"readBytes({source})"
    if t == FD.TYPE_BOOL:
        return f"{source} != 0"
    if t in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE) and mapping.get("finite"):
        return f"{source}.isFinite ? {source} : 0"
    if t in SCALARS:
        return source
    if t == FD.TYPE_ENUM:
        name = schema.short(field.type_name)
        swift = schema.swift_type(field.type_name)
        unknown = mapping.get("unknown", schema.enum_map(name).get("unknown", "error"))
        if unknown == "unspecified":
            return f"{swift}(rawValue: {source}.rawValue) ?? .unspecified"
        if unknown != "error":
            raise GeneratorError(f"{message.name}.{field.name}: unknown = {unknown!r}: say \"unspecified\" or \"error\"")
        return f"try {swift}({source}, field: {path})"
    if t == FD.TYPE_MESSAGE:
        call = message_decoder_call(schema, field.type_name, "value.pointee", path)
        return f"try {source}.map {{ (value) throws(WireError) in {call} }}"
    raise GeneratorError(f"{message.name}.{field.name}: {FD.Type.Name(t)} is not supported")


def write_decoder(schema, message, w):
    swift = schema.swift_type(message.name)
    w(f"extension {swift} {{")
    if schema.takes_path(message.name):
        w(f"    init(_ c: {c_type(message.name)}, field: @autoclosure () -> String) throws(WireError) {{")
    else:
        w(f"    init(_ c: {c_type(message.name)}) throws(WireError) {{")
    later = []
    done_oneofs = set()
    # A oneof that is a Swift enum is read into a local first: assigned in place, between the stored members, it
    # made TaskResult's decoding 12% slower (the enum's payload was built aside and copied).
    typed = [o.name for o in message.oneof_decl if "type" in schema.oneof_map(message, o.name)]
    for oneof in typed:
        write_oneof_decoder(schema, message, oneof, w)
    for field in message.field:
        mapping = schema.field_map(message, field)
        if "constant" in mapping or mapping.get("codec"):
            continue
        if is_real_oneof(field, message):
            oneof = message.oneof_decl[field.oneof_index].name
            if oneof not in done_oneofs:
                done_oneofs.add(oneof)
                if oneof in typed:
                    member = schema.oneof_map(message, oneof)["swift"]
                    w(f"        self.{member} = {member}")
                else:
                    write_oneof_decoder(schema, message, oneof, w)
            continue
        member = schema.member(message, field)
        value = field_decoder(schema, message, field, "c")
        statements = []
        # A member held by reference is a computed property: set once every stored one is.
        computed = schema.is_boxed(message, field)
        if mapping.get("unreadable"):
            statements += [
                "do {",
                f"    {'' if computed else 'self.'}{member} = {value}",
                "} catch {",
                "    guard case .invalidField(let detail) = error else { throw error }",
                "    unreadableField = unreadableField ?? detail",
                "}",
            ]
        else:
            statements.append(f"{'' if computed else 'self.'}{member} = {value}")
        if computed or mapping.get("unreadable"):
            later += statements
        else:
            for line in statements:
                w(f"        {line}")
    if later:
        w("        // Computed members, and values this version cannot act on (kept in `unreadableField`), once every stored one is set.")
        for line in later:
            w(f"        {line}")
    after = schema.message_map(message.name).get("after_decode")
    if after:
        w(f"        {after}()")
    w("    }")
    w("}")


def write_oneof_decoder(schema, message, oneof, w):
    mapping = schema.oneof_map(message, oneof)
    fields = oneof_fields(message, oneof)
    if "type" in mapping:
        w(f"        let {mapping['swift']}: {mapping['type']}")
        w(f"        switch c.{oneof}_case {{")
        for field in fields:
            w(f"        case {oneof_constant(message, oneof, field)}:")
            if field.type == FD.TYPE_MESSAGE:
                pointee = f'try required(c.{field.name}, "{message.name}.{oneof}.{field.name}").pointee'
                value = message_decoder_call(schema, field.type_name, pointee, f'"{message.name}.{oneof}.{field.name}"')
            else:
                value = field_decoder(schema, message, field, "c")
            w(f"            {mapping['swift']} = .{lower_camel(field.name)}({value})")
        w("        default:")
        w(f'            throw .invalidField("{message.name}.{oneof} is not set")')
        w("        }")
        return
    field = fields[0]
    if field.type == FD.TYPE_MESSAGE:
        raise GeneratorError(f"{message.name}.{oneof}: a oneof of one message field is not supported; use the field alone")
    w(f"        self.{schema.member(message, field)} = c.{oneof}_case == {oneof_constant(message, oneof, field)} ? {field_decoder(schema, message, field, 'c')} : nil")


def write_envelope_decoder(schema, w):
    message, oneof = envelope_parts(schema)
    swift = schema.swift_type(message.name)
    w(f"extension {swift} {{")
    w(f"    /// The message in an unpacked envelope whose major version has been checked.")
    w(f"    init(envelope c: {c_type(message.name)}) throws(WireError) {{")
    w(f"        switch c.{oneof}_case {{")
    for field in oneof_fields(message, oneof):
        name = schema.short(field.type_name)
        case = lower_camel(field.name)
        pointee = f'try required(c.{field.name}, "{message.name}.{field.name}").pointee'
        w(f"        case {oneof_constant(message, oneof, field)}:")
        if schema.message_map(name).get("unwrap"):
            inner = unwrapped(schema, name)
            call = message_decoder_call(schema, inner.type_name, "element.pointee", '""')
            w(f"            let list = {pointee}")
            w(f'            self = .{case}(try readRepeated(list.n_{inner.name}, list.{inner.name}, field: "{name}.{inner.name}") {{')
            w(f"                (element) throws(WireError) in {call}")
            w("            })")
        else:
            w(f"            self = .{case}({message_decoder_call(schema, field.type_name, pointee, chr(34) + message.name + '.' + field.name + chr(34))})")
    w("        default:")
    w("            // Not set, or a body of a newer minor version (kept by protobuf-c as an unknown field).")
    w("            throw .missingBody")
    w("        }")
    w("    }")
    w("}")


def write_enum_decoders(schema, w):
    for name in sorted(schema.enums):
        mapping = schema.enum_map(name)
        if mapping.get("unknown", "error") != "error":
            continue
        swift = mapping.get("swift", name)
        noun = mapping.get("noun", camel_to_snake(name).replace("_", " "))
        w(f"extension {swift} {{")
        w(f"    init(_ c: {c_type(name)}, field: @autoclosure () -> String) throws(WireError) {{")
        w(f"        guard let value = {swift}(rawValue: c.rawValue) else {{")
        w(f'            throw .invalidField("\\(field()): unknown {noun} \\(c.rawValue)")')
        w("        }")
        w("        self = value")
        w("    }")
        w("}")
        w()
