"""The wire rules of `Session`, without sockets: bytes in, deliveries out."""

from __future__ import annotations

import unittest

from shiftwork_client import (BatchAccepted, BatchFinished, ClientStatus, ItemResult, ProtocolVersionError, RefusedError,
                              RetryAccepted, TiltShift)
from shiftwork_client._proto.shiftwork.v1 import shiftwork_pb2 as pb
from shiftwork_client.session import MAJOR, MINOR, Answer, Event, FailAll, Session


def envelope(major=1, **body) -> list:
    return [pb.Envelope(major=major, minor=2, **body).SerializeToString()]


def finished(batch_id, index, name="x") -> pb.ItemFinished:
    return pb.ItemFinished(batch_id=batch_id, item_index=index, output_name=name,
                           output=pb.TaskOutput(data=b"\xff\xd8\xff\xe0", media_type="image/jpeg", width=2, height=1))


class SessionTests(unittest.TestCase):
    def accept(self, session, sources, batch_id):
        request_id, data = session.submit(sources, TiltShift())
        sent = pb.Envelope.FromString(data)
        self.assertEqual((sent.major, sent.minor), (MAJOR, MINOR))
        self.assertEqual(sent.submit_batch.request_id, request_id)
        self.assertTrue(sent.submit_batch.accepts_batches)
        deliveries = session.receive(envelope(batch_accepted=pb.BatchAccepted(
            request_id=request_id, batch_id=batch_id, item_count=len(sources), coordinator_id="c")))
        self.assertEqual(deliveries, [Answer(request_id, BatchAccepted(batch_id, len(sources), "c"))])

    def test_an_item_finished_batch_is_split_by_batch_and_each_item_delivered_once(self):
        session = Session()
        self.accept(session, ["a.jpg", "b.jpg"], "b-1")
        self.accept(session, ["c.jpg"], "b-2")
        grouped = pb.ItemFinishedBatch(items=[finished("b-1", 1), finished("b-2", 0), finished("b-1", 1)])
        deliveries = session.receive(envelope(items_finished=grouped))
        self.assertEqual([(d.batch_id, d.event.index, d.event.source) for d in deliveries],
                         [("b-1", 1, "b.jpg"), ("b-2", 0, "c.jpg")])
        self.assertEqual(session.receive(envelope(item_finished=finished("b-1", 1))), [], "delivered twice")
        done = session.receive(envelope(batch_finished=pb.BatchFinished(batch_id="b-2", succeeded=1)))
        self.assertEqual(done, [Event("b-2", BatchFinished("b-2", 1, 0, 0))])
        self.assertEqual(session.receive(envelope(item_finished=finished("b-2", 0))), [], "after BatchFinished")

    def test_requests_say_back_the_furthest_witnessed_position_a_later_term_beating_more_records(self):
        session = Session()
        _, data = session.status()
        self.assertFalse(pb.Envelope.FromString(data).HasField("witnessed"), "nothing witnessed: nothing sent")
        request_id, data = session.submit(["a.jpg"], TiltShift())
        accepted = pb.BatchAccepted(request_id=request_id, batch_id="b-1", item_count=1, coordinator_id="c")
        session.receive([pb.Envelope(major=1, minor=3, witnessed=pb.PairPosition(term=0, records=40),
                                     batch_accepted=accepted).SerializeToString()])
        session.receive(envelope(status_reply=pb.StatusReply()))  # a coordinator alone: no position
        session.receive([pb.Envelope(major=1, minor=3, witnessed=pb.PairPosition(term=0, records=12),
                                     status_reply=pb.StatusReply()).SerializeToString()])
        self.assertEqual(session.witnessed, (0, 40), "an older position is ignored")
        session.receive([pb.Envelope(major=1, minor=3, witnessed=pb.PairPosition(term=1, records=3),
                                     status_reply=pb.StatusReply()).SerializeToString()])
        self.assertEqual(session.witnessed, (1, 3), "a later term beats more records")
        _, fetch = session.fetch("b-1")
        sent = pb.Envelope.FromString(fetch).witnessed
        self.assertEqual((sent.term, sent.records), (1, 3))
        again = pb.Envelope.FromString(session.rewitnessed(data))
        self.assertEqual((again.witnessed.term, again.witnessed.records), (1, 3), "a request sent again after a turn")
        self.assertEqual(again.submit_batch.request_id, request_id)

    def test_a_retry_streams_only_its_items_and_nothing_to_retry_opens_no_stream(self):
        session = Session()
        request_id, data = session.retry("b-1", ["street", 3])
        sent = pb.Envelope.FromString(data).retry_batch
        self.assertEqual((sent.request_id, sent.batch_id, list(sent.items), sent.accepts_batches),
                         (request_id, "b-1", ["street", "3"], True))
        answer = session.receive(envelope(retry_accepted=pb.RetryAccepted(
            request_id=request_id, batch_id="b-1", item_indexes=[1], item_count=3, coordinator_id="c")))
        self.assertEqual(answer, [Answer(request_id, RetryAccepted("b-1", 3, "c", retried=(1,)))])
        grouped = pb.ItemFinishedBatch(items=[finished("b-1", 0), finished("b-1", 1)])
        self.assertEqual([d.event.index for d in session.receive(envelope(items_finished=grouped))], [1],
                         "an item that was not retried is not streamed again")
        nothing_id, _ = session.retry("b-2")
        answer = session.receive(envelope(retry_accepted=pb.RetryAccepted(request_id=nothing_id, batch_id="b-2", item_count=2)))
        self.assertEqual(answer[0].value.retried, ())
        self.assertEqual(session.receive(envelope(item_finished=finished("b-2", 0))), [])

    def test_submit_sends_the_parameters_and_distinct_output_names(self):
        request_id, data = Session().submit(["https://x.org/a/street.jpg", "/p/Street.png", "file:///q/caf%C3%A9.jpg"],
                                            TiltShift(focus=0.3, band=0.1, transition=0.2, radius=4, output_format="png",
                                                      jpeg_quality=80))
        submit = pb.Envelope.FromString(data).submit_batch
        self.assertEqual([item.output_name for item in submit.items], ["street", "Street-2", "café"],
                         "the tree layout's names, as shiftwork submit gives them (characters kept)")
        self.assertAlmostEqual(submit.parameters.focus_position, 0.3, places=5)
        self.assertEqual(submit.parameters.output_format, pb.IMAGE_FORMAT_PNG)
        with self.assertRaises(ValueError):
            Session().submit([], TiltShift())
        with self.assertRaises(ValueError):
            Session().submit(["a.jpg"], TiltShift(output_format="gif"))

    def test_a_refusal_without_request_id_fails_everything_and_one_with_it_fails_its_request(self):
        session = Session()
        request_id, _ = session.status()
        [answer] = session.receive(envelope(refusal=pb.Refusal(request_id=request_id, code=pb.REFUSAL_CODE_LIMIT,
                                                               reason="too many")))
        self.assertIsInstance(answer.error, RefusedError)
        self.assertEqual((answer.error.code, answer.error.reason), ("REFUSAL_CODE_LIMIT", "too many"))
        [fail] = session.receive(envelope(refusal=pb.Refusal(reason="no")))
        self.assertIsInstance(fail, FailAll)
        self.assertEqual(session.receive(envelope(refusal=pb.Refusal(request_id="someone-else", reason="x"))), [])

    def test_other_major_versions_and_version_refusals_name_both_versions(self):
        session = Session()
        [fail] = session.receive(envelope(major=3, status_reply=pb.StatusReply()))
        self.assertIsInstance(fail.error, ProtocolVersionError)
        self.assertIn("major version 3, this client speaks major version 1", str(fail.error))
        request_id, _ = session.status()
        [answer] = session.receive(envelope(refusal=pb.Refusal(
            request_id=request_id, code=pb.REFUSAL_CODE_UNSUPPORTED_VERSION,
            reason="unsupported wire protocol major version 1 (this peer speaks 4)")))
        self.assertEqual((answer.error.coordinator_major, answer.error.client_major), (4, 1))

    def test_malformed_bytes_are_dropped_and_counted_and_unknown_bodies_dropped(self):
        session = Session()
        self.assertEqual(session.receive([b"\xff\xff\xff"]), [])
        self.assertEqual(session.dropped_messages, 1)
        self.assertEqual(session.receive([pb.Envelope(major=1, minor=9).SerializeToString() + b"\xa2\x06\x00"]), [])
        self.assertEqual(session.receive(envelope(status_reply=pb.StatusReply(request_id="unknown"))), [])

    def test_a_failure_code_this_version_does_not_know_reads_as_unspecified(self):
        session = Session()
        self.accept(session, ["a.jpg"], "b-1")
        item = pb.ItemFinished(batch_id="b-1", item_index=0, failure=pb.TaskFailure(code=99, message="new"))
        [event] = session.receive(envelope(item_finished=item))
        self.assertIsInstance(event.event, ItemResult)
        self.assertEqual((event.event.failure.code, event.event.failure.message), ("FAILURE_CODE_UNSPECIFIED", "new"))


