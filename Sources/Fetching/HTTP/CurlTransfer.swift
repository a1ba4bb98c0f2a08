import CCurl
import Foundation
import Runtime

/// One transfer inside the ``TransferLoop``: libcurl's easy handle, set up for a ``TransferRequest``,
/// and what its callbacks have received.
///
/// Thread ownership: created by the task that asks for the transfer, handed to the loop thread through
/// the loop's locked inbox, and from then on touched only by that thread (libcurl calls the callbacks
/// there too) until ``finish(curlCode:stop:)`` hands the report back through the continuation. Hence
/// `@unchecked Sendable`.
final class CurlTransfer: @unchecked Sendable {
    /// The loop's name for the transfer (for cancellation).
    let id: UInt64
    let request: TransferRequest
    private let continuation: CheckedContinuation<TransferReport, Never>
    /// The loop's warm bodies: an announced body comes from it, a delivered one goes back to it.
    private let bodies: BodyPool?
    /// Shared with the task that awaits the report, for ThreadSanitizer (`TransferHandOff`).
    private let handOff: TransferHandOff?
    /// libcurl's easy handle, once ``setUp()`` succeeded.
    private(set) var handle: UnsafeMutableRawPointer?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The request's extra headers (libcurl keeps the list's pointer until the transfer ends).
    private var headers: UnsafeMutablePointer<curl_slist>?
    /// A PUT's body, at a stable address for libcurl (`CURLOPT_POSTFIELDS`).
    private var uploadBuffer: UnsafeMutableBufferPointer<UInt8>?
    /// When a header or body byte last arrived (or the transfer started): the read timeout counts from it.
    private(set) var lastActivity: ContinuousClock.Instant = .now
    private var body: [UInt8] = []
    private var status = 0
    private var location: String?
    private var retryAfter: String?
    /// Set by a callback that refused data; the transfer then ends with `CURLE_WRITE_ERROR`.
    private var stop: TransferStop?
    /// The source policy's latest refusal of an address libcurl was about to connect to.
    private var refusal: SourceRefusal?
    /// Whether the policy allowed a connection since the latest refusal (a name with several addresses:
    /// one denied, another allowed and used).
    private var connectedSinceRefusal = false

    /// libcurl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`; libcurl 7.88 accepts up to 10 MiB).
    static let receiveBufferBytes = 256 << 10

    init(
        id: UInt64, request: TransferRequest, continuation: CheckedContinuation<TransferReport, Never>,
        bodies: BodyPool? = nil, handOff: TransferHandOff? = nil
    ) {
        self.id = id
        self.request = request
        self.continuation = continuation
        self.bodies = bodies
        self.handOff = handOff
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        if let handle { shiftwork_curl_easy_cleanup(handle) }
        if let headers { shiftwork_curl_slist_free_all(headers) }
        uploadBuffer?.deallocate()
        errorBuffer.deallocate()
    }

    /// When the read timeout ends this transfer unless a byte arrives first.
    var silenceDeadline: ContinuousClock.Instant { lastActivity + request.readTimeout }

    /// Creates and configures the easy handle. Throws the reason when libcurl refuses an option.
    func setUp() throws(CurlSetupError) {
        guard let handle = shiftwork_curl_easy_init() else {
            throw CurlSetupError("libcurl could not create a transfer")
        }
        self.handle = handle
        let context = Unmanaged.passUnretained(self).toOpaque()
        let milliseconds = { (duration: Duration) -> Int in
            let (seconds, attoseconds) = duration.components
            return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        }
        try check(shiftwork_curl_set_string(handle, CURLOPT_URL, request.url), "URL")
        // Only HTTP and HTTPS, for the request and for every redirect.
        try check(shiftwork_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"), "protocols")
        try check(shiftwork_curl_set_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "redirect protocols")
        try check(
            shiftwork_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, request.maxRedirects > 0 ? 1 : 0), "redirects")
        try check(shiftwork_curl_set_long(handle, CURLOPT_MAXREDIRS, max(0, request.maxRedirects)), "redirect limit")
        try check(shiftwork_curl_set_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP version")
        // No CURLOPT_PIPEWAIT: a transfer must not wait for another one's connection to the same host
        // (a stalled one would hold it back); an HTTP/2 connection already up is still multiplexed.
        // No signals: this thread is one of many (a threaded resolver does the name lookups).
        try check(shiftwork_curl_set_long(handle, CURLOPT_NOSIGNAL, 1), "no signals")
        try check(
            shiftwork_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connectTimeout)),
            "connect timeout")
        try check(shiftwork_curl_set_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(request.timeout)), "timeout")
        if request.minimumRate > 0 {
            let window = max(1, Int((milliseconds(request.minimumRateWindow) + 999) / 1000))
            try check(shiftwork_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, request.minimumRate), "minimum rate")
            try check(shiftwork_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, window), "minimum rate window")
        }
        // A receive buffer of 256 KiB instead of libcurl's 16 KiB: a photo of a few MB then arrives in a few
        // dozen reads and body callbacks, not hundreds, and the loop thread wakes less often.
        try check(shiftwork_curl_set_long(handle, CURLOPT_BUFFERSIZE, Self.receiveBufferBytes), "receive buffer size")
        try check(shiftwork_curl_set_string(handle, CURLOPT_USERAGENT, "shiftwork"), "user agent")
        try check(shiftwork_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "error buffer")
        try check(shiftwork_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "header callback")
        try check(shiftwork_curl_set_pointer(handle, CURLOPT_HEADERDATA, context), "header context")
        try check(shiftwork_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback), "body callback")
        try check(shiftwork_curl_set_pointer(handle, CURLOPT_WRITEDATA, context), "body context")
        if !request.sourcePolicy.allowsEverything {
            // Every connection libcurl opens (each resolved address, each redirect) is judged by the address
            // it would reach, before the socket exists.
            try check(
                shiftwork_curl_set_opensocket(handle, CURLOPT_OPENSOCKETFUNCTION, curlOpenSocketCallback),
                "socket callback")
            try check(shiftwork_curl_set_pointer(handle, CURLOPT_OPENSOCKETDATA, context), "socket context")
        }
        try setUpS3(handle)
        lastActivity = .now
    }

    /// A PUT body and AWS Signature Version 4, for S3 requests.
    private func setUpS3(_ handle: UnsafeMutableRawPointer) throws(CurlSetupError) {
        var lines: [String] = []
        if let upload = request.upload {
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, upload.bytes.count))
            _ = buffer.initialize(from: upload.bytes)
            uploadBuffer = buffer
            try check(
                shiftwork_curl_set_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(upload.bytes.count)),
                "upload size")
            try check(shiftwork_curl_set_pointer(handle, CURLOPT_POSTFIELDS, buffer.baseAddress), "upload body")
            try check(shiftwork_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, "PUT"), "method")
            // No "Expect:" line to switch 100-continue off: libcurl 7.88 would sign that empty header.
            lines.append("Content-Type: \(upload.contentType)")
        }
        if let signing = request.signing {
            // S3 wants the payload's hash in a header too; it equals the one libcurl signs.
            lines.append("x-amz-content-sha256: \(Self.sha256Hex(request.upload?.bytes ?? []))")
            try check(
                shiftwork_curl_set_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):s3"), "AWS signature")
            try check(shiftwork_curl_set_string(handle, CURLOPT_USERNAME, signing.accessKeyID), "access key")
            try check(shiftwork_curl_set_string(handle, CURLOPT_PASSWORD, signing.secretAccessKey), "secret key")
            if let token = signing.sessionToken { lines.append("x-amz-security-token: \(token)") }
        }
        guard !lines.isEmpty else { return }
        for line in lines { headers = shiftwork_curl_slist_append(headers, line) }
        try check(shiftwork_curl_set_pointer(handle, CURLOPT_HTTPHEADER, headers), "headers")
    }

    /// The SHA-256 of `bytes` in lowercase hex.
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                shiftwork_sha256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    private func check(_ code: CURLcode, _ what: String) throws(CurlSetupError) {
        guard code == CURLE_OK else {
            throw CurlSetupError(
                "libcurl refused the \(what) option: \(String(cString: shiftwork_curl_easy_strerror(code)))")
        }
    }

    // MARK: Callbacks (on the loop thread)

    /// libcurl is about to connect to `address`: the socket when the source policy allows it, else
    /// `CURL_SOCKET_BAD` (libcurl tries the name's next address, or fails with `CURLE_COULDNT_CONNECT`).
    fileprivate func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        var bytes = [UInt8](repeating: 0, count: 16)
        var port: UInt16 = 0
        let count = Int(shiftwork_curl_sockaddr_bytes(address, &bytes, &port))
        guard let ip = IPAddress(bytes: Array(bytes.prefix(count))) else {
            // Not an IP connection (a Unix socket, say): no address to judge, nothing of the network reached.
            refusal = nil
            return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
        }
        if case .denied(let refused) = request.sourcePolicy.decision(for: ip) {
            refusal = refused
            connectedSinceRefusal = false
            return CURL_SOCKET_BAD
        }
        connectedSinceRefusal = true
        return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    }

    /// One header line (status lines of every response included, redirects too).
    fileprivate func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        lastActivity = .now
        let text = String(decoding: line, as: UTF8.self).trimmingSuffix(while: \.isNewline)
        if text.hasPrefix("HTTP/") {
            // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
            status = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            retryAfter = nil
            return line.count
        }
        guard let colon = text.firstIndex(of: ":") else { return line.count }
        let name = text[..<colon].lowercased()
        let value = String(text[text.index(after: colon)...].trimmingPrefix(while: { $0 == " " || $0 == "\t" }))
        switch name {
        case "location":
            location = value
        case "retry-after":
            retryAfter = value
        case "content-length" where (200..<300).contains(status):
            if let length = Int(value) {
                guard length <= request.maxBytes else {
                    stop = .announcedTooLarge(length)
                    return 0
                }
                // Never over bytes already kept (a trailer that names a length comes after the body).
                if body.isEmpty {
                    body = bodies?.take(capacity: length) ?? Self.emptyBody(capacity: length)
                } else {
                    body.reserveCapacity(length)
                }
            }
        default:
            break
        }
        return line.count
    }

    /// A piece of the body. Only a success's body is kept; a redirect's is skipped, any other ends the
    /// transfer (its status says enough).
    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = .now
        switch status {
        case 200..<300:
            guard body.count + bytes.count <= request.maxBytes else {
                stop = .bodyTooLarge
                return 0
            }
            body.append(contentsOf: bytes)
            return bytes.count
        case 300..<400:
            return bytes.count
        default:
            stop = .unsuccessfulStatus
            return 0
        }
    }

    /// The most of an announced body whose pages ``emptyBody(capacity:)`` maps ahead (a server may announce
    /// more than it sends: beyond this the pages are mapped as the bytes arrive).
    static let populatedBodyBytes = 32 << 20

    /// An empty array with room for `capacity` bytes, its pages mapped in one system call
    /// (`MADV_POPULATE_WRITE`, Linux 5.14+; older kernels refuse it and the pages are mapped as the body
    /// arrives). A fresh body of a megabyte would otherwise take 256 page faults as the bytes are copied in:
    /// half of the download thread's CPU in a profile of 12-MP photos (benchmarks.md, "The download's page
    /// faults"). The work of each page (allocate, clear) stays; the 256 trips through the fault handler go.
    static func emptyBody(capacity: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = 0
            #if os(Linux)
            guard capacity <= populatedBodyBytes, let base = buffer.baseAddress else { return }
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let start = (Int(bitPattern: base) + page - 1) & ~(page - 1)
            let end = (Int(bitPattern: base) + buffer.count) & ~(page - 1)
            if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_POPULATE_WRITE) }
            #endif
        }
    }

    // MARK: Finishing (on the loop thread)

    /// Hands the report back to the waiting task; `stop` overrides a stop the callbacks recorded. Call
    /// once, after the handle left the multi handle. A body handed back is parked in the loop's pool too
    /// (a body only ever arrives on the loop thread, where the pool lives).
    func finish(curlCode: CURLcode, stop loopStop: TransferStop? = nil) {
        var systemError = 0
        var effectiveURL: UnsafeMutablePointer<CChar>?
        var responseCode = 0
        if let handle {
            _ = shiftwork_curl_get_long(handle, CURLINFO_OS_ERRNO, &systemError)
            _ = shiftwork_curl_get_string(handle, CURLINFO_EFFECTIVE_URL, &effectiveURL)
            _ = shiftwork_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &responseCode)
        }
        let report = TransferReport(
            url: request.url, curlCode: curlCode.rawValue, curlMessage: String(cString: errorBuffer),
            systemError: Int32(truncatingIfNeeded: systemError), status: responseCode != 0 ? responseCode : status,
            effectiveURL: effectiveURL.map { String(cString: $0) }, location: location, retryAfter: retryAfter,
            body: (loopStop ?? stop) == nil ? body : [], stop: loopStop ?? stop,
            refusal: connectedSinceRefusal ? nil : refusal)
        if !report.body.isEmpty { bodies?.park(report.body) }
        body = []
        if let handOff { ThreadSanitizerAnnotations.handingOver(handOff) }
        continuation.resume(returning: report)
    }
}

/// libcurl refused to set a transfer up.
struct CurlSetupError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

private let curlHeaderCallback: curl_write_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

private let curlOpenSocketCallback: curl_opensocket_callback = { context, _, address in
    guard let context, let address else { return CURL_SOCKET_BAD }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.openSocket(address)
}

private let curlWriteCallback: curl_write_callback = { buffer, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = Substring(self)
        while let last = text.last, predicate(last) { text = text.dropLast() }
        return String(text)
    }
}
