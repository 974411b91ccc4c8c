"""The storage questions use cases ask by intent, on real repositories: the commit graph
(graph.py), what refs and ids hold (objects.py), multi-valued config keys (multivar.py), finding
the repository (discovery.py), and a job's git side (jobs/storage/records.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Repo

from gitstate.errors import BrokenRef, NotARepository
from gitstate.jobs.storage import records
from gitstate.storage import discovery, graph, multivar, objects
from gitstate.storage.layout import discover
from gitstate.storage.snapshots import Store


def _store(repo: Repo) -> Store:
    layout = discover(repo.path)
    assert layout is not None
    return Store(layout)


def _fork(repo: Repo) -> tuple[str, str, str]:
    """(base, main's tip, side's tip): two branches that diverged after `base`."""
    base = repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("side.txt", "side\n", "side")
    repo.git("checkout", "-q", "main")
    main = repo.commit("main.txt", "main\n", "main")
    return base, main, side


class TestGraph:
    def test_merge_base_of_two_diverged_lines(self, repo: Repo) -> None:
        base, main, side = _fork(repo)
        store = _store(repo)
        assert graph.merge_base(store, main, side) == base
        assert graph.merge_base(store, main, base) == base

    def test_no_merge_base_for_unrelated_histories(self, repo: Repo) -> None:
        main = repo.git("rev-parse", "HEAD").strip()
        repo.git("checkout", "-q", "--orphan", "other")
        other = repo.commit("other.txt", "other\n", "unrelated")
        assert graph.merge_base(_store(repo), main, other) is None

    def test_is_descendant_is_strict_and_directed(self, repo: Repo) -> None:
        base, main, side = _fork(repo)
        store = _store(repo)
        assert graph.is_descendant(store, main, base)
        assert not graph.is_descendant(store, base, main)
        assert not graph.is_descendant(store, main, side)
        assert not graph.is_descendant(store, main, main)

    def test_commit_time_is_the_committer_time(
        self, repo: Repo, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("GIT_COMMITTER_DATE", "@1767225600 +0200")
        commit = repo.commit("dated.txt", "x\n", "dated")
        repo.git("tag", "-a", "-m", "a tag", "v1", commit)
        store = _store(repo)
        assert graph.commit_time(store, commit) == 1767225600
        tag = repo.git("rev-parse", "v1").strip()
        assert graph.commit_time(store, tag) == 1767225600  # a tag is peeled

    def test_has_object(self, repo: Repo) -> None:
        store = _store(repo)
        head = repo.git("rev-parse", "HEAD").strip()
        assert graph.has_object(store, head)
        assert not graph.has_object(store, "0" * 40)
        assert not graph.has_object(store, "not an id")


class TestObjects:
    def test_ref_names_by_prefix(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("update-ref", "refs/agy/archive/one", head)
        repo.git("update-ref", "refs/agy/state", head)
        store = _store(repo)
        assert objects.ref_names(store, ("refs/agy/archive/",)) == ["refs/agy/archive/one"]
        both = objects.ref_names(store, ("refs/agy/", "refs/heads/"))
        assert sorted(both) == ["refs/agy/archive/one", "refs/agy/state", "refs/heads/main"]

    def test_ref_exists(self, repo: Repo) -> None:
        store = _store(repo)
        assert objects.ref_exists(store, "refs/heads/main")
        assert not objects.ref_exists(store, "refs/agy/none")

    def test_ref_target_direct_symbolic_and_absent(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("symbolic-ref", "refs/tags/checkpoint-sym", "refs/heads/main")
        store = _store(repo)
        assert objects.ref_target(store, "refs/heads/main") == objects.RefTarget(head, False)
        assert objects.ref_target(store, "refs/tags/checkpoint-sym") == objects.RefTarget(
            "refs/heads/main", True
        )
        assert objects.ref_target(store, "refs/tags/none") is None

    def test_ref_target_of_an_unreadable_ref_is_a_broken_ref(self, repo: Repo) -> None:
        path = repo.path / ".git" / "refs" / "tags" / "checkpoint-bad"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("garbage\n")
        with pytest.raises(BrokenRef):
            objects.ref_target(_store(repo), "refs/tags/checkpoint-bad")

    def test_describe_peels_to_the_commit(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("tag", "-a", "-m", "a tag", "v1")
        tag = repo.git("rev-parse", "v1").strip()
        tree = repo.git("rev-parse", "HEAD^{tree}").strip()
        blob = repo.git("rev-parse", "HEAD:README").strip()
        store = _store(repo)
        assert objects.describe(store, head) == objects.ObjectInfo(head, "commit", head)
        assert objects.describe(store, tag) == objects.ObjectInfo(tag, "tag", head)
        assert objects.describe(store, tree) == objects.ObjectInfo(tree, "tree", None)
        assert objects.describe(store, blob) == objects.ObjectInfo(blob, "blob", None)
        assert objects.describe(store, "0" * 40) is None

    def test_a_tag_of_a_blob_peels_to_no_commit(self, repo: Repo) -> None:
        blob = repo.git("rev-parse", "HEAD:README").strip()
        repo.git("tag", "-a", "-m", "blob tag", "vb", blob)
        tag = repo.git("rev-parse", "vb").strip()
        assert objects.describe(_store(repo), tag) == objects.ObjectInfo(tag, "tag", None)

    def test_empty_tree_is_gits(self, repo: Repo) -> None:
        empty = objects.empty_tree(_store(repo))
        assert empty == repo.git("hash-object", "-t", "tree", "/dev/null").strip()
        assert repo.git("cat-file", "-t", empty).strip() == "tree"

    def test_library_version(self) -> None:
        assert objects.library_version().count(".") == 2


class TestMultivar:
    def test_add_appends_once_and_keeps_other_values(self, repo: Repo) -> None:
        repo.git("config", "--add", "notes.rewriteRef", "refs/notes/commits")
        store = _store(repo)
        assert multivar.add(store, "notes.rewriteRef", "refs/notes/agy/decisions")
        assert not multivar.add(store, "notes.rewriteRef", "refs/notes/agy/decisions")
        got = repo.git("config", "--get-all", "notes.rewriteRef").split()
        assert got == ["refs/notes/commits", "refs/notes/agy/decisions"]
        assert multivar.values(store, "notes.rewriteRef") == got

    def test_a_value_from_the_global_config_counts(self, repo: Repo) -> None:
        home = Path.home()
        (home / ".gitconfig").write_text('[notes]\n\trewriteRef = "refs/notes/agy/decisions"\n')
        store = _store(repo)
        assert not multivar.add(store, "notes.rewriteRef", "refs/notes/agy/decisions")
        assert repo.git("config", "--local", "--get-all", "notes.rewriteRef", check=False) == ""

    def test_unset_key(self, repo: Repo) -> None:
        assert multivar.values(_store(repo), "remote.none.fetch") == []


class TestDiscovery:
    def test_a_work_tree_is_found_without_opening_it(self, repo: Repo) -> None:
        (repo.path / "sub").mkdir()
        layout, store = discovery.find(repo.path / "sub")
        assert layout.workdir == repo.path.resolve()
        assert store is None  # opened on first use

    def test_inside_the_git_dir_the_opened_repository_comes_back(self, repo: Repo) -> None:
        layout, store = discovery.find(repo.path / ".git" / "refs")
        assert layout.gitdir == (repo.path / ".git").resolve()
        assert layout.workdir == repo.path.resolve()
        assert store is not None and store.layout == layout

    def test_a_bare_repository(self, repo: Repo, tmp_path: Path) -> None:
        bare = tmp_path / "bare.git"
        repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
        layout, store = discovery.find(bare)
        assert layout.workdir is None and layout.gitdir == bare.resolve()
        assert store is not None and store.tip("refs/heads/main") is not None

    def test_outside_any_repository(self, tmp_path: Path) -> None:
        with pytest.raises(NotARepository, match="or any of the parent directories"):
            discovery.find(tmp_path)

    def test_a_git_file_naming_nothing(self, tmp_path: Path) -> None:
        (tmp_path / ".git").write_text(f"gitdir: {tmp_path / 'gone'}\n")
        with pytest.raises(NotARepository, match=r"not a git repository: .*gone") as raised:
            discovery.find(tmp_path)
        assert "names a git dir that does not exist" in (raised.value.hint or "")


class TestJobRecords:
    def test_tracked_changes_leave_untracked_files_aside(self, repo: Repo) -> None:
        assert records.tracked_changes(repo.path) == []
        (repo.path / "README").write_text("changed\n")
        (repo.path / "new.txt").write_text("untracked\n")
        assert records.tracked_changes(repo.path) == ["README"]

    def test_tracked_changes_of_no_repository(self, tmp_path: Path) -> None:
        assert records.tracked_changes(tmp_path / "none") == []

    def test_worktree_head(self, repo: Repo, tmp_path: Path) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        assert records.worktree_head(str(repo.path)) == head
        assert records.worktree_head(str(tmp_path / "none")) is None
        assert records.worktree_head(None) is None

    def test_delete_chain(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("update-ref", "refs/agy/wt/job1/state", head)
        store = _store(repo)
        assert records.delete_chain(store, "job1")
        assert repo.ref("refs/agy/wt/job1/state") is None
        assert not records.delete_chain(store, "job1")
