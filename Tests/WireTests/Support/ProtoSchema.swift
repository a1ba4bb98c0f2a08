/// The declarations of proto3 source files: messages (nested ones too) with their fields, enums with their
/// values. Read by a small tokenizer and recursive-descent parser, enough for proto/ (and stricter than
/// protoc where that is simpler: anything it does not understand is an error naming the token), so that
/// tests can hold docs and fixtures to the schema without protoc.
struct ProtoSchema: Equatable {
    struct Field: Equatable {
        /// The message that declares it (`Outer.Inner` for a nested one).
        let message: String
        let name: String
        let number: Int
        /// The type as written (`uint32`, `TaskOutput`, `shiftwork.v1.TaskKind`).
        let type: String
        let repeated: Bool
        /// The `oneof` it belongs to, if any.
        let oneof: String?
    }

    struct EnumValue: Equatable {
        let enumeration: String
        let name: String
        let number: Int
    }

    /// Messages by full name (`Outer.Inner`), in declaration order.
    private(set) var messages: [String] = []
    /// Enumerations by full name, in declaration order.
    private(set) var enumerations: [String] = []
    private(set) var fields: [Field] = []
    private(set) var values: [EnumValue] = []

    struct ParseError: Error, CustomStringConvertible {
        let description: String
    }

    init(parsing source: String) throws {
        var parser = Parser(tokens: try Self.tokens(of: source))
        try parser.file(into: &self)
    }

    /// Merges the declarations of several files.
    init(files: [String]) throws {
        for file in files {
            let schema = try ProtoSchema(parsing: file)
            messages += schema.messages
            enumerations += schema.enumerations
            fields += schema.fields
            values += schema.values
        }
    }

    func fields(of message: String) -> [Field] { fields.filter { $0.message == message } }
    func values(of enumeration: String) -> [EnumValue] { values.filter { $0.enumeration == enumeration } }

    // MARK: Tokens

    enum Token: Equatable {
        case identifier(String)  // letters, digits, `_` and `.` (full names)
        case number(String)  // as written: a text-format value may not fit an Int (2^64 − 1)
        case string(String)
        case symbol(Character)

        var text: String {
            switch self {
            case .identifier(let text), .string(let text): text
            case .number(let text): text
            case .symbol(let character): String(character)
            }
        }
    }

    static func tokens(of source: String) throws -> [Token] {
        var tokens: [Token] = []
        let characters = Array(source)
        var index = 0
        func peek(_ offset: Int = 0) -> Character? {
            index + offset < characters.count ? characters[index + offset] : nil
        }
        while let character = peek() {
            if character.isWhitespace {
                index += 1
            } else if character == "/", peek(1) == "/" {
                while let next = peek(), next != "\n" { index += 1 }
            } else if character == "/", peek(1) == "*" {
                index += 2
                while peek() != nil, !(peek() == "*" && peek(1) == "/") { index += 1 }
                guard peek() != nil else { throw ParseError(description: "a /* comment is not closed") }
                index += 2
            } else if character == "\"" || character == "'" {
                index += 1
                var text = ""
                while let next = peek(), next != character {
                    if next == "\\", let escaped = peek(1) {
                        text.append(escaped)
                        index += 2
                        continue
                    }
                    text.append(next)
                    index += 1
                }
                guard peek() == character else { throw ParseError(description: "a string is not closed: \(text)") }
                index += 1
                tokens.append(.string(text))
            } else if character.isNumber || (character == "-" && peek(1)?.isNumber == true) {
                var text = String(character)
                index += 1
                while let next = peek(), next.isHexDigit || next == "x" || next == "X" || next == "." {
                    text.append(next)
                    index += 1
                }
                tokens.append(.number(text))
            } else if character.isLetter || character == "_" || character == "." {
                var text = ""
                while let next = peek(), next.isLetter || next.isNumber || next == "_" || next == "." {
                    text.append(next)
                    index += 1
                }
                tokens.append(.identifier(text))
            } else {
                tokens.append(.symbol(character))
                index += 1
            }
        }
        return tokens
    }

    // MARK: Parser

    private struct Parser {
        let tokens: [Token]
        var index = 0

        var atEnd: Bool { index >= tokens.count }

        mutating func next() throws -> Token {
            guard index < tokens.count else { throw ParseError(description: "unexpected end of the file") }
            defer { index += 1 }
            return tokens[index]
        }

