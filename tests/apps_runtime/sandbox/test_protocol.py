"""Framing shared by the host and the child."""

import os

import pytest

from apps_runtime.sandbox.runtime import protocol


def test_decoder_reassembles_frames_split_at_any_byte():
    stream = b"".join(protocol.pack(protocol.dumps(value)) for value in ({"a": 1}, [2], "trois"))
    decoder = protocol.FrameDecoder(limit=100)

    payloads = []
    for i in range(len(stream)):
        payloads += decoder.feed(stream[i : i + 1])

    assert payloads == [b'{"a":1}', b"[2]", b'"trois"']
    assert not decoder.pending


def test_decoder_refuses_a_frame_larger_than_its_limit_from_the_header_alone():
    decoder = protocol.FrameDecoder(limit=10)

    with pytest.raises(protocol.FrameTooLarge):
        decoder.feed(protocol.HEADER.pack(11))


def test_blocking_read_and_write_round_trip_over_a_pipe():
    r, w = os.pipe()
    try:
        protocol.write_frame(w, protocol.dumps({"x": "\u00e9\ud800"}))
        os.close(w)
        assert protocol.read_frame(r) == b'{"x":"\\u00e9\\ud800"}'
        assert protocol.read_frame(r) is None
    finally:
        os.close(r)


def test_dumps_rejects_values_that_are_not_json():
    for value in ({1, 2}, float("nan"), object()):
        with pytest.raises((TypeError, ValueError)):
            protocol.dumps(value)
