"""Fault injection against the collector in real jobs (plain LD_PRELOAD, no launcher).

Every case runs TORCHSCOPE_FAULT_TRIALS times (default 2, so that CI stays short) and counts the
trials that broke a promise of docs/collector.md. With TORCHSCOPE_FAULT_RESULTS set, one JSON line
per case (trials, failures, what was lost) is appended to that file: docs/reliability.md quotes
those counts. A case fails when any of its trials failed.
"""
import json
import os
import random
import resource
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

COLLECTOR = os.environ["TORCHSCOPE_FAULT_COLLECTOR"]
TORCHSCOPE = os.environ["TORCHSCOPE_FAULT_CLI"]
PYTHON = os.environ.get("TORCHSCOPE_FAULT_PYTHON", sys.executable)
TRIALS = int(os.environ.get("TORCHSCOPE_FAULT_TRIALS", "2"))
RESULTS = os.environ.get("TORCHSCOPE_FAULT_RESULTS")
JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")
BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "collector", "python")
# The writer commits at least every 100 ms (store::WriterOptions::flush_interval); what is older
# than this at the moment of a SIGKILL must be in the store. The margin covers a loaded machine.
COMMITTED_AFTER_NS = 400_000_000
HANG_LIMIT_S = 240


def job_env(output, **extra):
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("TORCHSCOPE_") or name in ("LD_PRELOAD", "PYTHONPATH"):
            del env[name]
    env.update({"LD_PRELOAD": COLLECTOR, "TORCHSCOPE_OUTPUT": output, "TORCHSCOPE_GPU": "0"})
    env.update(extra)
    return env


