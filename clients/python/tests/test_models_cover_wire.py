"""Every field of every message a client receives reaches the client's models: the test walks the protobuf
descriptors (what proto/ says today), fills each received message with a distinct value in every field, converts
it as the session does, and fails for a field whose value does not arrive in the model. A field added to the
proto fails here until the model carries it (or the field is listed below as consumed by the session)."""

from __future__ import annotations

import unittest

from google.protobuf.descriptor import FieldDescriptor

from shiftwork_client import session
from shiftwork_client._proto.shiftwork.v1 import shiftwork_pb2 as pb

# The envelope bodies a coordinator sends a client, and those a client sends (or that only workers exchange):
# together every body, so that a new body must be placed in one of them.
RECEIVED_BODIES = {"batch_accepted", "item_finished", "items_finished", "items_added", "batch_finished", "status_reply",
                   "cancel_accepted", "retry_accepted", "refusal", "upload_request"}
NOT_RECEIVED_BODIES = {"submit_batch", "status_request", "cancel_batch", "fetch_results", "retry_batch",  # client → coordinator
                       "worker_hello", "heartbeat", "task_result", "worker_goodbye", "task_results", "welcome",
                       "task_assignment", "cancel_task", "task_assignments", "give_back_task", "task_given_back",
                       "upload_data",  # client → coordinator: tests/test_uploads.py checks that it sets every field
                       "pair_announcement", "pair_journal", "pair_held", "pair_result_file", "pair_snapshot"}  # pair link

# Per received message: how the session converts it, and where a field lands when the model's attribute is named
# otherwise (a path through the model: "retried", "failure.code"). `None`: consumed by the session itself (the
# request id that matches an answer to its request), with the reason.
CONVERSIONS = {
    "BatchAccepted": (session._batch_accepted, {"request_id": None}),
    "RetryAccepted": (session._retry_accepted, {"request_id": None, "item_indexes": "retried"}),
    "CancelAccepted": (session._cancel_result, {"request_id": None}),
    "BatchFinished": (session._batch_finished, {}),
    "ItemsAdded": (session._items_added, {"items": ("sources", "output_names")}),
    "BatchItem": (lambda item: session._items_added(pb.ItemsAdded(items=[item])),
                  {"source": "sources.0", "output_name": "output_names.0",
                   # a manifest's items are never uploads (only a client's own files are)
                   "upload": None}),
    "UploadRequest": (session._upload_request, {}),
    "UploadWanted": (session._upload_wanted, {}),
    "UploadMetadata": (session._upload_metadata, {}),
    "ItemFinished": (lambda finished: session._item_result(finished, None),
                     {"item_index": "index", "outcome": ("output", "failure")}),
    "ItemFinishedBatch": (lambda batch: [session._item_result(item, None) for item in batch.items], {"items": "0"}),
    "TaskOutput": (session._output, {}),
    "TaskFailure": (session._failure, {}),
    "StatusReply": (session._cluster_status, {"request_id": None}),
    "WorkerStatus": (session._worker_status, {}),
    "BatchStatus": (session._batch_status, {}),
    "ItemStatus": (session._item_status, {"item_index": "index"}),
    "AttemptStatus": (session._attempt_status, {}),
    "ClientStatus": (session._client_status, {}),
    "PairStatus": (session._pair_status, {}),
    "PairPosition": (session._pair_position, {}),
    "Refusal": (session._refused_error, {}),
}


def received_messages():
    """Every message type reachable from the bodies a client receives."""
    seen, todo = {}, [pb.Envelope.DESCRIPTOR.fields_by_name[name].message_type for name in sorted(RECEIVED_BODIES)]
    while todo:
        descriptor = todo.pop()
        if descriptor.name in seen:
            continue
        seen[descriptor.name] = descriptor
        todo += [f.message_type for f in descriptor.fields if f.type == FieldDescriptor.TYPE_MESSAGE]
    return seen


