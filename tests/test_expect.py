"""``simulate --expect FILE`` (``expect:`` clauses) and ``--junit FILE``: verdicts, exit code 4, valid JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.test_cli import DEMO, run

PASSING = """\
expect:
- maxPending: 3
- name: checkout lands in eu-west-1a
  pods: shop/checkout-1
  landOn: {matchLabels: {topology.kubernetes.io/zone: eu-west-1a}}
- pods: {namespace: shop, selector: {matchLabels: {app: web}}}
  landOn: {matchExpressions: [{key: topology.kubernetes.io/region, operator: In, values: [eu-west-1]}]}
"""

FAILING = """\
expect:
- allScheduled: true
- noPreemption: true
- maxPending: 2
- pods: {namespace: shop, selector: {matchLabels: {app: web}}}
  landOn: {matchLabels: {topology.kubernetes.io/zone: eu-west-1a}}
- pods: shop/nosuch
  landOn: {}
"""


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "expect.yaml"
    path.write_text(text)
    return str(path)


def _junit(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert suite.get("tests") == str(len(cases)) == root.get("tests")
    assert suite.get("failures") == str(sum(1 for c in cases if c.find("failure") is not None))
    assert all(c.get("classname") and c.get("name") for c in cases)
    return suite


def test_passing_expectations(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result = run("simulate", DEMO, "-q", "--expect", _write(tmp_path, PASSING), "--junit", str(junit))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "expect: PASS at most 3 pending: 3 pods pending, at most 3 expected",
        "expect: PASS checkout lands in eu-west-1a: 1 pod on nodes matching topology.kubernetes.io/zone=eu-west-1a",
        "expect: PASS pods shop app=web land on topology.kubernetes.io/region In (eu-west-1): "
        "2 pods on nodes matching topology.kubernetes.io/region In (eu-west-1)",
    ]
    suite = _junit(junit)
    assert [c.get("name") for c in suite.findall("testcase")][:2] == ["at most 3 pending",
                                                                      "checkout lands in eu-west-1a"]


def test_failing_expectations_exit_4_and_say_why(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result = run("simulate", DEMO, "-q", "--expect", _write(tmp_path, FAILING), "--junit", str(junit))
    assert result.exit_code == 4
    said = result.stderr
    assert "expect: FAIL all pods scheduled: 3 of 7 pods end without a node" in said
    assert "expect: FAIL no preemption: 1 pod preempted" in said and "shop/checkout-1 preempted shop/report-1" in said
    assert "expect: FAIL at most 2 pending: 3 pods pending, at most 2 expected" in said
    assert "shop/web-2: on node-2, which does not match" in said
    assert "expect: FAIL pods shop/nosuch land on any node: no pod in the input matches" in said
    suite = _junit(junit)
    failures = {c.get("name"): c.find("failure") for c in suite.findall("testcase")}
    assert all(f is not None for f in failures.values()) and len(failures) == 5
    assert failures["no preemption"].get("type") == "noPreemption"
    assert "shop/checkout-1 preempted shop/report-1" in failures["no preemption"].text


def test_workload_expectation(tmp_path: Path) -> None:
    snapshot = tmp_path / "deploy.yaml"
    snapshot.write_text(Path(DEMO).read_text() + """
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-abc
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: u1}]
spec:
  selector: {matchLabels: {app: web}}
""")
    text = Path(snapshot).read_text().replace(
        "  labels:\n    app: web\n", "  labels:\n    app: web\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, "
        "name: web-abc, uid: u2, controller: true}]\n")  # its pods: the ReplicaSet creates none
    snapshot.write_text(text)
    expect = _write(tmp_path, "expect:\n- workload: Deployment/shop/web\n  landOn: {matchLabels: "
                              "{topology.kubernetes.io/region: eu-west-1}}\n")
    result = run("simulate", str(snapshot), "-q", "--expect", expect)
    assert result.exit_code == 0, result.output
    assert "expect: PASS Deployment/shop/web land on topology.kubernetes.io/region=eu-west-1: 2 pods" in result.stderr


@pytest.mark.parametrize(("text", "said"), [
    ("expect: []\n", "expect: expected a non-empty list of expectations"),
    ("expect:\n- maxPending: -1\n", "maxPending: expected a whole number, 0 or more"),
    ("expect:\n- allScheduled: true\n  noPreemption: true\n", "expected exactly one of"),
    ("expect:\n- pods: web\n  landOn: {}\n", "expected NAMESPACE/NAME or {namespace, selector}"),
    ("expect:\n- pods: shop/web-1\n", "pods needs landOn: a node label selector"),
    ("expect:\n- allScheduled: true\n  colour: red\n", "unknown field 'colour'"),
    ("expect: [\n", "invalid YAML"),
], ids=["empty", "negative", "two-clauses", "bad-pod", "no-landOn", "unknown-field", "yaml"])
def test_bad_expectations_are_input_errors(tmp_path: Path, text: str, said: str) -> None:
    result = run("simulate", DEMO, "--expect", _write(tmp_path, text))
    assert result.exit_code == 2
    assert said in result.stderr and "Traceback" not in result.output


def test_junit_needs_expect(tmp_path: Path) -> None:
    result = run("simulate", DEMO, "--junit", str(tmp_path / "j.xml"))
    assert result.exit_code == 2 and "--junit writes the verdicts of expect: clauses" in result.stderr


def test_scenario_files_carry_expect_steps(tmp_path: Path) -> None:
    """A --scenario file's `expect:` step is checked like --expect FILE's clauses, after them."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("- expect:\n  - maxPending: 3\n  - noPreemption: true\n")
    junit = tmp_path / "junit.xml"
    result = run("simulate", DEMO, "-q", "--expect", _write(tmp_path, "expect:\n- maxPending: 2\n"),
                 "--scenario", str(scenario), "--junit", str(junit))
    assert result.exit_code == 4
    said = [line for line in result.stderr.splitlines() if line.startswith("expect:")]
    assert said[:2] == ["expect: FAIL at most 2 pending: 3 pods pending, at most 2 expected",
                        "expect: PASS at most 3 pending: 3 pods pending, at most 3 expected"]
    assert said[2].startswith("expect: FAIL no preemption: 1 pod preempted")
    assert [c.get("name") for c in _junit(junit).findall("testcase")] == [
        "at most 2 pending", "at most 3 pending", "no preemption"]


def test_bad_expect_step_names_the_scenario_step(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("- expect:\n  - maxPending: many\n")
    result = run("simulate", DEMO, "--scenario", str(scenario))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "step 1" in result.stderr and "maxPending" in result.stderr