def open_store(path):
    """The store opened read-only, after an integrity check: a torn file fails here."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (verdict,) = db.execute("PRAGMA integrity_check").fetchone()
    if verdict != "ok":
        raise AssertionError(f"{path}: integrity_check says {verdict}")
    return db


def run_row(db):
    return db.execute("SELECT exit_code, end_ns FROM run WHERE id = 1").fetchone()


def advise_partial(path):
    done = subprocess.run([TORCHSCOPE, "advise", path, "--format", "json"], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"advise exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)["runs"][0]["partial"]


def torchscope_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("torchscope:")]


class Tally:
    """Counts the trials of one case and what they lost."""

    def __init__(self, case):
        self.case = case
        self.trials = 0
        self.failures = []
        self.lost = {}

    def trial(self, check, *args):
        self.trials += 1
        try:
            check(*args)
        except Exception as error:  # noqa: BLE001 - every way a trial fails is counted
            self.failures.append(f"trial {self.trials}: {error}")

    def add_lost(self, key, amount):
        self.lost[key] = self.lost.get(key, 0) + amount

    def report(self, test):
        if RESULTS:
            with open(RESULTS, "a", encoding="utf-8") as out:
                out.write(json.dumps({"case": self.case, "trials": self.trials, "failures": len(self.failures),
                                      "lost": self.lost, "first_failures": self.failures[:3]}) + "\n")
        test.assertEqual(self.failures, [], f"{len(self.failures)} of {self.trials} trials failed")


class FaultTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="torchscope-fault-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def fresh(self, name):
        return tempfile.mkdtemp(prefix=name, dir=self.dir)

    def start_markers(self, store, *args, **popen):
        return subprocess.Popen([PYTHON, os.path.join(JOBS, "marker_loop.py"), *args], env=job_env(store),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)

    # -- kill -9 at a random point ------------------------------------------------------------------
    def test_sigkill_at_random_points(self):
        tally = Tally("sigkill")
        rng = random.Random(int(os.environ.get("TORCHSCOPE_FAULT_SEED", "15")))

        def trial(index):
            store = os.path.join(self.fresh(f"kill{index}"), "run.db")
            job = self.start_markers(store)
            # From right after exec (library loading, store creation) to well into the loop.
            time.sleep(rng.uniform(0.0, 1.5))
            job.send_signal(signal.SIGKILL)
            killed_ns = time.monotonic_ns()
            out, _ = job.communicate(timeout=HANG_LIMIT_S)
            markers = [int(line.split()[1]) for line in out.splitlines() if len(line.split()) == 2]
            if not os.path.exists(store):
                if len(markers) > 1:
                    raise AssertionError(f"no store although {len(markers)} markers were printed")
                tally.add_lost("killed_before_store_created", 1)
                return
            db = open_store(store)
            stored = db.execute("SELECT count(*) FROM steps").fetchone()[0]
            exit_code, end_ns = run_row(db)
            db.close()
            # Marker i ends step i-1: a marker printed long enough before the kill is committed.
            old = sum(1 for t in markers if t < killed_ns - COMMITTED_AFTER_NS)
            if stored < old - 1:
                raise AssertionError(f"{stored} steps stored, {old - 1} were older than the flush interval")
            tally.add_lost("steps_not_committed", max(0, len(markers) - 1 - stored))
            tally.add_lost("steps_printed", max(0, len(markers) - 1))
            if end_ns != -1 or exit_code != -1:
                raise AssertionError(f"a killed run has end_ns={end_ns}, exit_code={exit_code}")
            if not advise_partial(store):
                raise AssertionError("advise does not mark the killed run partial")

        for index in range(max(TRIALS, 3)):
            tally.trial(trial, index)
        tally.report(self)

    # -- SIGTERM and SIGINT: the tail is flushed ------------------------------------------------------
    def check_signal(self, signal_number, case):
        tally = Tally(case)

        def trial(index):
            store = os.path.join(self.fresh(f"{case}{index}"), "run.db")
            job = self.start_markers(store)
            count = 0
            for line in job.stdout:
                count += 1
                if count == 50 + index:
                    break
            job.send_signal(signal_number)
            out, err = job.communicate(timeout=HANG_LIMIT_S)
            count += len(out.splitlines())
            db = open_store(store)
            stored = db.execute("SELECT count(*) FROM steps").fetchone()[0]
            exit_code, end_ns = run_row(db)
            db.close()
            tally.add_lost("steps_not_committed", max(0, count - 1 - stored))
            if stored < count - 1:
                raise AssertionError(f"tail lost: {count - 1} steps ended, {stored} stored; stderr: {err[-400:]}")
            if end_ns < 0:
                raise AssertionError("the store was not closed")
            if signal_number == signal.SIGTERM:
                if job.returncode != -signal.SIGTERM:
                    raise AssertionError(f"the job ended with {job.returncode}, not by SIGTERM")
                if exit_code != 128 + signal.SIGTERM:
                    raise AssertionError(f"exit_code {exit_code} stored for SIGTERM")
            elif job.returncode not in (-signal.SIGINT, 1):  # Python: KeyboardInterrupt, then death by SIGINT
                raise AssertionError(f"the job ended with {job.returncode} after SIGINT")

        for index in range(TRIALS):
            tally.trial(trial, index)
        tally.report(self)

    def test_sigterm_flushes_the_tail(self):
        self.check_signal(signal.SIGTERM, "sigterm")

    def test_sigint_flushes_the_tail(self):
        self.check_signal(signal.SIGINT, "sigint")

    def test_sigterm_while_recording(self):
        """SIGTERM lands on the thread that records, often inside the store's queue lock or malloc's, which
        the close needs: the store must still close and the job die by SIGTERM."""
        tally = Tally("sigterm_while_recording")

        def trial(index):
            store = os.path.join(self.fresh(f"storm{index}"), "run.db")
            job = subprocess.Popen([PYTHON, os.path.join(JOBS, "record_storm.py")], env=job_env(store),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            job.stdout.readline()
            time.sleep(random.uniform(0.05, 0.3))
            job.send_signal(signal.SIGTERM)
            _, err = job.communicate(timeout=HANG_LIMIT_S)
            if job.returncode != -signal.SIGTERM:
                raise AssertionError(f"the job ended with {job.returncode}, not by SIGTERM; stderr: {err[-400:]}")
            db = open_store(store)
            exit_code, end_ns = run_row(db)
            db.close()
            if end_ns < 0:
                tally.add_lost("stores_not_closed", 1)
                raise AssertionError("the store was not closed")
            if exit_code != 128 + signal.SIGTERM:
                raise AssertionError(f"exit_code {exit_code} stored for SIGTERM")

        for index in range(max(TRIALS, 10)):
            tally.trial(trial, index)
        tally.report(self)

    # -- exit codes of the plain LD_PRELOAD path ------------------------------------------------------
    def test_exit_code_is_recorded(self):
        tally = Tally("exit_code")

        def trial(code, via):
            store = os.path.join(self.fresh(f"exit{code}{via}"), "run.db")
            script = {"exit": ["plain_job.py", str(code)],
                      "os._exit": ["-c", f"import os; os._exit({code})"],
                      "exception": ["-c", "raise SystemExit('boom')"]}[via]
            argv = [PYTHON] + ([os.path.join(JOBS, script[0])] + script[1:] if via == "exit" else script)
            done = subprocess.run(argv, env=job_env(store), capture_output=True, text=True, timeout=HANG_LIMIT_S)
            db = open_store(store)
            exit_code, end_ns = run_row(db)
            db.close()
            if exit_code != done.returncode or end_ns < 0:
                raise AssertionError(f"{via}: job exited {done.returncode}, store says {exit_code} (end {end_ns})")

        for code in (0, 3, 255):
            tally.trial(trial, code, "exit")
        tally.trial(trial, 7, "os._exit")
        tally.trial(trial, 1, "exception")
        tally.report(self)

    # -- fork storms: one store per process, no hang ---------------------------------------------------
    def check_fork_storm(self, mode, case, trials):
        tally = Tally(case)

        def trial(index):
            folder = self.fresh(f"{case}{index}")
            store = os.path.join(folder, "run.db")
            done = subprocess.run([PYTHON, os.path.join(JOBS, "fork_storm.py"), mode], env=job_env(store),
                                  capture_output=True, text=True, timeout=HANG_LIMIT_S)
            if done.returncode != 0 or "done" not in done.stdout:
                raise AssertionError(f"job exited {done.returncode}: {done.stderr[-400:]}")
            # Processes that outlive the job (multiprocessing's resource tracker) close their store soon after.
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and any(n.endswith(("-wal", "-shm", "-journal")) for n in os.listdir(folder)):
                time.sleep(0.2)
            stores = sorted(name for name in os.listdir(folder) if name.endswith(".db"))
            command_lines = []
            for name in stores:
                db = open_store(os.path.join(folder, name))
                exit_code, end_ns = run_row(db)
                command_lines += [line for (line,) in db.execute("SELECT command_line FROM processes")]
                steps = db.execute("SELECT count(*) FROM steps").fetchone()[0]
                db.close()
                if end_ns < 0:
                    # Pool.terminate() sends SIGTERM to idle workers; a spawned one still starting up
                    # (before the bridge installed the handler) dies like under SIGKILL.
                    if steps:
                        raise AssertionError(f"{name} recorded steps but was not closed")
                    tally.add_lost("idle_workers_killed_before_handlers", 1)
            # Every pool worker that ran work has its own store; so do both Pythons of the chain.
            workers = next(line.split()[1:] for line in done.stdout.splitlines() if line.startswith("workers"))
            missing = [pid for pid in workers if f"run.{pid}.db" not in stores]
            if missing:
                raise AssertionError(f"no store for workers {missing}")
            chained = sum(1 for line in set(command_lines) if " chain " in line)
            if chained != 2:
                raise AssertionError(f"{chained} stores for the 2 chained Pythons")
            if mode == "dataloader" and len(stores) < 1 + len(workers) + 2 + 8:
                raise AssertionError(f"{len(stores)} stores: the 8 DataLoader workers are missing")
            tally.add_lost("stores", len(stores))

        for index in range(trials):
            tally.trial(trial, index)
        tally.report(self)

    def test_fork_storm_multiprocessing_and_subprocess_chains(self):
        self.check_fork_storm("all", "fork_storm", TRIALS)

    def test_fork_storm_with_dataloader_workers(self):
        self.check_fork_storm("dataloader", "fork_storm_dataloader", max(1, TRIALS // 2))

    # -- 32 threads compiling and stepping ------------------------------------------------------------
    def test_32_threads_compiling_and_stepping(self):
        tally = Tally("threads_32")

        def trial(index):
            store = os.path.join(self.fresh(f"threads{index}"), "run.db")
            done = subprocess.run([PYTHON, os.path.join(JOBS, "threads_compile.py"), "32"], env=job_env(store),
                                  capture_output=True, text=True, timeout=HANG_LIMIT_S)
            if done.returncode != 0:
                raise AssertionError(f"job exited {done.returncode}: {done.stdout[-300:]} {done.stderr[-300:]}")
            db = open_store(store)
            compiles = db.execute("SELECT count(*) FROM compiles").fetchone()[0]
            breaks = db.execute("SELECT count(*) FROM graph_breaks").fetchone()[0]
            steps = db.execute("SELECT count(*) FROM steps").fetchone()[0]
            dropped = db.execute("SELECT coalesce(sum(count), 0) FROM diagnostics WHERE source = 'store'").fetchone()[0]
            db.close()
            if breaks < 32 or compiles < 32:
                raise AssertionError(f"{compiles} compiles and {breaks} graph breaks stored for 32 threads")
            # 96 torchscope.step() markers in one process: the first opens step 0, each later one closes a step,
            # also while other threads compile.
            if steps + dropped < 95:
                raise AssertionError(f"{steps} steps stored ({dropped} records dropped) for 96 markers")
            tally.add_lost("records_dropped", dropped)

        for index in range(max(1, TRIALS // 2)):
            tally.trial(trial, index)
        tally.report(self)

    # -- a full disk and an unwritable output path ----------------------------------------------------
    def check_job_unchanged(self, store, tally, preexec=None, expect_store=True):
        # The same job without the collector (its `torchscope` markers are then no-ops).
        plain_env = {name: value for name, value in os.environ.items() if not name.startswith("TORCHSCOPE_")}
        plain_env["PYTHONPATH"] = BRIDGE
        plain = subprocess.run([PYTHON, os.path.join(JOBS, "marker_loop.py"), "3000", "4"], env=plain_env,
                               capture_output=True, text=True, timeout=HANG_LIMIT_S)
        traced = subprocess.run([PYTHON, os.path.join(JOBS, "marker_loop.py"), "3000", "4"], env=job_env(store),
                                capture_output=True, text=True, timeout=HANG_LIMIT_S, preexec_fn=preexec)
        if traced.returncode != plain.returncode:
            raise AssertionError(f"exit code changed: {plain.returncode} -> {traced.returncode}")
        if len(traced.stdout.splitlines()) != len(plain.stdout.splitlines()):
            raise AssertionError("the job's output changed")
        warnings = torchscope_lines(traced.stderr)
        if len(warnings) != 1:
            raise AssertionError(f"expected one torchscope line on stderr, got {warnings}")
        if expect_store:
            db = open_store(store)
            lost = db.execute("SELECT coalesce(sum(count), 0) FROM diagnostics WHERE source = 'store'").fetchone()[0]
            stored = db.execute("SELECT count(*) FROM steps").fetchone()[0]
            db.close()
            tally.add_lost("steps_not_stored", 2999 - stored)
            tally.add_lost("drops_recorded_in_store", lost)
        return warnings[0]

    def test_full_disk(self):
        tally = Tally("full_disk")

        def limit_file_size():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as on a full disk: writes fail, nothing dies
            resource.setrlimit(resource.RLIMIT_FSIZE, (160 * 1024, 160 * 1024))

        def trial(index):
            store = os.path.join(self.fresh(f"full{index}"), "run.db")
            warning = self.check_job_unchanged(store, tally, preexec=limit_file_size)
            if "lost" not in warning:
                raise AssertionError(f"the warning does not say that records were lost: {warning}")

        for index in range(TRIALS):
            tally.trial(trial, index)
        tally.report(self)

    def test_unwritable_output_path(self):
        tally = Tally("unwritable_output")
        blocker = os.path.join(self.dir, "a-file")
        open(blocker, "w").close()

        def trial(store):
            warning = self.check_job_unchanged(store, tally, expect_store=False)
            if "cannot write" not in warning:
                raise AssertionError(f"unexpected warning: {warning}")

        # A directory that is a file, one that does not exist, and a read-only file system.
        for store in (os.path.join(blocker, "run.db"), os.path.join(self.dir, "missing", "run.db"), "/proc/run.db"):
            tally.trial(trial, store)
        tally.report(self)

    # -- start-up variants: the collector stays out of the way -----------------------------------------
    def test_own_sitecustomize_still_runs(self):
        tally = Tally("own_sitecustomize")

        def trial():
            store = os.path.join(self.fresh("site"), "run.db")
            env = job_env(store, PYTHONPATH=os.path.join(JOBS, "own_site"))
            done = subprocess.run([PYTHON, os.path.join(JOBS, "print_site.py")], env=env, capture_output=True,
                                  text=True, timeout=HANG_LIMIT_S)
            if done.returncode != 0 or "own sitecustomize: ran" not in done.stdout:
                raise AssertionError(f"the job's sitecustomize did not run: {done.stdout} {done.stderr}")
            db = open_store(store)
            diagnostics = [m for (m,) in db.execute("SELECT message FROM diagnostics")]
            db.close()
            if any("bridge did not start" in m for m in diagnostics):
                raise AssertionError("the bridge did not start next to the job's sitecustomize")

        for _ in range(TRIALS):
            tally.trial(trial)
        tally.report(self)

    def test_job_without_torch(self):
        tally = Tally("no_torch")

        def trial():
            store = os.path.join(self.fresh("notorch"), "run.db")
            done = subprocess.run([PYTHON, os.path.join(JOBS, "plain_job.py"), "5"], env=job_env(store),
                                  capture_output=True, text=True, timeout=HANG_LIMIT_S)
            if done.returncode != 5 or done.stdout != "plain job output\n":
                raise AssertionError(f"the job changed: {done.returncode} {done.stdout!r}")
            db = open_store(store)
            (torch_version,) = db.execute("SELECT torch_version FROM run").fetchone()
            loaded = db.execute("SELECT count(*) FROM compiles").fetchone()[0]
            db.close()
            if torch_version or loaded:
                raise AssertionError("torch was imported by the collector")

        for _ in range(TRIALS):
            tally.trial(trial)
        tally.report(self)

    # -- no shell between `torchscope run` and the job ------------------------------------------------
    def test_hostile_job_arguments_reach_the_job_verbatim(self):
        tally = Tally("hostile_arguments")
        marker = os.path.join(self.dir, "injected")
        hostile = [f"$(touch {marker})", f"`touch {marker}`", f"; touch {marker}", f"| touch {marker}",
                   "'\"", "*", "$HOME", "\n", "-o", "--"]

        def trial():
            store = os.path.join(self.fresh("args"), "run.db")
            done = subprocess.run([TORCHSCOPE, "run", "-o", store, "--", PYTHON, os.path.join(JOBS, "print_args.py"),
                                   *hostile], env=job_env(store), capture_output=True, text=True,
                                  timeout=HANG_LIMIT_S)
            if done.returncode != 0 or json.loads(done.stdout.splitlines()[0]) != hostile:
                raise AssertionError(f"the job got other arguments: {done.returncode} {done.stdout!r}")
            if os.path.exists(marker):
                raise AssertionError("an argument was run by a shell")
            db = open_store(store)
            (command_line,) = db.execute("SELECT command_line FROM run").fetchone()
            db.close()
            # `fix` splits it back into the job's argv (POSIX shell words, as shlex does).
            if shlex.split(command_line)[-len(hostile):] != hostile:
                raise AssertionError(f"the stored command line does not give the arguments back: {command_line!r}")

        for _ in range(TRIALS):
            tally.trial(trial)
        tally.report(self)

    def test_static_and_setuid_binaries(self):
        tally = Tally("static_setuid")
        compiler = shutil.which("cc")
        if compiler is None:
            self.skipTest("no C compiler")
        source = os.path.join(self.dir, "hello.c")
        with open(source, "w", encoding="utf-8") as out:
            out.write('#include <stdio.h>\nint main(void) { puts("hello"); return 6; }\n')
        static = os.path.join(self.dir, "hello-static")
        if subprocess.run([compiler, "-static", "-o", static, source], capture_output=True).returncode != 0:
            self.skipTest("no static libc")

        def trial(argv, name):
            folder = self.fresh(name)
            done = subprocess.run(argv, env=job_env(os.path.join(folder, "run.db")), capture_output=True, text=True,
                                  timeout=60)
            if done.returncode != 6 or done.stdout != "hello\n" or done.stderr:
                raise AssertionError(f"{name}: {done.returncode} {done.stdout!r} {done.stderr!r}")
            if os.listdir(folder):
                raise AssertionError(f"{name} left {os.listdir(folder)}")

        tally.trial(trial, [static], "static")
        # A setuid program started by another user runs in secure mode: the loader drops the preload.
        setpriv = shutil.which("setpriv")
        if os.geteuid() == 0 and setpriv:
            setuid = os.path.join(self.dir, "hello-setuid")
            subprocess.run([compiler, "-o", setuid, source], check=True)
            os.chmod(setuid, 0o4755)
            os.chmod(self.dir, 0o777)
            tally.trial(trial, [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", setuid], "setuid")
        tally.report(self)


if __name__ == "__main__":
    unittest.main()
