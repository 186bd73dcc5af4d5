"""Documents built from the parser's events are the ones PyYAML's safe loader builds:
YAML 1.1 scalars, and the rare anchors, tags and merge keys left to PyYAML itself."""

from __future__ import annotations

import datetime

import pytest
import yaml

from eventsched.cluster.yamlstream import yaml_documents

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


def test_repeated_scalars_are_one_object() -> None:
    text = "---\nmetadata: {namespace: shop-x, labels: {app: web}}\n" * 3
    docs = same_as_pyyaml(text)
    assert isinstance(docs[0], dict) and isinstance(docs[2], dict)
    assert docs[0]["metadata"]["namespace"] is docs[2]["metadata"]["namespace"]
