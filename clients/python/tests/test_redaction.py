"""`redact_source` and `redact_urls` mask what Swift's `SourceRedaction` masks, the same way (no sockets)."""

import unittest

from shiftwork_client import redact_source, redact_urls


class RedactionTests(unittest.TestCase):
    def test_the_userinfo_password_is_masked_and_the_user_kept(self):
        self.assertEqual(redact_source("http://alice:hunter2@host/x.jpg"), "http://alice:***@host/x.jpg")
        self.assertEqual(redact_source("https://alice:p%40ss:w@rd@host:8443/x.jpg"), "https://alice:***@host:8443/x.jpg")
        self.assertEqual(redact_source("http://alice@host/x.jpg"), "http://alice@host/x.jpg")
        self.assertEqual(redact_source("http://host:8080/x.jpg?a=b@c:d"), "http://host:8080/x.jpg?a=b@c:d")

    def test_presigned_url_signatures_and_credentials_are_masked(self):
        self.assertEqual(
            redact_source("https://b.s3.amazonaws.com/k.jpg?X-Amz-Credential=AKIA%2F1&X-Amz-Date=20261128T000000Z"
                          "&X-Amz-Security-Token=FwoG&X-Amz-Signature=abc"),
            "https://b.s3.amazonaws.com/k.jpg?X-Amz-Credential=***&X-Amz-Date=20261128T000000Z"
            "&X-Amz-Security-Token=***&X-Amz-Signature=***")
        self.assertEqual(redact_source("https://g/b/o.png?X-Goog-Credential=sa&x-goog-signature=ff#frag"),
                         "https://g/b/o.png?X-Goog-Credential=***&x-goog-signature=***#frag")
        self.assertEqual(redact_source("https://a.blob.core.windows.net/c/b.jpg?sv=2022-11-02&sig=Zm9v%3D"),
                         "https://a.blob.core.windows.net/c/b.jpg?sv=2022-11-02&sig=***")
        self.assertEqual(redact_source("http://h/x.jpg?token=t&access_token=u&width=3&signature=kept"),
                         "http://h/x.jpg?token=***&access_token=***&width=3&signature=kept")
        self.assertEqual(redact_source("http://h/x.jpg?X%2DAmz%2DSignature=s"), "http://h/x.jpg?X%2DAmz%2DSignature=***")

    def test_sources_without_credentials_are_unchanged(self):
        for source in ["http://127.0.0.1:8000/rocket.jpg", "/srv/photos/a.jpg", "s3://bucket/key.jpg", "https://h/x.jpg?w=1",
                       "http://h/x.jpg?flag&sig", None, ""]:
            self.assertEqual(redact_source(source), source)

    def test_urls_inside_messages_are_masked(self):
        self.assertEqual(
            redact_urls("http://alice:hunter2@h/x.jpg?X-Amz-Signature=abc: HTTP 404 Not Found (redirected to https://h2/y?sig=zz)"),
            "http://alice:***@h/x.jpg?X-Amz-Signature=***: HTTP 404 Not Found (redirected to https://h2/y?sig=***)")
        self.assertEqual(redact_urls("no URL here: a:b@c"), "no URL here: a:b@c")


if __name__ == "__main__":
    unittest.main()
