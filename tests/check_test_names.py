#!/usr/bin/python3
"""Fails when a unit test case's name holds ';'.

CMake splits a discovered test name at ';', so ctest would run
`tpush_unit --test-case=<the part before it>`, which matches no test case and
passes: the test would silently never run in `make test` or CI.

    tests/check_test_names.py TPUSH_UNIT      exit 0: clean; 1: the names to fix
"""

import subprocess
import sys

listing = subprocess.run([sys.argv[1], "--list-test-cases", "--no-version"], capture_output=True, text=True,
                         check=True).stdout
bad = [line.strip() for line in listing.splitlines() if ";" in line and not line.startswith("[doctest]")]
for name in bad:
    print(f"unit test case name holds ';' (ctest would never run it; use ',' instead): {name}")
sys.exit(1 if bad else 0)
