"""The documents of a stream are the ones PyYAML's safe loader builds, whichever reader
reads each: yaml_rs for the plain subset dumpers write, libyaml's events for the rest
(YAML 1.1 scalars), PyYAML itself for anchors, tags and merge keys; errors as PyYAML's."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventsched.cluster.generate import generate_manifests
from eventsched.cluster.yamlevents import event_documents
from eventsched.cluster.yamlstream import yaml_documents
from eventsched.cluster.yamlsubset import in_subset

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

SCALARS = """\
booleans: [yes, no, on, off, true, False, Y, n]
numbers: [010, 0x1f, 1_000, 190:20:30, 1.5e3, .inf, -.Inf, .nan, 0b101]
nulls: [~, null, ]
times: [2025-01-01T00:00:02Z, 2002-12-14, '2025-01-01T00:00:02Z']
strings: ["yes", '010', plain text, "", 'it''s']
block: |
  a block
? 1
: an integer key
"""


def same_as_pyyaml(text: str) -> list[object]:
    ours = list(yaml_documents(text))
    theirs = list(yaml.load_all(text, Loader=SAFE))
    assert repr(ours) == repr(theirs)  # repr: nan is not equal to itself
    return ours


def test_yaml_1_1_scalars_resolve_as_the_safe_loader_resolves_them() -> None:
    (doc,) = same_as_pyyaml(SCALARS)
    assert isinstance(doc, dict)
    assert doc["booleans"] == [True, False, True, False, True, False, "Y", "n"]
    assert doc["numbers"][:4] == [8, 31, 1000, 685230]
    assert doc["times"][0] == datetime.datetime(2025, 1, 1, 0, 0, 2, tzinfo=datetime.UTC)
    assert doc["times"][2] == "2025-01-01T00:00:02Z"
    assert doc["strings"][:2] == ["yes", "010"]
    assert doc[1] == "an integer key"


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",
        "base: &b {cpu: 1}\nderived:\n  <<: *b\n  memory: 2\n",
        "a: !!str 010\nb: !!binary aGVsbG8=\n",
        "a: !!set {x, y}\n",
        "plain: 1\n---\nfirst: &f 1\nagain: *f\n---\nafter: yes\n",
        "=: value key\n",
    ],
)
def test_anchors_tags_and_merge_keys_are_built_by_pyyaml(text: str) -> None:
    same_as_pyyaml(text)


def test_empty_documents_and_streams() -> None:
    assert same_as_pyyaml("") == []
    assert same_as_pyyaml("---\n---\na: 1\n...\n") == [None, {"a": 1}]
    assert same_as_pyyaml("--- 5\n--- [1, 2]\n") == [5, [1, 2]]


@pytest.mark.parametrize(
    "text", ["a: 1\n---\nb: [1, 2\nc: 3\n", "a: 1\n---\n? [a, b]\n: listed key\n", "a: *nowhere\n"]
)
def test_invalid_yaml_raises_what_pyyaml_raises(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as ours:
        list(yaml_documents(text))
    with pytest.raises(yaml.YAMLError) as theirs:
        list(yaml.load_all(text, Loader=SAFE))
    assert str(ours.value) == str(theirs.value)


def test_progress_is_told_within_one_large_document() -> None:
    """`kubectl get pods -o yaml` is one document, a List: progress comes while it is read."""
    items = "".join(f"- name: pod-{i}\n  labels: {{app: web}}\n" for i in range(20_000))
    text = f"kind: List\nitems:\n{items}"
    told: list[tuple[int, int]] = []
    (doc,) = yaml_documents(text, lambda chars, documents: told.append((chars, documents)))
    assert len(doc["items"]) == 20_000
    assert len(told) >= 5, told
    assert [documents for _, documents in told] == [0] * len(told)
    assert [chars for chars, _ in told] == sorted(chars for chars, _ in told)
    assert 0 < told[0][0] < told[-1][0] < len(text)


def test_repeated_scalars_read_from_events_are_one_object() -> None:
    text = "---\nmetadata: {namespace: shop-x, labels: {app: web}}\n" * 3
    docs = list(event_documents(text))
    assert docs == list(yaml.load_all(text, Loader=SAFE))
    assert docs[0]["metadata"]["namespace"] is docs[2]["metadata"]["namespace"]


def outcome(read: Callable[[str], Iterable[object]], text: str) -> str:
    """The documents read one by one (repr: nan is not equal to itself), then any error."""
    documents: list[object] = []
    try:
        for document in read(text):
            documents.append(document)
    except (yaml.YAMLError, ValueError) as exc:
        return f"{documents!r}, then {type(exc).__name__}: {exc}"
    return repr(documents)


def subset(text: str) -> bool:
    lines = f"\n{text}"
    return in_subset(lines, 0, len(lines))


def test_dumped_and_kubectl_shaped_manifests_are_of_the_subset() -> None:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    manifests = generate_manifests(20, 200, 0)
    dumped = [yaml.dump(m, Dumper=dumper, sort_keys=False) for m in manifests]
    # A pod-template-hash like 62dxcb4668 holds no letter that only strings hold.
    assert sum(subset(text) for text in dumped) >= len(dumped) * 0.95
    kubectl = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  annotations: {}\n  labels:\n"
        "    app: web\n  name: web-1\n  uid: 9b1c7c62-1f0e-4a53-9d83-3b1b0c2a4f10\nspec:\n"
        "  containers:\n  - image: nginx:1.25\n    name: web\n    ports:\n"
        "    - containerPort: 80\n      protocol: TCP\n    resources:\n      limits:\n"
        '        cpu: "1"\n        memory: 512Mi\n    volumeMounts: []\n'
        '  nodeSelector:\n    disktype: ssd\nstatus:\n  phase: Pending\n  qosClass: ""\n'
    )
    assert subset(kubectl)
    text = "---\n".join([*dumped, kubectl])
    assert repr(list(yaml_documents(text))) == repr(list(yaml.load_all(text, Loader=SAFE)))


@pytest.mark.parametrize(
    "line",
    [
        *(f"a: {v}\n" for v in ["yes", "No", "ON", "off", "010", "0o17", "0x1f", "1_000", "1e3"]),
        *(
            f"a: {v}\n"
            for v in ["190:20:30", "2025-01-01", ".inf", ".NaN", "+1", "00.5", "=", "~x"]
        ),
        *(f"{k}: v\n" for k in ["yes", "<<", "010", "2002-12-14", "_1"]),
        "a: b #comment\n",
        "a: &x b\n",
        "a: *x\n",
        "a: !!str b\n",
        "a: |\n  b\n",
        "a: [b]\n",
        "a: {b: c}\n",
        "? a\n: b\n",
        "a: 'b\n  c'\n",
        'a: "b\\tc"\n',
        "a: b\n  c\n",
        "a: b\n  - c\n",
        "- a\n\n  - b\n",
        "a:\tb\n",
        "a: b\r\n",
        "a: \u00e9\n",
        "...\n",
        "%YAML 1.1\n",
        "--- a\n",
        "- \n",
    ],
)
def test_what_the_schemas_or_parsers_read_apart_is_left_to_the_event_reader(line: str) -> None:
    assert not subset(line)
    text = f"x: 1\n---\n{line}"
    assert outcome(yaml_documents, text) == outcome(lambda t: yaml.load_all(t, Loader=SAFE), text)


#: Scalars as written: the common ones of manifests, and those each schema or parser reads
#: its own way (plain, quoted, numbers, dates, indicators).
_COMMON = ["a", "web-0", "true", "False", "null", "~", "0", "7", "-3", "1.5", "100m", "128Mi"]
_COMMON += ["3a02ca41-2965-4991-bcc7-02eecc170a88", "nginx:1.25", "a b", "'q'", '"d"', "{}", "[]"]
_AWKWARD = [
    "yes",
    "no",
    "On",
    "010",
    "0x1f",
    "0o7",
    "1_0",
    "1e3",
    "-0.0",
    "00.5",
    ".inf",
    ".nan",
    "190:20:30",
    "2025-01-01",
    "2025-01-01T00:00:00Z",
    "1Ki",
    "62dxcb4668",
    "a  b",
    "it's",
    "12345678-1234-1234-1234-123456789012",
    "'it''s'",
    '""',
    "''",
    "<<",
    "=",
    "_1",
    "/p",
    "a#b",
    "a :b",
    "-",
    "- x",
    "x: y",
    "12345678901234567890123",
]
_SCALARS = st.sampled_from(_COMMON * 6 + _AWKWARD)
_LINES = st.tuples(
    st.integers(0, 6),
    st.integers(0, 2),
    _SCALARS,
    st.sampled_from(["", ":", ": ", ":  "]),
    st.one_of(st.just(""), _SCALARS),
    st.sampled_from(["", " "]),
).map(lambda p: " " * p[0] + "- " * p[1] + p[2] + (p[3] + p[4] if p[3] else "") + p[5])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_LINES, min_size=1, max_size=8), min_size=1, max_size=3))
def test_any_stream_of_such_lines_reads_as_pyyaml_reads_it(documents: list[list[str]]) -> None:
    """Random indentation, keys and scalars: most of it is not even YAML, the rest reads the
    same, or fails with the same error."""
    text = "---\n".join("\n".join(lines) + "\n" for lines in documents)
    assert outcome(yaml_documents, text) == outcome(lambda t: yaml.load_all(t, Loader=SAFE), text)


def _block(node: object, indent: int, step: int) -> list[str]:
    """`node` (scalars as written, dicts and lists of them) in block style at `indent`."""
    pad = " " * indent
    if isinstance(node, dict):
        lines = []
        for key, value in node.items():
            if isinstance(value, str):
                lines.append(f"{pad}{key}: {value}")
            else:
                lines.append(f"{pad}{key}:")
                inner = indent if isinstance(value, list) and step % 2 else indent + step
                lines.extend(_block(value, inner, step))
        return lines
    assert isinstance(node, list)
    lines = []
    for item in node:
        if isinstance(item, str):
            lines.append(f"{pad}- {item}")
        else:
            nested = _block(item, indent + 2, step) or [f"{pad}  {{}}"]
            lines.append(f"{pad}- {nested[0].lstrip()}")
            lines.extend(nested[1:])
    return lines


_NODES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(_SCALARS, inner, min_size=1, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.dictionaries(_SCALARS, _NODES, min_size=1, max_size=4), st.integers(1, 4)),
        min_size=1,
        max_size=3,
    )
)
def test_nested_block_documents_read_as_pyyaml_reads_them(
    documents: list[tuple[dict[str, object], int]],
) -> None:
    """Mappings and lists nested in block style, indented by one to four spaces, lists under
    a key indented or not: what dumpers and kubectl write, with every awkward scalar."""
    text = "---\n".join("\n".join(_block(doc, 0, step)) + "\n" for doc, step in documents)
    assert outcome(yaml_documents, text) == outcome(lambda t: yaml.load_all(t, Loader=SAFE), text)
