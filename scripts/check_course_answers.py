#!/usr/bin/python3
"""Runs every lesson of docs/course/ and then every command of its teacher's answers, in a fresh
folder, and compares each command's output with the output printed under it in
docs/course/teacher_answers.md. Prints the commands whose output differs, and exits 1 if any did.

    scripts/check_course_answers.py [--lenlab build/release/lenlab] [--keep DIR] [--update]

--update writes what each command printed into teacher_answers.md in place of the old output (then
read `git diff`: the answers' prose quotes some of those numbers). With --keep DIR, DIR/answers.md
holds every command and what it printed, for `scripts/check_docs.py --snapshot course DIR`, which
copies it and the lessons' reports into docs/data/course/ (the snapshot the docs check reads).

About three minutes on 2 cores (the answers train about 25 small models). The test suite checks
the lessons' structure and runs their configs at reduced size (tests/lab/test_course.cpp); this
script is for whoever changes a lesson, the engine's numbers, or the answers, to see which printed
outputs no longer hold.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "docs" / "course"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def lesson_commands():
    for lesson in sorted(COURSE.glob("0*.md")):
        for lang, body in FENCE.findall(lesson.read_text()):
            if lang == "sh" and body.startswith("lenlab run configs/course/"):
                yield lesson.name, body.strip()


def answer_blocks():
    """(section, command, expected output or None) for every ```sh block of the answers."""
    text = (COURSE / "teacher_answers.md").read_text()
    section = ""
    blocks = list(FENCE.finditer(text))
    for i, m in enumerate(blocks):
        if m.group(1) != "sh":
            continue
        headings = re.findall(r"^#+ (.+)$", text[: m.start()], re.M)
        section = headings[-1] if headings else ""
        expected = None
        if i + 1 < len(blocks) and blocks[i + 1].group(1) == "" and \
                text[m.end(): blocks[i + 1].start()].strip() == "":
            expected = blocks[i + 1].group(2)
        yield section, m.group(2), expected


def normalized(text: str) -> list:
    # Leading spaces kept (JSON's indentation); trailing ones and blank ends are not output.
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lenlab", default=str(ROOT / "build" / "release" / "lenlab"))
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temporary one)")
    parser.add_argument("--update", action="store_true",
                        help="write the outputs printed now into teacher_answers.md")
    args = parser.parse_args()
    lenlab = Path(args.lenlab).resolve()
    if not lenlab.is_file():
        print(f"no lenlab at {lenlab}: build it first (cmake --build --preset release)",
              file=sys.stderr)
        return 2
    work = Path(args.keep or tempfile.mkdtemp(prefix="lenlab-course-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "bin").mkdir(exist_ok=True)
    for link, target in ((work / "configs", ROOT / "configs"), (work / "bin" / "lenlab", lenlab)):
        if not link.exists():
            link.symlink_to(target)
    env = dict(os.environ, PATH=f"{work / 'bin'}{os.pathsep}{os.environ['PATH']}")

    def sh(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                              capture_output=True, text=True)

    failures = 0
    updates = []  # (old output, new output)
    printed = []  # answers.md: each command and what it printed
    for lesson, command in lesson_commands():
        r = sh(command)
        print(f"{'ok  ' if r.returncode == 0 else 'FAIL'} {lesson}: {command}")
        if r.returncode != 0:
            failures += 1
            print(r.stderr)
    for section, command, expected in answer_blocks():
        r = sh(command)
        first = command.strip().splitlines()[0]
        printed.append(f"## {section}\n\n```sh\n{command}```\n```\n{r.stdout}```\n")
        if r.returncode != 0:
            failures += 1
            print(f"FAIL {section}: `{first}` exited {r.returncode}\n{r.stderr}")
        elif expected is not None and normalized(r.stdout) != normalized(expected):
            failures += 1
            print(f"DIFF {section}: `{first}` printed\n{r.stdout}\ninstead of\n{expected}")
            updates.append((expected, "\n".join(normalized(r.stdout)) + "\n"))
        else:
            print(f"ok   {section}: {first}")
    if args.update and updates:
        answers = COURSE / "teacher_answers.md"
        text = answers.read_text()
        for old, new in updates:
            text = text.replace(f"```\n{old}```\n", f"```\n{new}```\n", 1)
        answers.write_text(text)
        print(f"updated {len(updates)} output(s) in {answers}")
    (work / "answers.md").write_text("\n".join(printed))
    if not args.keep:
        shutil.rmtree(work)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