        mutating func expect(_ symbol: Character) throws {
            let token = try next()
            guard token == .symbol(symbol) else {
                throw ParseError(description: "expected '\(symbol)', found '\(token.text)' (token \(index))")
            }
        }

        mutating func identifier() throws -> String {
            let token = try next()
            guard case .identifier(let text) = token else {
                throw ParseError(description: "expected a name, found '\(token.text)' (token \(index))")
            }
            return text
        }

        mutating func number() throws -> Int {
            let token = try next()
            guard case .number(let text) = token else {
                throw ParseError(description: "expected a number, found '\(token.text)' (token \(index))")
            }
            let negative = text.hasPrefix("-")
            let digits = negative ? String(text.dropFirst()) : text
            let value = digits.lowercased().hasPrefix("0x") ? Int(digits.dropFirst(2), radix: 16) : Int(digits)
            guard let value else { throw ParseError(description: "not a field number or enum value: \(text)") }
            return negative ? -value : value
        }

        /// Skips to the end of the statement (`;`), or past a balanced `{ … }` block.
        mutating func skipStatement() throws {
            var depth = 0
            while true {
                let token = try next()
                if token == .symbol("{") { depth += 1 }
                if token == .symbol("}") {
                    depth -= 1
                    if depth == 0 { return }
                }
                if token == .symbol(";"), depth == 0 { return }
            }
        }

        /// Skips `[ … ]` field options, if any.
        mutating func skipOptions() throws {
            guard !atEnd, tokens[index] == .symbol("[") else { return }
            while try next() != .symbol("]") {}
        }

        mutating func file(into schema: inout ProtoSchema) throws {
            while !atEnd {
                let keyword = try identifier()
                switch keyword {
                case "message": try message(prefix: "", into: &schema)
                case "enum": try enumeration(prefix: "", into: &schema)
                case "syntax", "package", "import", "option": try skipStatement()
                case "service", "extend": try skipStatement()
                default: throw ParseError(description: "unexpected '\(keyword)' at the top level")
                }
            }
        }

        mutating func message(prefix: String, into schema: inout ProtoSchema) throws {
            let name = prefix + (try identifier())
            schema.messages.append(name)
            try expect("{")
            try body(of: name, oneof: nil, into: &schema)
        }

        /// The declarations up to the closing `}` of a message (or of a oneof in it).
        mutating func body(of message: String, oneof: String?, into schema: inout ProtoSchema) throws {
            while true {
                if !atEnd, tokens[index] == .symbol("}") {
                    index += 1
                    return
                }
                if !atEnd, tokens[index] == .symbol(";") {
                    index += 1
                    continue
                }
                let word = try identifier()
                switch word {
                case "message" where oneof == nil: try self.message(prefix: message + ".", into: &schema)
                case "enum" where oneof == nil: try enumeration(prefix: message + ".", into: &schema)
                case "oneof" where oneof == nil:
                    let name = try identifier()
                    try expect("{")
                    try body(of: message, oneof: name, into: &schema)
                case "reserved", "option", "extensions": try skipStatement()
                default:
                    var repeated = false
                    var type = word
                    if word == "repeated" || word == "optional" {
                        repeated = word == "repeated"
                        type = try identifier()
                    }
                    if type == "map" {
                        try expect("<")
                        let key = try identifier()
                        try expect(",")
                        let value = try identifier()
                        try expect(">")
                        type = "map<\(key), \(value)>"
                    }
                    let name = try identifier()
                    try expect("=")
                    let number = try self.number()
                    try skipOptions()
                    try expect(";")
                    schema.fields.append(
                        Field(
                            message: message, name: name, number: number, type: type,
                            repeated: repeated, oneof: oneof))
                }
            }
        }

        mutating func enumeration(prefix: String, into schema: inout ProtoSchema) throws {
            let name = prefix + (try identifier())
            schema.enumerations.append(name)
            try expect("{")
            while true {
                if !atEnd, tokens[index] == .symbol("}") {
                    index += 1
                    return
                }
                if !atEnd, tokens[index] == .symbol(";") {
                    index += 1
                    continue
                }
                let value = try identifier()
                if value == "option" || value == "reserved" {
                    try skipStatement()
                    continue
                }
                try expect("=")
                let number = try self.number()
                try skipOptions()
                try expect(";")
                schema.values.append(EnumValue(enumeration: name, name: value, number: number))
            }
        }
    }
}
