"""``kafka-java:NAME@VERSION`` without building anything: names, versions, and a failed Maven build.

The real builds run in tests/test_peers_native.py (the locked version) and
tests/test_releases_vs_jars.py (each release record's jar, 2.2.2 among them: the ``v20`` sources).
"""

from __future__ import annotations

import os
import stat

import pytest

from stickyproof.errors import UnknownAssignor
from stickyproof.peers import builds, kafka_java


@pytest.mark.parametrize("version,api", [
    ("0.11.0.3", "v20"), ("1.1.1", "v20"), ("2.0.1", "v20"), ("2.3.1", "v20"), ("2.3", "v20"),
    ("2.4.0", "v24"), ("2.4.1", "v24"), ("3.9.1", "v24"), ("4.4.0", "v24"), ("10.0.0", "v24"), ("trunk", "v24"),
])
def test_the_assignor_interface_changed_in_2_4(version, api):
    assert kafka_java.api_of(version) == api


def test_an_adapter_without_an_assignor_name_is_refused_before_any_build(tmp_path, monkeypatch):
    monkeypatch.setenv("STICKYPROOF_CACHE_DIR", str(tmp_path))
    with pytest.raises(UnknownAssignor, match=r"kafka-java:@3.9.1: name an assignor"):
        kafka_java.resolve("@3.9.1")
    assert not (tmp_path / "peers").exists()


def test_a_failed_maven_build_is_one_line_naming_client_version_tool_and_maven_s_first_error(tmp_path, monkeypatch):
    """A stand-in ``mvn`` prints what Maven prints when a version does not exist; the failure names
    the client, the version, the tool and Maven's first error (not its advice lines), and leaves no
    harness in the cache."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(
        "#!/bin/sh\n"
        "printf '\\033[0m[ERROR] Failed to execute goal on project kafka-java-peer: Could not resolve dependencies"
        " for project stickyproof:kafka-java-peer:jar:1: org.apache.kafka:kafka-clients:jar:0.0.7 was not found."
        " More text -> [Help 1]\\n[ERROR] \\n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\\n'\n"
        "exit 1\n"
    )
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STICKYPROOF_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(builds.PeerBuildFailed) as caught:
        kafka_java.resolve("sticky@0.0.7")
    message = str(caught.value)
    assert "\n" not in message, message
    assert message.startswith("kafka-java@0.0.7: build failed (maven): Failed to execute goal"), message
    assert "kafka-clients:jar:0.0.7 was not found" in message and "Help 1" not in message, message
    home = tmp_path / "cache" / "peers" / "kafka-java"
    assert not [p for p in home.iterdir() if p.is_dir()], list(home.iterdir())  # nothing half-built is kept
