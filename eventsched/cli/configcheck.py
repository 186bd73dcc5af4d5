"""`eventsched config check FILE`: validate a configuration and show what would run."""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from eventsched.cli.commands import summary
from eventsched.cli.versionflags import add_version_arguments, features_from_args
from eventsched.config.effective import effective_config
from eventsched.config.file import load_config
from eventsched.framework import Features
from eventsched.plugins import full_registry


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config",
        help=summary("config"),
        description="Work with KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) files.",
    )
    inner = p.add_subparsers(dest="config_command", required=True, metavar="SUBCOMMAND")
    check = inner.add_parser(
        "check",
        help="validate FILE and print the effective configuration (defaults merged)",
        description="Validate FILE as `eventsched run` would and print the effective "
        "configuration: defaults merged, each profile's plugins per extension point in the "
        "order they run, with score weights. An error names the field and the fix; exit 2.",
    )
    check.add_argument("file", metavar="FILE")
    check.add_argument("--json", action="store_true", help="print JSON instead of YAML")
    add_version_arguments(check, "the newest supported")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    config = load_config(args.file, full_registry(), features_from_args(args))
    for warning in config.warnings:
        print(f"eventsched: warning: {warning}", file=sys.stderr)
    effective = effective_config(config)
    notes = [_deciding_as(config.features), *config.notes]
    if args.json:
        for note in notes:
            print(f"eventsched: note: {note}", file=sys.stderr)
        print(json.dumps(effective, indent=2))
    else:
        for note in notes:  # comments: the output still loads as it is
            print(f"# {note}")
        print(yaml.safe_dump(effective, sort_keys=False), end="")
    return 0


def _deciding_as(features: Features) -> str:
    """The version and the values of the gates eventsched reads, as the log will keep them."""
    gates = ", ".join(f"{name}={str(on).lower()}" for name, on in sorted(features.gates().items()))
    return f"deciding as Kubernetes {features.version}; feature gates eventsched reads: {gates}"