def filled(descriptor, counter, oneof_choice=0):
    """A message of `descriptor` with a distinct non-default value in every field (the `oneof_choice`th field of
    each oneof), and the values set, by field name."""
    message = pb.Envelope() if descriptor.name == "Envelope" else getattr(pb, descriptor.name)()
    values = {}
    chosen = {oneof.name: oneof.fields[oneof_choice % len(oneof.fields)].name for oneof in descriptor.oneofs}
    for field in descriptor.fields:
        if field.containing_oneof is not None and chosen[field.containing_oneof.name] != field.name:
            continue
        counter[0] += 1
        n = counter[0]
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            element, _ = filled(field.message_type, counter, oneof_choice)
            if field.label == FieldDescriptor.LABEL_REPEATED:
                getattr(message, field.name).append(element)
            else:
                getattr(message, field.name).CopyFrom(element)
            values[field.name] = element
            continue
        if field.type == FieldDescriptor.TYPE_ENUM:
            numbers = [v.number for v in field.enum_type.values if v.number != 0]
            value = numbers[n % len(numbers)]
        elif field.type == FieldDescriptor.TYPE_BOOL:
            value = True
        elif field.type == FieldDescriptor.TYPE_STRING:
            value = f"{field.name}-{n}"
        elif field.type == FieldDescriptor.TYPE_BYTES:
            value = f"bytes-{n}".encode()
        elif field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
            value = n + 0.5
        elif field.type in (FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT64):
            value = -n
        else:
            value = n
        if field.label == FieldDescriptor.LABEL_REPEATED:
            getattr(message, field.name).append(value)
        else:
            setattr(message, field.name, value)
        values[field.name] = value
    return message, values


def at(model, path):
    for part in path.split("."):
        model = model[int(part)] if part.isdigit() else getattr(model, part)
    return model


def expected_value(field, value):
    """What a model holds for a wire value: enum names, tuples for repeated fields, bytes as bytes."""
    if field.type == FieldDescriptor.TYPE_ENUM:
        return field.enum_type.values_by_number[value].name
    if field.label == FieldDescriptor.LABEL_REPEATED:
        return (value,)
    return value


class ModelsCoverWireTests(unittest.TestCase):
    def test_every_envelope_body_is_known_as_received_or_not(self):
        bodies = {f.name for f in pb.Envelope.DESCRIPTOR.oneofs_by_name["body"].fields}
        self.assertEqual(bodies - RECEIVED_BODIES - NOT_RECEIVED_BODIES, set(),
                         "a new envelope body: add it to RECEIVED_BODIES (and convert it) or NOT_RECEIVED_BODIES")
        self.assertEqual((RECEIVED_BODIES | NOT_RECEIVED_BODIES) - bodies, set(), "a body listed here is gone from proto/")

    def test_every_received_message_has_a_conversion(self):
        missing = sorted(set(received_messages()) - set(CONVERSIONS))
        self.assertEqual(missing, [], "messages a client receives without a conversion into a model")

    def test_every_field_of_every_received_message_reaches_its_model(self):
        for name, descriptor in sorted(received_messages().items()):
            convert, renames = CONVERSIONS[name]
            choices = max([len(o.fields) for o in descriptor.oneofs] + [1])
            for choice in range(choices):
                message, values = filled(descriptor, [0], choice)
                model = convert(message)
                for field_name, value in values.items():
                    with self.subTest(message=name, field=field_name):
                        field = descriptor.fields_by_name[field_name]
                        target = renames.get(field_name, renames.get(field.containing_oneof.name if field.containing_oneof
                                                                     else "", field_name))
                        if target is None:
                            continue
                        if isinstance(target, tuple):
                            present = [at(model, path) for path in target if at(model, path)]
                            self.assertTrue(present, f"{name}.{field_name} reaches none of {target}")
                            continue
                        try:
                            landed = at(model, target)
                        except (AttributeError, IndexError):
                            self.fail(f"{name}.{field_name}: the model ({type(model).__name__}) has no `{target}`: "
                                      "add it to clients/python/src/shiftwork_client/models.py and its conversion")
                        if field.type == FieldDescriptor.TYPE_MESSAGE:
                            self.assertTrue(landed, f"{name}.{field_name} is empty in the model")
                        else:
                            self.assertEqual(landed, expected_value(field, value),
                                             f"{name}.{field_name} does not arrive in the model's `{target}`")


if __name__ == "__main__":
    unittest.main()
