"""The supervisor: one detached process per job round (`python -m gitstate.jobs.usecases.supervise`).

It leads its own session, and holds the job's supervisor lock (inherited from `run`/`feedback`)
until it exits. It waits for a queue slot, runs the agent's attempts (timeout + grace, retries,
the round-2 schema rule), then settles the round in a fixed order: result.json, the record
commit on refs/agy/jobs/<id>, and only then the terminal state in meta.json — each step only
while the job is still this round's running job, so a cancel is never overwritten.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.document.language import counted
from gitstate.errors import EXIT_OK, EXIT_TERMINATED, AgyError
from gitstate.jobs.document import config as config_mod
from gitstate.jobs.document import plan
from gitstate.jobs.document.config import JobConfig
from gitstate.jobs.storage import doorbell, record_commit, supervisor_git
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.storage.files import JobFiles
from gitstate.jobs.usecases import lifecycle, queue, runner
from gitstate.jobs.usecases.agents import Agent, Call, configured
from gitstate.jobs.usecases.lifecycle import Meta
from gitstate.jobs.usecases.runner import Attempt
from gitstate.storage.layout import Layout

SCHEMA_NOTE = "schema dropped on round>=2"
SUMMARY_CHARS = 500


class Terminated(BaseException):
    """SIGTERM/SIGHUP/SIGINT: leave at once, taking the agent along (see runner)."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated(signum)


class Handed(NamedTuple):
    """What a forking submitter hands its supervisor besides the settings (Preset): the job
    config it loaded from them and the round's prompt it wrote a moment before — both in this
    process's memory already, so the fork neither loads nor reads them again."""

    config: JobConfig
    prompt: str


