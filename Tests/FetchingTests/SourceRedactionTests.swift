import XCTest

@testable import Fetching

/// Credentials in source URLs are masked wherever a source is shown.
final class SourceRedactionTests: XCTestCase {
    func testTheUserinfoPasswordIsMaskedAndTheUserKept() {
        XCTAssertEqual(SourceRedaction.redact("http://alice:hunter2@host/x.jpg"), "http://alice:***@host/x.jpg")
        XCTAssertEqual(
            SourceRedaction.redact("https://alice:p%40ss:w@rd@host:8443/x.jpg"), "https://alice:***@host:8443/x.jpg")
        XCTAssertEqual(SourceRedaction.redact("http://alice@host/x.jpg"), "http://alice@host/x.jpg", "no password")
        XCTAssertEqual(
            SourceRedaction.redact("http://host:8080/x.jpg?a=b@c:d"), "http://host:8080/x.jpg?a=b@c:d",
            "an @ after the authority is not userinfo")
    }

    func testPresignedURLSignaturesAndCredentialsAreMasked() {
        let s3 =
            "https://bucket.s3.amazonaws.com/k.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20261128%2Fus-east-1"
            + "&X-Amz-Date=20261128T000000Z&X-Amz-Expires=900&X-Amz-Security-Token=FwoG&X-Amz-SignedHeaders=host&X-Amz-Signature=abc123"
        XCTAssertEqual(
            SourceRedaction.redact(s3),
            "https://bucket.s3.amazonaws.com/k.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***"
                + "&X-Amz-Date=20261128T000000Z&X-Amz-Expires=900&X-Amz-Security-Token=***&X-Amz-SignedHeaders=host&X-Amz-Signature=***"
        )
        XCTAssertEqual(
            SourceRedaction.redact(
                "https://storage.googleapis.com/b/o.png?X-Goog-Credential=sa%40p&x-goog-signature=ff#frag"),
            "https://storage.googleapis.com/b/o.png?X-Goog-Credential=***&x-goog-signature=***#frag")
        XCTAssertEqual(
            SourceRedaction.redact("https://acct.blob.core.windows.net/c/b.jpg?sv=2022-11-02&sp=r&sig=Zm9v%3D"),
            "https://acct.blob.core.windows.net/c/b.jpg?sv=2022-11-02&sp=r&sig=***")
        XCTAssertEqual(
            SourceRedaction.redact("http://h/x.jpg?token=t&access_token=u&width=3&signature=kept"),
            "http://h/x.jpg?token=***&access_token=***&width=3&signature=kept")
        XCTAssertEqual(
            SourceRedaction.redact("http://h/x.jpg?X%2DAmz%2DSignature=s"), "http://h/x.jpg?X%2DAmz%2DSignature=***",
            "percent-encoded names")
    }

    func testSourcesWithoutCredentialsAreUnchanged() {
        for source in [
            "http://127.0.0.1:8000/rocket.jpg", "/srv/photos/a.jpg", "s3://bucket/key.jpg", "file:///tmp/a.png",
            "https://h/x.jpg?w=1&h=2", "C:\\photos\\a.jpg", "http://h/x.jpg?flag&sig",
        ] {
            XCTAssertEqual(SourceRedaction.redact(source), source)
        }
    }

    func testURLsInsideMessagesAreMasked() {
        let message =
            "http://alice:hunter2@h/x.jpg?X-Amz-Signature=abc: HTTP 404 Not Found (redirected to https://h2/y?sig=zz)"
        XCTAssertEqual(
            SourceRedaction.redactURLs(in: message),
            "http://alice:***@h/x.jpg?X-Amz-Signature=***: HTTP 404 Not Found (redirected to https://h2/y?sig=***)")
        XCTAssertEqual(
            SourceRedaction.redactURLs(in: "source=\"http://a:b@h/\" done"), "source=\"http://a:***@h/\" done")
        XCTAssertEqual(SourceRedaction.redactURLs(in: "url=http://a:b@h/x"), "url=http://a:***@h/x")
        XCTAssertEqual(SourceRedaction.redactURLs(in: "no URL here: a:b@c"), "no URL here: a:b@c")
    }
}
