"""`eventsched.audit` imports its exports on first use (`eventsched._lazy`), and `replay`
stays the function whether its module `eventsched.audit.replay` is imported first or not."""

from __future__ import annotations

import subprocess
import sys

import pytest

FIRST = {
    "the module": "import eventsched.audit.replay\n",
    "the name": "from eventsched.audit import replay\n",
    "another name": "from eventsched.audit import Selection\n",
}


@pytest.mark.parametrize("first", list(FIRST))
def test_replay_is_the_function_whatever_is_imported_first(first: str) -> None:
    code = (
        "import sys, types\n" + FIRST[first] + "import eventsched.audit\n"
        "from eventsched.audit import replay\n"
        "from eventsched.audit.replay import Selection, replay as defined\n"
        "assert replay is defined and eventsched.audit.replay is defined, replay\n"
        "assert isinstance(sys.modules['eventsched.audit.replay'], types.ModuleType)\n"
        "assert eventsched.audit.Selection is Selection\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_importing_one_part_imports_neither_explain_nor_replay() -> None:
    code = (
        "import sys\n"
        "import eventsched.audit.query, eventsched.audit.views\n"
        "print(sorted(m for m in ('eventsched.audit.explain', 'eventsched.audit.replay') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import eventsched.audit

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        eventsched.audit.nothing  # noqa: B018
