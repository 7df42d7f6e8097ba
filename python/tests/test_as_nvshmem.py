"""`python -m gshmem.as_nvshmem`: a program that imports only nvshmem4py's module names (nvshmem4py_program.py:
`import nvshmem.core`, `nvshmem.bindings`, `from nvshmem.core.nvshmem_types import ...`) runs unchanged on gshmem,
as a script and with -m; without it the same program cannot import `nvshmem` (where nvshmem4py is not installed)."""
import random
import subprocess
import sys

import pytest

from test_bindings import check
from test_core import HERE, have, plain_processes

PROGRAM = HERE / "nvshmem4py_program.py"


def test_script():
    seed = random.randrange(1 << 30)
    check(*plain_processes(["-m", "gshmem.as_nvshmem", str(PROGRAM), "a", "b"], 2, seed), seed, 2)


def test_module_form():
    seed = random.randrange(1 << 30)
    out, rc = plain_processes(["-m", "gshmem.as_nvshmem", "-m", "nvshmem4py_program", "c"], 3, seed, cwd=HERE)
    check(out, rc, seed, 3)
    assert "['c']" in out, out


@pytest.mark.skipif(have("nvshmem"), reason="nvshmem4py is installed here: plain `import nvshmem` works")
def test_needed_without_nvshmem4py():
    r = subprocess.run([sys.executable, str(PROGRAM)], capture_output=True, text=True, timeout=60,
                       env={"GSHMEM_TEST_SEED": "1", "GSHMEM_TEST_RANK": "0", "GSHMEM_TEST_NRANKS": "1",
                            "GSHMEM_TEST_COMM_DIR": "/nonexistent", "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0 and "No module named 'nvshmem'" in r.stderr, r.stderr


def test_bad_names():
    """What is not there names itself; the help text; -m without a module."""
    r = subprocess.run([sys.executable, "-c", "import gshmem.as_nvshmem as a; a.install(); import nvshmem.nothere"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "nvshmem.nothere has no gshmem counterpart (gshmem.nothere)" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "gshmem.as_nvshmem"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "python -m gshmem.as_nvshmem prog.py" in r.stdout, (r.stdout, r.stderr)
    r = subprocess.run([sys.executable, "-m", "gshmem.as_nvshmem", "-m"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "-m needs a module name" in r.stderr, r.stderr


def test_bindings_without_their_import(tmp_path):
    """nvshmem4py's core imports its bindings, so a program that imports only `nvshmem` and `nvshmem.core` still calls
    `nvshmem.bindings.<call>` (triton-distributed's utils.py nvshmem_signal_wait) and imports the private
    `nvshmem.core.utils._get_device`; neither needs an init to be found. gshmem.bindings loads on first use only."""
    prog = tmp_path / "uses_bindings_attribute.py"
    prog.write_text(
        "import sys\n"
        "import nvshmem\n"
        "import nvshmem.core\n"
        "from nvshmem.core.utils import _get_device\n"
        "assert 'gshmem.bindings' not in sys.modules, 'imported before first use'\n"
        "b = nvshmem.bindings\n"
        "assert b.my_pe and b.signal_wait_until_on_stream and b.nvshmem.cumodule_init and callable(_get_device)\n"
        "print('bindings attribute: ok')\n")
    r = subprocess.run([sys.executable, "-m", "gshmem.as_nvshmem", str(prog)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "bindings attribute: ok" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-c", "import gshmem; gshmem.nothere"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and "module 'gshmem' has no attribute 'nothere'" in r.stderr, r.stderr
