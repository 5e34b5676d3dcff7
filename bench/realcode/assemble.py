"""Build the real-code corpus: the .py and .ipynb files of every repository in repos.toml, at its
pinned commit.

    python bench/realcode/assemble.py DIR [--mirror-root /work/.mirror] [--only NAME,...]

Each repository lands in DIR/NAME/ with its relative paths kept, and only the folders its entry
names. By default a repository is cloned as a user would clone it (``git clone --filter=blob:none
--no-checkout``, then a sparse checkout of the pinned commit, so only the kept files are
downloaded). With --mirror-root the pinned commit is read out of a local bare mirror instead
(ROOT/OWNER+NAME/repo or ROOT/OWNER+NAME, the layout the search tool's fetch makes), with no
network at all.

Nothing fetched is ever run: files are read out of git and written, nothing more. A repository is
built in DIR/.partial-NAME and renamed into place when whole, with a .complete marker holding its
commit, so reruns skip finished repositories, rebuild re-pinned ones, and an interrupted run never
leaves a half-written repository behind. A repository that cannot be had (no mirror, a failed
clone, a commit that is not there) is reported in one line and the others go on; the exit status
is then 1. Exit status 2: bad arguments or a bad repos.toml.

DIR must be outside this checkout: the fetched code is never committed here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from corpus import COMPLETE_MARKER, CONFIG, ConfigError, LineCount, Repo, count_lines, load_repos

CHECKOUT = Path(__file__).resolve().parents[2]
#: Git never asks for a password (a missing repository fails at once) and never fetches LFS data.
GIT_ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1"}
#: Regular files only: no symbolic links (120000), no submodules (160000).
BLOB_MODES = {"100644", "100755"}


class RepoError(Exception):
    """One repository could not be exported; the message says why, in one line."""


def git(*args: str, input: bytes | None = None) -> bytes:
    """Run git and return its standard output; a failure is a :class:`RepoError`."""
    try:
        completed = subprocess.run(["git", *args], input=input, capture_output=True, env=GIT_ENV)
    except FileNotFoundError:
        raise RepoError("git is not installed") from None
    if completed.returncode != 0:
        lines = completed.stderr.decode(errors="replace").strip().splitlines() or ["no message"]
        raise RepoError(f"git {_subcommand(args)} failed: {lines[-1]}")
    return completed.stdout


def _subcommand(args: tuple[str, ...]) -> str:
    """The git command in ``args``, past the global options and their values."""
    position = 0
    while position < len(args) and args[position] in ("--git-dir", "-C", "-c"):
        position += 2
    return args[position] if position < len(args) else "git"


def selected_files(git_dir: Path, repo: Repo) -> list[tuple[str, str]]:
    """(blob id, path) of every file of the pinned commit that the corpus keeps."""
    try:
        git("--git-dir", str(git_dir), "cat-file", "-e", f"{repo.commit}^{{commit}}")
    except RepoError:
        raise RepoError(f"commit {repo.commit} is not in {git_dir}") from None
    listing = git("--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", repo.commit)
    files = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        path = raw_path.decode("utf-8", errors="surrogateescape")
        if kind == "blob" and mode in BLOB_MODES and repo.keeps(path) and _is_plain(path):
            files.append((blob, path))
    if repo.paths and not files:
        raise RepoError(f"none of the paths {', '.join(repo.paths)} holds a .py or .ipynb file at {repo.commit[:12]}")
    return files


def _is_plain(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and all(part not in ("", ".", "..") for part in parts)


def read_blobs(git_dir: Path, files: list[tuple[str, str]]) -> list[bytes]:
    """The contents of the (blob id, path) ``files``, in order, from one ``git cat-file --batch``."""
    request = "".join(f"{blob}\n" for blob, _ in files).encode()
    output = git("--git-dir", str(git_dir), "cat-file", "--batch", input=request)
    contents, position = [], 0
    for blob, path in files:
        header_end = output.find(b"\n", position)
        header = output[position:header_end].decode().split() if header_end >= 0 else []
        if header == [blob, "missing"]:
            raise RepoError(f"{path}: blob {blob[:12]} is missing from the mirror (snapshots leave out files of "
                            f"4 MiB and more); add the path to the repository's exclude list")
        if len(header) != 3 or header[0] != blob:
            raise RepoError(f"git cat-file gave no content for {path}")
        start = header_end + 1
        end = start + int(header[2])
        if end > len(output):
            raise RepoError(f"git cat-file returned a truncated {path}")
        contents.append(output[start:end])
        position = end + 1
    return contents


def find_mirror(mirror_root: Path, repo: Repo) -> Path:
    owner, name = repo.owner_and_name
    for candidate in (mirror_root / f"{owner}+{name}" / "repo", mirror_root / f"{owner}+{name}"):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise RepoError(f"no mirror of {owner}/{name} under {mirror_root} (looked for {owner}+{name}/repo)")


def export_from_mirror(mirror_root: Path, repo: Repo, staging: Path) -> None:
    git_dir = find_mirror(mirror_root, repo)
    files = selected_files(git_dir, repo)
    for (_, path), content in zip(files, read_blobs(git_dir, files)):
        write_file(staging / path, content)


def export_from_clone(repo: Repo, staging: Path, scratch: Path) -> None:
    """Clone without blobs, check out only the kept files of the pinned commit, copy them."""
    git("clone", "--quiet", "--filter=blob:none", "--no-checkout", repo.url, str(scratch))
    git_dir = scratch / ".git"
    try:
        git("--git-dir", str(git_dir), "cat-file", "-e", f"{repo.commit}^{{commit}}")
    except RepoError:  # not on a branch the clone brought: ask for the commit itself
        git("-C", str(scratch), "fetch", "--quiet", "--filter=blob:none", "origin", repo.commit)
    files = selected_files(git_dir, repo)
    patterns = "".join(f"/{_escape_pattern(path)}\n" for _, path in files)
    git("-C", str(scratch), "sparse-checkout", "set", "--no-cone", "--stdin", input=patterns.encode())
    git("-C", str(scratch), "-c", "advice.detachedHead=false", "checkout", "--quiet", repo.commit)
    for _, path in files:
        write_file(staging / path, (scratch / path).read_bytes())


def _escape_pattern(path: str) -> str:
    """A sparse-checkout (gitignore-style) pattern that matches exactly ``path``."""
    escaped = "".join("\\" + char if char in "\\*?[]!#" else char for char in path)
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped


def write_file(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)


def is_complete(folder: Path, repo: Repo) -> bool:
    marker = folder / COMPLETE_MARKER
    return marker.is_file() and marker.read_text(encoding="utf-8").strip() == repo.commit


def build(repo: Repo, corpus: Path, mirror_root: Path | None) -> bool:
    """Export ``repo`` into corpus/NAME unless it is already there; True if it was built now."""
    folder = corpus / repo.name
    if is_complete(folder, repo):
        return False
    staging, scratch = corpus / f".partial-{repo.name}", corpus / f".clone-{repo.name}"
    for leftover in (staging, scratch):
        shutil.rmtree(leftover, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        if mirror_root is not None:
            export_from_mirror(mirror_root, repo, staging)
        else:
            export_from_clone(repo, staging, scratch)
        (staging / COMPLETE_MARKER).write_text(repo.commit + "\n", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)  # an older pin, or an unfinished folder
        staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return True


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Build the real-code corpus (the .py and .ipynb files of repos.toml's pinned repositories) in DIR.",
        epilog="Exit status: 0 every repository is there, 1 some could not be had, 2 bad arguments or repos.toml.",
    )
    parser.add_argument("dir", metavar="DIR", type=Path, help="where the corpus goes (outside this checkout)")
    parser.add_argument("--mirror-root", type=Path, metavar="ROOT",
                        help="read the commits from local bare mirrors ROOT/OWNER+NAME[/repo] instead of cloning")
    parser.add_argument("--config", type=Path, default=CONFIG, help="the repository list (default: %(default)s)")
    parser.add_argument("--only", metavar="NAME,...", help="build only these repositories (names from the config)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        repos = load_repos(args.config)
    except ConfigError as error:
        print(f"assemble.py: {error}", file=sys.stderr)
        return 2
    if args.only:
        wanted = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = wanted - {repo.name for repo in repos}
        if unknown:
            print(f"assemble.py: --only: no repository named {', '.join(sorted(unknown))} in {args.config}", file=sys.stderr)
            return 2
        repos = [repo for repo in repos if repo.name in wanted]
    corpus = args.dir.resolve()
    if corpus == CHECKOUT or CHECKOUT in corpus.parents:
        print(f"assemble.py: {args.dir} is inside the leaklint checkout; put the corpus outside it (e.g. /tmp/realcode)", file=sys.stderr)
        return 2
    if args.mirror_root is not None and not args.mirror_root.is_dir():
        print(f"assemble.py: --mirror-root {args.mirror_root}: no such folder", file=sys.stderr)
        return 2
    try:
        corpus.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"assemble.py: {args.dir}: cannot create it ({error.strerror})", file=sys.stderr)
        return 2

    print(f"{'repository':34} {'state':8} {'.py files':>9} {'.py lines':>10} {'notebooks':>9} {'nb lines':>9}")
    total, failed = LineCount(), []
    for repo in repos:
        try:
            state = "built" if build(repo, corpus, args.mirror_root) else "present"
        except (RepoError, OSError) as error:
            reason = str(error) if isinstance(error, RepoError) else f"{error.strerror or error} ({error.filename or ''})"
            print(f"assemble.py: {repo.name}: {reason}", file=sys.stderr, flush=True)
            failed.append(repo.name)
            continue
        count = count_lines(corpus / repo.name)
        total += count
        print(f"{repo.name:34} {state:8} {count.py_files:9,} {count.py_lines:10,} {count.notebooks:9,} {count.notebook_lines:9,}", flush=True)
    print(f"{'total':34} {'':8} {total.py_files:9,} {total.py_lines:10,} {total.notebooks:9,} {total.notebook_lines:9,}")
    print(f"{len(repos) - len(failed)} of {len(repos)} repositories in {corpus}: {total.lines:,} lines "
          f"({total.py_lines:,} in .py files, {total.notebook_lines:,} in notebooks' code cells)")
    if failed:
        print(f"assemble.py: {len(failed)} repositories could not be had: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("assemble.py: interrupted; finished repositories are kept, the unfinished one was removed", file=sys.stderr)
        sys.exit(130)
