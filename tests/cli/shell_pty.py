#!/usr/bin/env python3
"""shell_pty.py PIPEJIT — the interactive shell end to end on a pseudo-terminal.

python3's pty module gives pipejit a terminal of its own (it is the session
leader, so a typed Ctrl-C, byte 0x03, is a SIGINT to it and nothing else), so
it runs the libedit shell rather than reading stdin as a script. Each step
waits for what the shell prints (a prompt, a result) instead of sleeping, so
a slow machine (ASan) only makes it slower. Checked:

- a multi-line statement, an error that does not end the session, UTF-8
  typed at the prompt, .tables and .schema;
- Ctrl-C at the first prompt and at a `...>` prompt clears the half-typed
  input (it never runs), Ctrl-C during a long SQL statement and a long pipeline
  stops it with "error: interrupted" and the shell goes on;
- a comment-only line gives a new `pipejit>` prompt, not `...>`;
- a multi-line statement is one history entry: Ctrl-P brings it back whole and
  it runs again; the history file holds it as one entry;
- completion by context: `INTERVAL FL<Tab>` gives FLATTEN, tables after FROM,
  columns of the table in scope, dot-commands at the line start;
- .output FILE / .output and .once FILE move results to the file while the
  prompt stays on the terminal; .timer prints sqlite3's Run Time line; every
  other dot-command (.help .read .mode .headers .width .param .explain .dump
  .open .tables .schema) typed at the prompt does what it says;
- .quit and Ctrl-D leave with status 0.
Exits 1 with the transcript on the first failure.
"""
import os
import pty
import re
import select
import shutil
import signal
import sys
import tempfile
import time

PIPEJIT = os.path.abspath(sys.argv[1])
TIMEOUT = float(os.environ.get("PJ_PTY_TIMEOUT", "60"))
PROMPT = "pipejit> "
MORE = "   ...> "


class Fail(Exception):
    pass


