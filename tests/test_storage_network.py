"""What sync asks storage by intent, on real repositories and a real bare remote: the network
(storage/network.py: fetch, push, ls-remote) and the git command's questions (storage/gitcli.py:
refs with fields, reachability, disjoint histories, remote URLs, notes merge, name-status)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Repo

from gitstate.errors import Failure
from gitstate.storage import gitcli, network
from gitstate.storage.layout import Layout, discover


def _layout(repo: Repo) -> Layout:
    layout = discover(repo.path)
    assert layout is not None
    return layout


def _bare(repo: Repo, tmp_path: Path, name: str = "origin") -> Path:
    bare = tmp_path / f"{name}.git"
    repo.git("init", "-q", "--bare", str(bare))
    repo.git("remote", "add", name, str(bare))
    return bare


class TestNetwork:
    def test_push_then_ls_remote_then_fetch(self, repo: Repo, tmp_path: Path) -> None:
        bare = _bare(repo, tmp_path)
        layout = _layout(repo)
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("update-ref", "refs/agy/state", head)
        pushed = network.push(layout, "origin", ["refs/agy/state:refs/agy/users/me/state"])
        assert pushed.code == 0
        assert [(r.flag, r.dst) for r in pushed.refs] == [("*", "refs/agy/users/me/state")]
        assert network.ls_remote(layout, "origin")["refs/agy/users/me/state"] == head
        assert network.ls_remote(layout, str(bare))["refs/agy/users/me/state"] == head
        network.fetch(layout, "origin", ["+refs/agy/*:refs/agy-remotes/origin/*"])
        assert repo.ref("refs/agy-remotes/origin/users/me/state") == head

    def test_a_private_repository_fetches_with_its_files_kept_its_owner_s(
        self, repo: Repo, tmp_path: Path
    ) -> None:
        bare = _bare(repo, tmp_path)
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("push", "-q", "origin", f"{head}:refs/agy/memory")
        brain = tmp_path / "brain.git"
        repo.git("init", "-q", "--bare", str(brain))
        where = network.Private(brain)
        assert network.ls_remote(where, str(bare)) == {"refs/agy/memory": head}
        network.fetch(where, str(bare), ["+refs/agy/memory:refs/agy-remotes/x/memory"], prune=False)
        assert (brain / "refs/agy-remotes/x/memory").read_text().strip() == head
        written = [p for p in (brain / "objects").rglob("*") if p.is_file()]
        assert written and all(p.stat().st_mode & 0o077 == 0 for p in written)

    def test_a_rejected_push_is_a_result_not_an_error(self, repo: Repo, tmp_path: Path) -> None:
        _bare(repo, tmp_path)
        layout = _layout(repo)
        first = repo.git("rev-parse", "HEAD").strip()
        second = repo.commit("b.txt", "b\n", "second")
        assert network.push(layout, "origin", [f"{second}:refs/agy/x"]).code == 0
        refused = network.push(layout, "origin", [f"{first}:refs/agy/x"])
        assert refused.code != 0
        (ref,) = refused.refs
        assert ref.flag == "!" and ref.dst == "refs/agy/x"
        assert "non-fast-forward" in ref.summary
        assert "refs/agy/x" in refused.output

    def test_a_failure_never_shows_the_remote_s_user_info(self, repo: Repo) -> None:
        layout = _layout(repo)
        secret = "https://user:s3cret@127.0.0.1:9/nothing.git"
        with pytest.raises(Failure) as caught:
            network.fetch(layout, secret, ["+refs/agy/*:refs/agy-remotes/x/*"])
        assert caught.value.message.startswith("git fetch https://127.0.0.1:9/nothing.git failed:")
        assert "s3cret" not in caught.value.message
        pushed = network.push(layout, secret, ["HEAD:refs/agy/x"], prompt=False)
        assert pushed.code != 0
        with pytest.raises(Failure) as listed:
            network.ls_remote(layout, secret)
        assert listed.value.message.startswith("git ls-remote https://127.0.0.1:9/nothing.git")
        assert "s3cret" not in listed.value.message
        assert "s3cret" not in pushed.failure(secret).message

    def test_ls_remote_of_a_missing_remote_fails_in_git_s_words(
        self, repo: Repo, tmp_path: Path
    ) -> None:
        with pytest.raises(Failure) as caught:
            network.ls_remote(_layout(repo), str(tmp_path / "absent"))
        assert caught.value.message.startswith(f"git ls-remote {tmp_path / 'absent'} failed: ")

    def test_an_option_like_remote_is_a_path_not_an_option(
        self, repo: Repo, tmp_path: Path
    ) -> None:
        # `--` stands before it: git looks for a repository of that name and runs nothing.
        planted = tmp_path / "ran"
        with pytest.raises(Failure):
            network.ls_remote(_layout(repo), f"--upload-pack=touch {planted}")
        assert not planted.exists()


class TestGitQuestions:
    def test_ref_fields_in_order_with_peeled_and_trailer_atoms(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("tag", "-a", "checkpoint-1", "-m", "cp\n\nAgy-State: abc")
        repo.git("update-ref", "refs/agy/state", head)
        layout = _layout(repo)
        rows = gitcli.ref_fields(
            layout,
            ("refname", "objecttype", "*objectname", "contents:trailers:key=Agy-State,valueonly"),
            "refs/tags/checkpoint-*",
            "refs/agy/",
        )
        assert sorted(rows) == [
            ["refs/agy/state", "commit", "", ""],
            ["refs/tags/checkpoint-1", "tag", head, "abc"],
        ]
        assert gitcli.ref_fields(layout, ("refname",), "refs/nothing/") == []

    def test_reached_and_disjoint_histories(self, repo: Repo) -> None:
        layout = _layout(repo)
        first = repo.git("rev-parse", "HEAD").strip()
        second = repo.commit("b.txt", "b\n", "second")
        assert gitcli.reached(layout, {first, second}, [first]) == {first}
        assert gitcli.reached(layout, {first, second}, [second, "0" * 40]) == {first, second}
        assert gitcli.reached(layout, set(), [second]) == set()
        repo.git("checkout", "-q", "--orphan", "other")
        other = repo.commit("o.txt", "o\n", "unrelated")
        assert gitcli.histories_disjoint(layout, second, other)
        assert not gitcli.histories_disjoint(layout, second, first)

    def test_remote_urls_as_configured_and_rewritten(self, repo: Repo, tmp_path: Path) -> None:
        bare = _bare(repo, tmp_path)
        repo.git("config", "remote.origin.pushurl", "ssh://host/push.git")
        repo.git("config", "url.ssh://rewritten/.insteadOf", "ssh://host/")
        urls = gitcli.remote_urls(_layout(repo), "origin")
        assert {str(bare), "ssh://host/push.git", "ssh://rewritten/push.git"} <= urls
        assert gitcli.remote_urls(_layout(repo), "absent") == set()

    def test_notes_merge_keeps_every_line_once(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        ref = "refs/notes/agy/decisions"
        repo.git("notes", f"--ref={ref}", "add", "-m", "base", head)
        base = repo.ref(ref)
        repo.git("notes", f"--ref={ref}", "append", "-m", "ours", head)
        ours = repo.ref(ref)
        repo.git("update-ref", ref, str(base))
        repo.git("notes", f"--ref={ref}", "append", "-m", "theirs", head)
        repo.git("update-ref", "refs/notes/agy-remotes/o/decisions", str(repo.ref(ref)))
        repo.git("update-ref", ref, str(ours))
        layout = _layout(repo)
        identity = {"user.name": "x", "user.email": "x@example.com"}
        assert (
            gitcli.notes_merge(layout, ref, "refs/notes/agy-remotes/o/decisions", identity) is None
        )
        lines = repo.git("notes", f"--ref={ref}", "show", head).split()
        assert sorted(lines) == ["base", "ours", "theirs"]
        blob = repo.git("hash-object", "-w", "--stdin", input="x\n").strip()
        repo.git("update-ref", "refs/notes/agy-remotes/o/blob", blob)
        why = gitcli.notes_merge(layout, ref, "refs/notes/agy-remotes/o/blob", identity)
        assert why == f"object {blob} is a blob, not a commit"

    def test_name_status_with_renames_and_a_base_that_is_gone(self, repo: Repo) -> None:
        base = repo.git("rev-parse", "HEAD").strip()
        repo.git("mv", "README", "README.md")
        repo.git("commit", "-q", "-m", "rename")
        layout = _layout(repo)
        assert gitcli.name_status(layout, base).startswith("R100\tREADME\tREADME.md")
        with pytest.raises(Failure) as caught:
            gitcli.name_status(layout, "1" * 40)
        assert caught.value.message.startswith("git diff failed: ")
