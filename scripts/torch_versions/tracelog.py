"""Reads and shrinks torch's structured trace logs (TORCH_TRACE), as record.py and the replay tests use them.

A log line is a glog prefix, `] ` and one JSON object: the event's metadata, plus `has_payload` (the md5
of its payload) when a payload follows on the next lines, each starting with a tab. In process, torch
hands the same metadata (without `has_payload`) and payload to the `torch.__trace` logger's handlers
as the record's `metadata` and `payload` attributes.
"""

import gzip
import hashlib
import json

ENVELOPE_KEYS = ("rank", "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "has_payload")


class Event:
    """One structured-trace event: the glog prefix, its metadata and its payload (None when it has none)."""

    __slots__ = ("prefix", "metadata", "payload", "body")

    def __init__(self, prefix, metadata, payload, body=None):
        self.prefix, self.metadata, self.payload = prefix, metadata, payload
        self.body = body  # the metadata's text as torch wrote it, while unchanged

    @property
    def kind(self):
        """The event's key (`compilation_metrics`, `dynamo_start`, ...); `artifact:<name>` for artifacts."""
        for key in self.metadata:
            if key not in ENVELOPE_KEYS:
                if key == "artifact":
                    return "artifact:" + str(self.metadata[key].get("name", ""))
                return key
        return ""

    def handler_metadata(self):
        """The metadata as the in-process handler receives it."""
        return {key: value for key, value in self.metadata.items() if key != "has_payload"}

    def lines(self):
        body = self.body if self.body is not None else json.dumps(self.metadata)
        text = f"{self.prefix}] {body}\n"
        if self.payload is not None:
            text += "".join(f"\t{line}\n" for line in self.payload.split("\n"))
        return text


def compile_id(metadata):
    return metadata.get("frame_id"), metadata.get("frame_compile_id")


def fx_cache_states(events):
    """{compile id: "hit"/"miss"/"bypass"} as torch reported its FX graph cache lookups: artifacts
    `fx_graph_cache_<state>` (torch 2.6 on) or the `cache_state` in `fx_graph_cache_hash` (torch 2.5)."""
    states = {}
    for event in events:
        name = event.kind.removeprefix("artifact:")
        if name == "fx_graph_cache_hash":
            try:
                states[compile_id(event.metadata)] = json.loads(event.payload or "{}").get("cache_state")
            except ValueError:
                continue
        elif name.startswith("fx_graph_cache_"):
            states[compile_id(event.metadata)] = name.removeprefix("fx_graph_cache_")
    return states


def restart_reasons(events):
    """Every `restart_reasons` entry of the compile metrics (graph breaks that restarted a compile)."""
    return [reason for event in events if event.kind == "compilation_metrics"
            for reason in event.metadata["compilation_metrics"].get("restart_reasons") or []]


def read(path):
    """The events of a log (plain or gzip); lines that are not events are skipped."""
    opener = gzip.open if str(path).endswith(".gz") else open
    events = []
    payload_lines = None
    with opener(path, "rt", encoding="utf-8") as log:
        for raw in log:
            line = raw.rstrip("\n")
            if line.startswith("\t"):
                if payload_lines is not None:
                    payload_lines.append(line[1:])
                continue
            _finish(events, payload_lines)
            payload_lines = None
            prefix, separator, body = line.partition("] ")
            if not separator:
                continue
            try:
                metadata = json.loads(body)
            except ValueError:
                continue
            if not isinstance(metadata, dict):
                continue
            events.append(Event(prefix, metadata, None, body))
            if "has_payload" in metadata:
                payload_lines = []
    _finish(events, payload_lines)
    return events


def _finish(events, payload_lines):
    if payload_lines is not None and events:
        events[-1].payload = "\n".join(payload_lines)


# The fixture filter. Kept whole: every event without a payload (compile metrics, dynamo_start, str,
# tensor descriptions, symbols, ...) and the payload artifacts torchscope parses. Dropped: events
# whose payload is a graph, generated code, guards or bytecode dump, every chromium event but the
# first (the importer's time anchor), and the configuration snapshots inside `compilation_metrics`.
# Cache artifacts (`fx_graph_cache_*`, `aotautograd_cache_*`) are kept with the `components` of
# their JSON payload (the cache key's inputs, tens of KB) emptied and `has_payload` recomputed.
PARSED_ARTIFACTS = ("dynamo_graph_break_reason", "recompile_reasons")
CACHE_ARTIFACT_PREFIXES = ("fx_graph_cache_", "aotautograd_cache_")


def _is_config_snapshot(key):
    return key.endswith("_config")


def shrink(events):
    """The events a fixture keeps (see the filter above); the input is left unchanged."""
    kept = []
    chromium_seen = False
    for event in events:
        kind = event.kind
        if kind == "chromium_event":
            if not chromium_seen:
                kept.append(event)
            chromium_seen = True
        elif kind in ("compilation_metrics", "bwd_compilation_metrics"):
            metrics = {key: value for key, value in event.metadata[kind].items() if not _is_config_snapshot(key)}
            kept.append(Event(event.prefix, {**event.metadata, kind: metrics}, event.payload))
        elif event.payload is None or kind.removeprefix("artifact:") in PARSED_ARTIFACTS:
            kept.append(event)
        elif kind.removeprefix("artifact:").startswith(CACHE_ARTIFACT_PREFIXES):
            kept.append(_without_cache_key_components(event))
    return kept


def _without_cache_key_components(event):
    try:
        payload = json.loads(event.payload)
    except ValueError:
        return event
    if not isinstance(payload, dict) or not payload.get("components"):
        return event
    text = json.dumps({**payload, "components": []})
    metadata = {**event.metadata, "has_payload": hashlib.md5(text.encode("utf-8")).hexdigest()}
    return Event(event.prefix, metadata, text)


def write(events, path):
    """Writes events as a gzip-compressed log, reproducibly (no name or time in the gzip header)."""
    text = "".join(event.lines() for event in events).encode("utf-8")
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as out:
        out.write(text)