class Shell:
    def __init__(self, home, *args):
        env = dict(os.environ, HOME=home, TERM="dumb", LC_ALL="C.UTF-8")
        env.pop("PIPEJIT_MODULE_PATH", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.chdir(home)
                os.execve(PIPEJIT, [PIPEJIT] + list(args), env)
            finally:
                os._exit(127)
        self.out = ""      # everything the terminal showed, \r removed
        self.pos = 0       # where the next expect looks from

    def _read(self, until):
        r, _, _ = select.select([self.fd], [], [], max(0.0, min(0.2, until - time.time())))
        if not r:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:   # the shell is gone (EIO)
            return False
        if not data:
            return False
        self.out += data.decode("utf-8", "replace").replace("\r", "")
        return True

    def expect(self, pattern, what=None):
        """Waits for the regex after the last match; returns the match."""
        rx = re.compile(pattern)
        until = time.time() + TIMEOUT
        while True:
            m = rx.search(self.out, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.time() > until or not self._read(until):
                raise Fail("waited for %s" % (what or repr(pattern)))

    def prompt(self):
        """Waits for the next prompt; returns it (PROMPT or MORE)."""
        return self.expect(r"(pipejit> |   \.\.\.> )", "a prompt").group(1)

    def send(self, text):
        if os.environ.get("PJ_PTY_DEBUG"):
            print("%.3f send %r" % (time.time() % 100, text), file=sys.stderr)
        os.write(self.fd, text.encode())

    def settle(self):
        """Reads what the shell printed in the next 0.3 s; expect looks
        after it."""
        until = time.time() + 0.3
        while time.time() < until and self._read(until):
            pass
        self.pos = len(self.out)

    def key(self, ch):
        """Sends a control key once the editor waits for a key again: sent
        earlier, it can reach the terminal before the editor switches it
        to raw mode, which discards pending input (and the key with it)."""
        time.sleep(0.2)
        self.settle()   # the prompt that follows is the new one
        self.send(ch)

    def interrupt(self):
        """Ctrl-C once the editor waits for a key again."""
        self.key("\x03")

    def line(self, text):
        """Types a line and waits for the prompt after it; what the shell
        printed in between is self.last."""
        start = len(self.out)
        self.send(text + "\r")
        p = self.prompt()
        # not the echo of the line (twice when the text came before the
        # editor took the terminal: the terminal's own echo, then its)
        lines = self.out[start:self.pos - len(p)].split("\n")
        while lines and lines[0].strip() == text.strip():
            lines.pop(0)
        self.last = "\n".join(lines)
        return p

    def saw(self, pattern, what):
        """The last line printed something matching the regex."""
        if not re.search(pattern, self.last):
            raise Fail("%s: no %r in %r" % (what, pattern, self.last))

    def wait(self):
        """The shell's exit status; a shell still running after TIMEOUT is
        killed and the check fails (the test must not hang)."""
        until = time.time() + TIMEOUT
        while self._read(until) and time.time() < until:
            pass
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            if time.time() > until:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                raise Fail("the shell did not exit")
            time.sleep(0.05)


def check(cond, what):
    if not cond:
        raise Fail(what)


def main():
    home = tempfile.mkdtemp(prefix="pj_pty_")
    sh = None
    try:
        # ---- statements, errors, Ctrl-C, comments, history ----
        sh = Shell(home, "--sample-trace=50")
        check(sh.prompt() == PROMPT, "first prompt")
        check(sh.line("SELECT 40 + 2") == MORE, "continuation prompt")
        check(sh.line("  AS answer;") == PROMPT, "prompt after the statement")
        sh.saw(r"answer\n------\n *42\n", "the multi-line statement's result")
        sh.line("FROM nope;")
        sh.saw(r"no such table: 'nope'", "the error")
        sh.line("FROM slice |> AGGREGATE COUNT(*) AS n;")
        sh.saw(r"\n *50\n", "a result after the error")
        sh.line(".tables")
        sh.saw(r"^cpu_frequency\n", ".tables")
        # non-ASCII text typed at the prompt arrives whole (UTF-8 locale)
        sh.line("SELECT 'é✓' AS e, hex('é✓') AS h;")
        sh.saw(r"é✓ +C3A9E29C93\n", "UTF-8 typed at the prompt")
        sh.line(".schema thread")
        sh.saw(r"CREATE TABLE thread\(", ".schema")

        # Ctrl-C at the prompt with text typed: the text goes
        sh.send("SELECT 111 AS one_one_one")
        sh.expect("one_one_one", "the echo")
        sh.interrupt()
        check(sh.prompt() == PROMPT, "a fresh prompt after Ctrl-C")
        sh.line("SELECT 222 AS two;")
        sh.saw(r"two\n---\n222\n", "the statement after Ctrl-C")
        # Ctrl-C at `...>`: the pending statement goes too
        check(sh.line("SELECT 333 AS three") == MORE, "...> before Ctrl-C")
        sh.interrupt()
        check(sh.prompt() == PROMPT, "pipejit> after Ctrl-C at ...>")
        sh.line("SELECT 444 AS four;")
        sh.saw(r"four\n----\n 444\n", "the statement after Ctrl-C at ...>")
        check("111\n" not in sh.out and "333\n" not in sh.out, "Ctrl-C ran half-typed text")
        check("syntax error" not in sh.out, "Ctrl-C left text pending")

        # a comment-only line is no unfinished statement
        check(sh.line("-- just a comment") == PROMPT, "a comment line gave ...>")
        check(sh.line("/* a closed block comment */") == PROMPT, "a block comment gave ...>")
        check(sh.line("/* an open one") == MORE, "an open block comment needs ...>")
        check(sh.line("still in it */ SELECT 5 AS five;") == PROMPT, "after the comment")
        sh.saw(r"five\n----\n   5\n", "the statement after the comment")

        # Ctrl-C during a long statement stops it; the shell goes on
        endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
        sh.send(endless + " SELECT count(*) AS n FROM c;\r")
        sh.expect(r"AS n FROM c;\n", "the line entered")   # it runs from here on
        time.sleep(1.0)
        sh.send("\x03")
        sh.expect(r"error: interrupted", "SQL interrupted")
        check(sh.prompt() == PROMPT, "prompt after the interrupted SQL")
        sh.send("FROM (" + endless + " SELECT x FROM c) |> AGGREGATE COUNT(*) AS n;\r")
        sh.expect(r"AGGREGATE COUNT\(\*\) AS n;\n", "the line entered")
        time.sleep(1.0)
        sh.send("\x03")
        sh.expect(r"error: interrupted", "pipeline interrupted")
        check(sh.prompt() == PROMPT, "prompt after the interrupted pipeline")
        sh.line("SELECT 555 AS after_stop;")
        sh.saw(r"after_stop\n-+\n *555\n", "a statement after the interrupt")

        # the whole multi-line statement comes back from history (Ctrl-P)
        sh.line("SELECT 7")
        sh.line("  AS seven;")
        sh.saw(r"seven\n-----\n    7\n", "the statement for history")
        sh.send("\x10")
        sh.expect(r"SELECT 7\n  AS seven;", "the statement recalled whole")
        sh.send("\r")
        sh.expect(r"seven\n-----\n    7\n", "the recalled statement ran")
        check(sh.prompt() == PROMPT, "the recalled statement is complete")

        # completion by context
        sh.send("FROM slice |> INTERVAL FL\t")
        sh.expect(r"INTERVAL FLATTEN ", "INTERVAL FL<Tab> -> FLATTEN")
        sh.interrupt()
        sh.prompt()
        sh.send("FROM sl\t")
        sh.expect(r"FROM slice ", "FROM sl<Tab> -> slice")
        sh.send("|> WHERE dep\t")
        sh.expect(r"WHERE depth ", "a column of the table in scope")
        sh.interrupt()
        sh.prompt()
        sh.send("FROM slice |> INTERVAL \t\t")
        # the list is laid out in columns and rows by the terminal's width:
        # wait for its end (a blank line), then look for the words in it
        start = sh.pos
        sh.expect(r"\bFLATTEN\b[\s\S]*?\n[ \t]*\n", "the stage words listed")
        listed = set(re.findall(r"\b[A-Z]+\b", sh.out[start:sh.pos]))
        check({"FILL", "FLATTEN", "JOIN", "FIND", "KEEP", "DROP", "SPLIT"} <= listed,
              "the stage words listed: %r" % sorted(listed))
        sh.interrupt()
        sh.prompt()
        # Ctrl-C right behind the keys, while the editor may still be
        # drawing the list: the line goes at once, not at the next Enter
        sh.send("FROM slice |> INTERVAL \t\t")
        sh.expect(r"\bFLATTEN\b", "the stage words listed again")
        sh.send("\x03")
        sh.settle()
        check(sh.line("SELECT 13 AS thirteen;") == PROMPT, "prompt after Ctrl-C at a list")
        sh.saw(r"thirteen\n-+\n *13\n", "the line typed after Ctrl-C at a list")
        sh.send(".he\t\t")
        sh.expect(r"\.headers\s+\.help", "dot-commands listed")
        sh.interrupt()
        sh.prompt()

        # .output / .once: results to a file, prompts on the terminal
        check(sh.line(".output out.txt") == PROMPT, "prompt while .output")
        check(sh.line("SELECT upper('filed') AS f;") == PROMPT, "prompt while .output")
        sh.line(".tables")
        sh.line(".output")
        sh.line(".once once.txt")
        sh.line("SELECT upper('oncer') AS o;")
        sh.line("SELECT upper('after') AS a;")
        sh.saw(r"\nAFTER\n", ".once covers one statement")
        check("FILED" not in sh.out and "ONCER" not in sh.out, "redirected rows on the terminal")
        with open(os.path.join(home, "out.txt")) as f:
            text = f.read()
        check(text.startswith("f\n-----\nFILED\ncpu_frequency\n"), ".output file: %r" % text)
        with open(os.path.join(home, "once.txt")) as f:
            check(f.read() == "o\n-----\nONCER\n", ".once file")

        # every other dot-command, typed at the prompt
        with open(os.path.join(home, "part.sql"), "w") as f:
            f.write(".mode csv\nSELECT 'from_file' AS r;\n")
        steps = [
            (".help", r"\.explain plan\|llvm\|llvm-raw\|asm\|off"),
            (".read part.sql", r"^\nr\nfrom_file\n$"),
            (".mode markdown", r"^$"),
            (".headers off", r"^$"),
            ("SELECT 1 AS h;", r"\| h \|\n\|--:\|\n\| 1 \|"),
            (".mode list", r"^$"),
            ("SELECT 2 AS h;", r"^2\n$"),
            (".headers on", r"^$"),
            (".mode table", r"^$"),
            (".width 2", r"^$"),
            ("SELECT 'wide' AS w;", r"w\n--\nw…\n"),
            (".width", r"^$"),
            (".param set lo 40", r"^$"),
            (".param list", r"\$lo 40"),
            ("FROM slice |> WHERE id > $lo |> AGGREGATE COUNT(*) AS above;", r"above\n-----\n *9\n"),
            (".param unset lo", r"^$"),
            (".param clear", r"^$"),
            (".explain plan", r"^$"),
            ("FROM slice |> WHERE id = 3 |> SELECT id;", r"filter .*id.*\n(.|\n)*id\n--\n 3\n"),
            (".explain off", r"^$"),
            (".dump thread", r"BEGIN TRANSACTION;\nCREATE TABLE thread\((.|\n)*INSERT INTO \"thread\" VALUES\((.|\n)*COMMIT;"),
            (".open", r"^$"),
            (".tables", r"^$"),
            (".open sample.db", r"^$"),
            ("CREATE TABLE kept(a);", r"^$"),
            (".schema", r"CREATE TABLE kept\(a\);"),
        ]
        for text, want in steps:
            check(sh.line(text) == PROMPT, "prompt after " + text)
            sh.saw(want, text)

        sh.line(".timer on")
        sh.line("SELECT 1 AS one;")
        sh.saw(r"Run Time: real \d+\.\d{3} user \d+\.\d+ sys \d+\.\d+\n", ".timer")
        sh.line(".timer off")
        sh.send(".quit\r")
        check(sh.wait() == 0, ".quit exit status")
        sh = None
        # one entry with both lines (libedit writes blanks as \040, newlines as \012)
        with open(os.path.join(home, ".pipejit_history")) as f:
            entries = f.read().split("\n")
        check(any("SELECT\\0407\\012\\040\\040AS\\040seven;" == e for e in entries),
              "history file: %r" % entries)
        check(any(e.startswith("SELECT\\04040\\040+\\0402\\012") for e in entries),
              "history: the first statement whole")

        # ---- Ctrl-D leaves, after running what was pending ----
        # (checked in the database: output written just before the exit
        # may be lost by the pseudo-terminal)
        db = os.path.join(home, "d.db")
        sh = Shell(home, "--db", db)
        sh.prompt()
        check(sh.line("CREATE TABLE made_at_eof(a)") == MORE, "...> before Ctrl-D")
        sh.key("\x04")
        check(sh.wait() == 0, "Ctrl-D exit status")
        sh = None
        import sqlite3
        names = sqlite3.connect(db).execute("SELECT name FROM sqlite_schema").fetchall()
        check(names == [("made_at_eof",)], "the pending statement did not run at Ctrl-D")
    except Fail as e:
        print("FAIL: %s" % e, file=sys.stderr)
        if sh:
            print("--- transcript (from the last match on: >>>):", file=sys.stderr)
            print(sh.out[:sh.pos] + ">>>" + sh.out[sh.pos:], file=sys.stderr)
            try:
                os.kill(sh.pid, 9)
            except OSError:
                pass
        print("(files of the run kept in %s)" % home, file=sys.stderr)
        return 1
    shutil.rmtree(home, ignore_errors=True)
    print("ok: the shell on a pseudo-terminal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
