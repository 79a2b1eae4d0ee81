#!/bin/sh
# The interactive shell end to end on a pseudo-terminal (ctest:
# cli_shell_pty): tests/cli/shell_pty.py drives it through python3's pty
# module (see there for what it checks). pipejit is the pty's session
# leader, so the Ctrl-C the test types reaches it and no shell in between.
# Usage: test_shell.sh PIPEJIT [PYTHON3]
set -eu
exec "${2:-python3}" "$(dirname "$0")/shell_pty.py" "$1"
