"""A fork server for the docs examples (scripts/docs_examples.py): a page's ``ctxprior`` commands
start from one process that has already imported ctxprior and, on pages that load a model, torch
and transformers (about 4 s of CPU per model command on a 2-core machine, 0.4 s per other command).

Each command is still its own process, as a user's is: the server forks a child that takes the
command's stdin, stdout and stderr, working folder, environment and arguments, runs the console
script's ``ctxprior.cli.main`` and exits through the interpreter's normal shutdown; its exit status
(or the signal that ended it) becomes the command's. Only what the server imported beforehand is
shared. A command whose environment differs from the server's in a variable other than bash's own
and ``CTXPRIOR_*`` (which ctxprior reads when it runs, not when it is imported) is executed as the
real console script instead, since an imported library may have read that variable already.

    python scripts/docs_forkserver.py serve SOCKET [--models]   # the page's server
    python -I scripts/docs_forkserver.py client ARGS...         # what `ctxprior` on the page runs

``CTXPRIOR_DOCS_FORK=0`` turns it off (every command executes the console script).
"""

from __future__ import annotations

import array
import atexit
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import traceback

SOCKET_ENV = "CTXPRIOR_DOCS_SOCKET"
REAL_ENV = "CTXPRIOR_DOCS_REAL"  # the console script the client falls back to
BASH_OWN = {"_", "PWD", "OLDPWD", "SHLVL"}  # bash sets these in every command it runs


def _comparable(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in BASH_OWN and not k.startswith("CTXPRIOR_")}


# -- the client: the `ctxprior` a page's shell finds first on PATH --


def _exec_real(argv: list[str]) -> None:
    real = os.environ[REAL_ENV]
    os.execv(real, [real, *argv])


def _recv_line(sock: socket.socket) -> str:
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            return ""
        buf += chunk
    return buf.decode().strip()


def client(argv: list[str]) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.environ[SOCKET_ENV])
    except (KeyError, OSError):
        _exec_real(argv)
    req = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    sock.sendmsg(
        [struct.pack("!I", len(req))],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))],
    )
    sock.sendall(req)
    first = _recv_line(sock)
    if not first.startswith("pid "):
        _exec_real(argv)  # "exec": the environment differs (module docstring), or no answer
    pid = int(first.split()[1])

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(s, forward)
    how, _, value = _recv_line(sock).partition(" ")
    if how == "signal":
        signal.signal(int(value), signal.SIG_DFL)
        os.kill(os.getpid(), int(value))
    sys.exit(int(value) if how == "exit" else 1)


# -- the server --


def _preload(models: bool) -> None:
    """Import what the page's commands will import, with the console script's warning filters."""
    import click

    from ctxprior.cli import _quiet_libraries, cli

    _quiet_libraries()
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):  # every command module (each imports only its own needs)
        cli.get_command(ctx, name)
    import ctxprior.storage.store

    if models:
        import torch  # noqa: F401
        from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM  # noqa: F401

        import ctxprior.scoring.engine
        import ctxprior.scoring.models
        import ctxprior.scoring.runs.score  # noqa: F401


def _recv_request(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
    (n,) = struct.unpack("!I", head)
    body = b""
    while len(body) < n:
        chunk = conn.recv(n - len(body))
        if not chunk:
            raise OSError("client went away")
        body += chunk
    return json.loads(body), fds


def serve(path: str, models: bool) -> dict:
    """Serve until SIGTERM; returns only in a forked child, with its request (the caller runs it)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)  # clients queue while the imports below run
    before = dict(os.environ)
    own_env = _comparable(before)
    _preload(models)
    # what the imports put in the environment (torch's inductor sets its cache folder), the
    # children get too, as a process that imported them would have it
    imported_env = {k: v for k, v in os.environ.items() if before.get(k) != v}
    gc.freeze()  # the imported objects stay out of the children's collections (no copy-on-write)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}  # child pid -> its client's connection
    killed: set[int] = set()

    def stop(*_):
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        conns = {c.fileno(): (pid, c) for pid, c in children.items() if pid not in killed}
        try:
            ready, _, _ = select.select([listener, wake_r, *conns], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            os.read(wake_r, 512)
            while children:
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                conn = children.pop(pid, None)
                killed.discard(pid)
                if conn is not None:
                    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
                    msg = f"signal {sig}\n" if sig else f"exit {os.waitstatus_to_exitcode(status)}\n"
                    try:
                        conn.sendall(msg.encode())
                    except OSError:
                        pass
                    conn.close()
        for fd in ready:
            if fd in conns:  # the client went away before its command ended: end the command
                pid, conn = conns[fd]
                killed.add(pid)
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        conn.settimeout(10)  # a client sends its request at once; one that does not is dropped
        try:
            req, fds = _recv_request(conn)
        except (OSError, ValueError):
            conn.close()
            continue
        conn.settimeout(None)
        env = _comparable(req["env"])
        if env != own_env:
            differ = sorted(k for k in env.keys() | own_env.keys() if env.get(k) != own_env.get(k))
            print(f"exec {req['argv'][:1]}: the environment differs in {differ}", file=sys.stderr, flush=True)
            try:
                conn.sendall(b"exec\n")
            except OSError:
                pass
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            for s in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(s, signal.SIG_DFL)
            for c in (listener, conn, *children.values()):
                c.close()
            os.close(wake_r)
            os.close(wake_w)
            os.setpgid(0, 0)  # its own group, so that the server can end it with all it started
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            return {**req, "env": {**req["env"], **imported_env}}
        for fd in fds:
            os.close(fd)
        children[pid] = conn
        try:
            conn.sendall(f"pid {pid}\n".encode())
        except OSError:  # the client is gone already: the loop above ends its command
            pass


def run_child(req: dict) -> None:
    """In the forked child: become the command and run the console script's entry point."""
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    real = req["env"][REAL_ENV]
    sys.argv = [real, *req["argv"]]
    from ctxprior.cli import main

    try:
        main()
        code: object = 0
    except SystemExit as e:
        code = e.code
    except BaseException:  # what Python prints for an uncaught exception, and its exit status 1
        traceback.print_exc()
        code = 1
    # The interpreter's shutdown (threads joined, atexit handlers run), without tearing down
    # every module the server imported one by one (0.3 s a command).
    getattr(threading, "_shutdown", lambda: None)()
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    if sys.argv[1] == "client":
        client(sys.argv[2:])
    else:
        sys.path[0] = os.path.dirname(os.environ[REAL_ENV])  # as the console script's own sys.path
        run_child(serve(sys.argv[2], models="--models" in sys.argv[3:]))