class Supervisor:
    def __init__(
        self,
        layout: Layout,
        job_id: str,
        round_no: int,
        preset: supervisor_git.Preset | None = None,
        slot_likely: bool = False,
        handed: Handed | None = None,
    ) -> None:
        self.layout = layout
        self.job: JobFiles = jobfiles.files(layout, job_id)
        self.round = round_no
        self.settings: JobConfig | None = None  # as read at the start; _limit reads it again
        # The start's one read, for the settings and the record: the submitter's when it forked
        # this process (supervisor_git.Preset), else one `git config` process.
        self.git_settings: dict[str, str] | None = preset.values if preset else None
        self.rang = False  # the round settled and rang: nothing is left to announce at exit
        self.limit: int | None = None  # maxConcurrent as last read, with the config files'
        # sizes and times taken just before that read (None: not taken yet)
        self.limit_stamp: supervisor_git.Stamp | None = preset.stamp if preset else None
        # The first attempt's agent, started in the locked pass that claims the slot (or why
        # it could not start); _run_round takes it over.
        self.first: subprocess.Popen[bytes] | OSError | None = None
        self.slot_likely = slot_likely  # the submitter saw a slot free: no doorbell at first
        self.handed = handed  # what a forking submitter built from `preset` and wrote

    def run(self) -> None:
        meta = jobfiles.read_json(self.job.meta)
        if not isinstance(meta, dict) or meta.get("state") != "queued":
            return
        if meta.get("round") != self.round:
            return
        if self.limit_stamp is None:  # before the read: a change after it is seen by _limit
            self.limit_stamp = supervisor_git.config_stamp(self.layout)
        try:
            config = self.settings = self._config()
        except AgyError as exc:
            self._fail_queued(f"bad configuration: {exc.message}")
            return
        jobfiles.append_event(self.job.events, {"type": "round", "n": self.round})

        def announce(standing: queue.Standing) -> None:
            jobfiles.append_event(
                self.job.events,
                {"type": "queued", "running": standing.running, "queued_ahead": standing.ahead},
            )

        prompt = self.handed.prompt if self.handed else None
        if prompt is None:
            prompt = self.job.prompt.read_text(encoding="utf-8")
        agent = configured(config)

        def start_first(claimed: Meta) -> None:
            """In the pass that claims the slot, under the queue lock: the first attempt's
            agent starts, and its pid goes into the claim's own write (a cancel sees both
            or neither) — one meta write and one lock pass fewer than _start's."""
            argv = agent.argv(self._call(claimed, config, prompt, use_schema=True))
            try:
                proc = self._popen(argv, Path(claimed["worktree"]))
            except OSError as exc:
                self.first = exc
                return
            self.first = proc
            claimed.update(pid_agent=proc.pid, agent_started_at=lifecycle.utc_now(), attempts=1)

        try:
            claimed = queue.wait_for_slot(
                self.layout,
                self.job.id,
                self.round,
                self._limit,
                config.queue_timeout,
                announce,
                on_claim=start_first,
                slot_likely=self.slot_likely,
            )
        except BaseException:
            self._drop_first()
            raise
        if claimed is None:
            return
        try:
            self._run_round(claimed, config, agent, prompt)
        finally:
            self._drop_first()

    def _drop_first(self) -> None:
        """End the agent started with the claim if no attempt took it over (the supervisor is
        leaving on an error or a signal): no agent outlives its supervisor unwatched."""
        first, self.first = self.first, None
        if isinstance(first, subprocess.Popen):
            lifecycle.end_group(first.pid, grace=0.0)
            first.wait()

    def _config(self) -> JobConfig:
        """The start's settings: read once, for the settings and the record (or handed over)."""
        if self.handed is not None and self.git_settings is not None:
            return self.handed.config  # loaded from these very settings by the submitter
        if self.git_settings is None:
            self.git_settings = supervisor_git.settings(self.layout)
        return config_mod.load(supervisor_git.config_reader(self.layout, self.git_settings))

    def _limit(self) -> int:
        """maxConcurrent for a count: read again (a user may change it) only when a config
        file changed since the last read — a `git config` process for every wake-up would
        be most of what waiting costs."""
        seen = supervisor_git.config_stamp(self.layout)
        if self.limit is not None and seen == self.limit_stamp:
            return self.limit
        try:
            if self.settings is not None and seen == self.limit_stamp:
                config = self.settings  # the start's read is still current
            else:
                config = config_mod.load(supervisor_git.config_reader(self.layout))
            self.limit = config.max_concurrent
        except AgyError:
            self.limit = 1
        self.settings, self.limit_stamp = None, seen
        return self.limit

    def _fail_queued(self, error: str) -> None:
        def change(meta: Meta) -> Meta | None:
            if meta.get("state") != "queued" or meta.get("round") != self.round:
                return None
            meta.update(state="error", error=error, finished_at=lifecycle.utc_now())
            return meta

        lifecycle.update(self.layout, self.job.id, change, ring=True)

    # ---- the round ------------------------------------------------------------------------

    def _call(self, meta: Meta, config: JobConfig, prompt: str, use_schema: bool) -> Call:
        return Call(
            prompt,
            meta.get("model"),
            meta.get("effort"),
            meta.get("timeout") or config.timeout,
            self.job.schema if use_schema else None,
            meta.get("conversation_id") if self.round >= 2 else None,
        )

    def _run_round(self, meta: Meta, config: JobConfig, agent: Agent, prompt: str) -> None:
        timeout = config_mod.parse_duration(meta.get("timeout") or config.timeout, "timeout")
        deadline = time.monotonic() + timeout * (config.max_retries + 1) + config.grace
        use_schema, note = True, None
        attempts = retries = 0
        last: Attempt | None = None
        while time.monotonic() < deadline:
            attempts += 1
            call = self._call(meta, config, prompt, use_schema)
            limit = min(timeout + config.grace, deadline - time.monotonic())
            argv, number = agent.argv(call), attempts

            def start(argv: list[str] = argv, n: int = number) -> subprocess.Popen[bytes] | None:
                first, self.first = self.first, None
                if isinstance(first, OSError):
                    raise first
                if first is not None:
                    return first  # started with the claim
                return self._start(argv, Path(meta["worktree"]), n)

            attempt = runner.run_attempt(start, self.job.events, limit)
            if attempt is None or not self._still_running():
                return  # cancelled: cancel wrote the state itself
            last = attempt
            if attempt.start_error:
                break
            if self.round >= 2 and use_schema and _schema_failed(attempt):
                use_schema, note = False, SCHEMA_NOTE
                continue
            failed = attempt.timed_out or (attempt.outcome is None and attempt.exit_code != 0)
            if failed and retries < config.max_retries:
                retries += 1
                continue
            break
        self._settle(meta, agent, last, attempts, note, timeout)

    def _start(self, argv: list[str], cwd: Path, attempt: int) -> subprocess.Popen[bytes] | None:
        """Spawn the agent under the queue lock, only while the job is still running, and
        record its pid there too: a cancel either sees this pid or stops this spawn."""
        with jobfiles.queue_locked(self.layout):
            meta = lifecycle.read(self.layout, self.job.id)
            if meta.get("state") != "running" or meta.get("round") != self.round:
                return None
            proc = self._popen(argv, cwd)
            meta.update(pid_agent=proc.pid, agent_started_at=lifecycle.utc_now(), attempts=attempt)
            lifecycle.write(self.layout, meta)
        return proc

    def _popen(self, argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
        """The agent in its own session (its pid is its group's id), stdout piped to us."""
        with open(self.job.stderr, "ab") as stderr:
            return subprocess.Popen(
                argv,
                cwd=str(cwd),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                env={**os.environ, lifecycle.JOB_ENV: self.job.id},
            )

    def _still_running(self) -> bool:
        meta = jobfiles.read_json(self.job.meta)
        return (
            isinstance(meta, dict)
            and meta.get("state") == "running"
            and meta.get("round") == self.round
        )

    def _settle(
        self,
        meta: Meta,
        agent: Agent,
        last: Attempt | None,
        attempts: int,
        note: str | None,
        timeout: float,
    ) -> None:
        state, error = _verdict(agent, last, attempts, meta.get("timeout") or f"{int(timeout)}s")
        outcome = last.outcome if last else None
        tip = self._tip(meta)
        names, stat = _changes(self.layout, meta["base_sha"], tip)
        structured = outcome.structured_output if outcome else None
        problems = plan.contract_problems(structured)
        response = outcome.response if outcome else ""
        summary = structured.get("summary") if isinstance(structured, dict) else None
        if not isinstance(summary, str):
            summary = response[:SUMMARY_CHARS]
        conversation = (last.conversation_id if last else None) or meta.get("conversation_id")
        result: dict[str, Any] = {
            "job_id": self.job.id,
            "state": state,
            "agy_status": (outcome.status if outcome else None) or "UNKNOWN",
            "round": self.round,
            "summary": summary,
            "structured_output": structured,
            "contract_ok": not problems and note is None,
            "contract_note": note or ("; ".join(problems) if problems else None),
            "response_text": response,
            "files_changed_git": names,
            "diff_stat": stat,
            "usage": outcome.usage if outcome else None,
            "conversation_id": conversation,
            "duration_seconds": outcome.duration_seconds if outcome else None,
            "num_turns": outcome.num_turns if outcome else None,
            "attempts": attempts,
            "exit_code": last.exit_code if last else None,
            "error": error,
            "worktree": meta["worktree"],
            "branch": meta.get("branch"),
            "base_sha": meta["base_sha"],
            "tip_sha": tip,
            "uncommitted_files": supervisor_git.uncommitted(Path(meta["worktree"])),
        }
        if state == "done" and outcome and (outcome.status or "SUCCESS") != "SUCCESS":
            result["false_error"] = "artifact_path"
        if not self._still_running():
            return
        text = _dump(result)
        contents, hits = record_commit.record_contents(self.job, text)
        if hits:
            result["record_redacted"] = hits
            text = _dump(result)
            contents, _ = record_commit.record_contents(self.job, text)
        jobfiles.write_bytes(self.job.result, text.encode())
        record_error = None
        try:
            subject = record_commit.subject_of(result)
            record_commit.commit(
                self.layout, self.job.id, self.round, state, contents, subject, self.git_settings
            )
        except Exception as exc:  # the runtime files still hold the round
            record_error = f"{type(exc).__name__}: {exc}"

        def finish(current: Meta) -> Meta | None:
            if current.get("state") != "running" or current.get("round") != self.round:
                return None
            current.update(
                state=state,
                finished_at=lifecycle.utc_now(),
                agy_status=result["agy_status"],
                exit_code=result["exit_code"],
                error=error,
                attempts=attempts,
                conversation_id=conversation,
            )
            if record_error:
                current["record_error"] = record_error
            return current

        if lifecycle.update(self.layout, self.job.id, finish, ring=True) is not None:
            self.rang = True

    def _tip(self, meta: Meta) -> str | None:
        if meta.get("branch"):
            return supervisor_git.branch_tip(self.layout, meta["branch"])
        from gitstate.jobs.storage import records  # --no-worktree: HEAD of the user's tree

        return records.worktree_head(meta.get("worktree"))


def _changes(layout: Layout, base: str, tip: str | None) -> tuple[list[str], str]:
    """What the round committed; pygit2 is loaded only when the branch moved (docs/jobs.md)."""
    if not tip or tip == base:
        return [], ""
    from gitstate.jobs.storage import records

    return records.changes(records.main_store(layout), base, tip)


def _schema_failed(attempt: Attempt) -> bool:
    """A round-2 call the schema may have broken: it failed and gave no usable answer."""
    if attempt.exit_code == 0 or attempt.timed_out:
        return False
    return attempt.outcome is None or attempt.outcome.status in ("ERROR", "INVALID")


def _verdict(
    agent: Agent, last: Attempt | None, attempts: int, timeout: str
) -> tuple[str, str | None]:
    if last is None:
        return "error", "the round's time budget ran out before the agent could start"
    if last.start_error:
        return "error", last.start_error
    if last.timed_out:
        return "error", f"timed out after {timeout} ({counted(attempts, 'attempt')})"
    outcome = last.outcome
    if outcome is None:
        return "error", f"no result event from the agent (exit code {last.exit_code})"
    status = outcome.status
    if agent.false_alarm(outcome):
        return "done", None  # the agent's known false alarm (its adapter says): the work is there
    if last.exit_code != 0:
        return "error", f"the agent exited with code {last.exit_code} (status {status})"
    if status not in (None, "SUCCESS"):
        return "error", f"the agent reported {status}"
    return "done", None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


class _Args(NamedTuple):
    repo: str  # the repository's common git dir
    job: str
    round: int
    lock_fd: int


def _parse(argv: list[str]) -> _Args:
    """launch.start's fixed command line (`--repo D --job ID --round N --lock-fd FD`), read
    without argparse: its import is a cost every job's start would pay."""
    given = dict(zip(argv[::2], argv[1::2], strict=False))
    try:
        return _Args(
            given["--repo"], given["--job"], int(given["--round"]), int(given["--lock-fd"])
        )
    except (KeyError, ValueError):
        raise SystemExit(
            "usage: python -m gitstate.jobs.usecases.supervise "
            "--repo COMMONDIR --job ID --round N --lock-fd FD"
        ) from None


def main(
    argv: list[str] | None = None,
    preset: supervisor_git.Preset | None = None,
    slot_likely: bool = False,
    handed: Handed | None = None,
) -> int:
    """The supervisor's process; `preset`: the settings a forking submitter read already;
    `slot_likely`: that submitter found a slot free (queue.wait_for_slot); `handed`: the
    config it loaded from `preset` and the prompt it wrote."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    os.set_inheritable(args.lock_fd, False)  # agents must not keep the supervisor "alive"
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _terminate)
    common = Path(args.repo).resolve()
    layout = Layout(None, common, common, None)
    supervisor: Supervisor | None = None
    try:
        supervisor = Supervisor(layout, args.job, args.round, preset, slot_likely, handed)
        supervisor.run()
    except Terminated:
        return EXIT_TERMINATED
    except Exception as exc:  # leave a trace in stderr.log; readers reconcile the state
        from gitstate import error_map  # only on failure: the map loads every error's words

        code, lines = error_map.text(exc)
        print("\n".join(f"supervisor: {line}" for line in lines), file=sys.stderr)
        return code
    finally:
        if supervisor is None or not supervisor.rang:
            doorbell.ring(layout)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