if __name__ == "__main__":
    unittest.main()


class EndpointFamilyTests(unittest.TestCase):
    """Which endpoints turn ZMQ_IPV6 on for the client's socket, as on the Swift side (EndpointFamily)."""

    def test_ipv6_addresses_and_names_need_it_ipv4_addresses_do_not(self):
        from shiftwork_client.connection import needs_ipv6
        for endpoint in ["tcp://[::1]:5570", "tcp://[fd00:5713::2]:5570", "tcp://coordinator:5570"]:
            self.assertTrue(needs_ipv6(endpoint), endpoint)
        for endpoint in ["tcp://127.0.0.1:5570", "tcp://10.213.4.1:41231", "inproc://x", "ipc:///tmp/s"]:
            self.assertFalse(needs_ipv6(endpoint), endpoint)


class BoundsTests(unittest.TestCase):
    """Counts a coordinator announces are bounded before this client sizes anything by them."""

    def test_an_item_count_no_coordinator_sends_fails_its_request_and_a_manifest_past_it_is_dropped(self):
        session = Session()
        request_id, _ = session.submit(["a.jpg"], TiltShift())
        answer = session.receive(envelope(batch_accepted=pb.BatchAccepted(
            request_id=request_id, batch_id="b-1", item_count=4294967295, coordinator_id="c")))
        self.assertEqual(len(answer), 1)
        self.assertIsInstance(answer[0].error, RefusedError)
        self.assertIn("BatchAccepted.item_count is 4294967295, more than the limit of 10000000", answer[0].error.reason)
        retry_id, _ = session.retry("b-2")
        answer = session.receive(envelope(retry_accepted=pb.RetryAccepted(
            request_id=retry_id, batch_id="b-2", item_indexes=[1], item_count=4294967295)))
        self.assertIn("RetryAccepted.item_count", answer[0].error.reason)
        dropped = session.dropped_messages
        self.assertEqual(session.receive(envelope(items_added=pb.ItemsAdded(
            batch_id="b-1", parent_index=0, first_index=4294967295, items=[pb.BatchItem(source="x")]))), [])
        self.assertEqual(session.dropped_messages, dropped + 1)

    def test_status_carries_each_clients_usage_and_the_limits(self):
        session = Session()
        request_id, _ = session.status()
        usage = pb.ClientStatus(client="peer c-1", queued_items=3, batches=1)
        reply = pb.StatusReply(request_id=request_id, clients=[usage], max_queued_items_per_client=250000,
                               max_batches_per_client=1000)
        status = session.receive(envelope(status_reply=reply))[0].value
        self.assertEqual(status.clients, (ClientStatus("peer c-1", 3, 1),))
        self.assertEqual((status.max_queued_items_per_client, status.max_batches_per_client), (250000, 1000))
