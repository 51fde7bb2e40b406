#!/usr/bin/env python3
"""Runs every C, Python, Swift and shell block of README.md and of the guides it links to in docs/,
the way a reader would, so that none can drift from the code.

    Tests/readme/check_readme.py [--only c|python|swift|sh]     (make test-docs)

The reader is in a checkout after README's set-up (`make test`, or `make` and `make wheel`): a
scratch directory links in tools/, examples/, bindings/, build/, the Makefile and the rest, and holds
the reader's own files the README's examples name: receipt.der, receipt1.der, receipt2.der (minted),
transaction.jws (minted), receipts.parquet, and, when ../shared is beside this checkout,
xcode-signed.jws with StoreKitTestingInXcode.pem.
- Each document gets a fresh shell with only a bare environment (PATH=/usr/local/bin:/usr/bin:/bin,
  HOME, LANG): no `receipt` on PATH, no venv, no PYTHONPATH or RECEIPT_LIBRARY. What a guide needs it
  must set itself (`export PATH=…`, `. build/venv/bin/activate`); what it sets, exports and
  activates lasts to its next blocks, as in one terminal.
- shell: each command (a here-document joined to the command that reads it) must end 0, or 1 for a
  line that starts with `receipt` (a verdict on the reader's own file: NOT VALID) unless its comment
  promises `# VALID`, never more (a usage error, a missing file, a command not found). A `make`
  line is checked, not run (make test cannot run itself, and even `make -n` runs a recipe's
  $(MAKE) lines): each goal must be a target of the Makefile; `make install PREFIX=…` alone is
  carried out, into a prefix in the scratch directory that the shell then searches as a system
  searches /usr/local (PATH, pkg-config, the loader). `cc app.c …` compiles the README's C example.
- Python: run by the `python3` the document's shell has at that point (its venv, if it activated
  one), after `import libreceipt` and `token = open("transaction.jws").read()`; a block that uses
  `spark` gets a local SparkSession, and its DataFrames are collected.
- C: inside main(), after bytes/length (receipt.der), token/token_length (transaction.jws) and a
  default verifier; built with the C compiler against build/ and run.
- Swift: the block with PackageDescription is Package.swift and the next one main.swift of a package
  beside a `libreceipt` link to this checkout; built with `swift build` and run.
Blocks in other languages (text, json, ini) are not code. A line the scratch directory cannot serve
(an Xcode-signed file without ../shared) is reported as skipped, by name.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "fixtures"
BUILD = ROOT / "build"
PYTHON = BUILD / "venv" / "bin" / "python3"
LINKED = ["tools", "examples", "bindings", "build", "Makefile", "Include", "scripts", "Tests", "Package.swift",
          "Sources"]

C_PRELUDE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <receipt.h>
%(includes)s
static char *slurp(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(3); }
    fseek(file, 0, SEEK_END);
    *length = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    char *bytes = malloc(*length + 1);
    if (fread(bytes, 1, *length, file) != *length) { perror(path); exit(3); }
    fclose(file);
    return bytes;
}

int main(void) {
    size_t length = 0, token_length = 0;
    char *bytes = slurp("receipt.der", &length);
    char *token = slurp("transaction.jws", &token_length);
    receipt_verifier_t *verifier = NULL;
    {
        receipt_verifier_builder_t *builder = NULL;
        receipt_verifier_builder_new(&builder);
        receipt_verifier_build(builder, &verifier);
        receipt_verifier_builder_free(builder);
    }
    {
%(block)s
    }
    receipt_verifier_free(verifier);
    free(bytes);
    free(token);
    return 0;
}
"""

PY_PRELUDE = """import libreceipt
token = open("transaction.jws").read()
"""
SPARK_PRELUDE = """import os, sys
os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
"""
SPARK_EPILOGUE = """
for name, value in list(globals().items()):
    if type(value).__name__ == "DataFrame":
        value.collect()
spark.stop()
"""


def blocks(text):
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        yield match.group(1), match.group(2), text[:match.start()].count("\n") + 1


def run(command, cwd, env, what, timeout=900):
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"README {what}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def prepare(scratch, env):
    for name in LINKED:
        (scratch / name).symlink_to(ROOT / name)
    ca = scratch / ".ca"
    run([str(PYTHON), str(ROOT / "tools/mint_receipt.py"), "ca", str(ca)], scratch, env, "set-up: receipt CA")
    for index, name in enumerate(["receipt.der", "receipt1.der", "receipt2.der"]):
        run([str(PYTHON), str(ROOT / "tools/mint_receipt.py"), "receipt", name, "--ca", str(ca), "--purchases",
             str(index + 1)], scratch, env, f"set-up: {name}")
    run([str(PYTHON), str(ROOT / "tools/mint_jws.py"), "ca", str(scratch / ".jws-ca")], scratch, env, "set-up: JWS CA")
    run([str(PYTHON), str(ROOT / "tools/mint_jws.py"), "sign", "transaction.jws", "--ca", str(scratch / ".jws-ca")],
        scratch, env, "set-up: transaction.jws")
    run([str(PYTHON), str(ROOT / "examples/spark/make_input.py"), "receipts.parquet", "receipt1.der", "receipt2.der"],
        scratch, env, "set-up: receipts.parquet")
    # app.c, which `cc app.c $(pkg-config ...)` builds: the README's C example, made a program.
    example = next(body for language, body, _ in blocks((ROOT / "README.md").read_text())
                   if language == "c" and "#include <receipt.h>" in body)
    (scratch / "app.c").write_text(c_program(example))
    xcode = SHARED / "jws" / "xcode" / "asl-swift__xcode-signed-transaction.jws"
    if xcode.exists():
        shutil.copy(xcode, scratch / "xcode-signed.jws")
        shutil.copy(SHARED / "jws" / "certs" / "StoreKitTestingInXcode-2023-10-19.pem",
                    scratch / "StoreKitTestingInXcode.pem")


def commands(body):
    """(offset, command) for each line of a shell block, a here-document (`<<'EOF'` … `EOF`)
    joined to the command that reads it, its lines as written (a `#` in them is text)."""
    lines = body.splitlines()
    offset = 0
    while offset < len(lines):
        command = lines[offset]
        text = command.split("#", 1)[0].strip() if not command.lstrip().startswith("#") else ""
        heredoc = re.search(r"<<-?\s*'?([A-Za-z_]+)'?", text)
        start = offset
        if heredoc:
            end = next((index for index in range(offset + 1, len(lines)) if lines[index].strip() == heredoc.group(1)), None)
            if end is None:
                raise SystemExit(f"shell block: the here-document at its line {offset + 1} never ends")
            text = "\n".join([text] + lines[offset + 1:end + 1])
            offset = end
        offset += 1
        if text:
            yield start, text


class Session:
    """One document's terminal: a bash per block, each starting from what the blocks before it
    exported (and the directory they left), as if typed into one shell."""

    def __init__(self, scratch, env, name):
        self.scratch, self.env = scratch, env
        self.state = scratch / f".session-{re.sub(r'[^A-Za-z0-9]', '-', name)}"
        self.state.write_text("")

    def install(self, command):
        """`make install PREFIX=P` on a system, in the scratch directory: installed under a prefix of
        its own (built already: nothing is remade), which the shell then searches as a system
        searches /usr/local (bin on PATH, its pkg-config directory, its libraries known to the
        loader). The exports it returns go into the block's script."""
        prefix = self.scratch / ".prefix"
        run(["make", "-s", "-o", "build", "-o", "lib", "-o", "cli", "install", f"PREFIX={prefix}"], ROOT,
            dict(os.environ), f"{command!r} (into {prefix})")
        return (f"export PATH='{prefix}/bin':\"$PATH\" PKG_CONFIG_PATH='{prefix}/lib/pkgconfig' "
                f"LD_LIBRARY_PATH='{prefix}/lib'")

    def run(self, script, what, timeout=900):
        # bash -c without -e: each command's status is checked by the script (`checked`), not by bash.
        text = f". '{self.state}'\n{script}\nrc=$?\nexport -p > '{self.state}.next'\n" \
               f"echo \"cd '$PWD'\" >> '{self.state}.next'\nexit $rc\n"
        run(["bash", "-c", text], self.scratch, self.env, what, timeout)
        (self.state.parent / f"{self.state.name}.next").replace(self.state)


def check_shell(body, line, session):
    script = ["set -o pipefail", "checked() {", "  rc=$?; [ $rc -le $1 ] && return 0",
              "  echo \"$2: exit $rc\" >&2; exit 1", "}"]
    for offset, text in commands(body):
        where = f"{Where(line.document, line + 1 + offset)}"
        if "xcode-signed.jws" in text and not (session.scratch / "xcode-signed.jws").exists():
            print(f"readme: skipped {where} ({text[:40]}…): ../shared is absent, no Xcode-signed JWS")
            continue
        parts = [part.strip() for part in text.split("&&")]
        makes = [part for part in parts if re.match(r"make\b", part)]
        for part in makes:
            # make test cannot run itself, nor make install write to the system, and even
            # `make -n` runs the $(MAKE) lines of a recipe: the targets must exist, statically.
            missing = [target for target in make_targets(part) if target not in MAKE_TARGETS]
            if missing:
                raise SystemExit(f"README {where}: {part!r} names no target {missing} of the Makefile")
        for part in makes:
            if "install" in make_targets(part):
                script.append(session.install(part))
        if makes:
            if parts[:len(makes)] != makes:
                raise SystemExit(f"README {where}: a make goal after another command cannot be checked: {text!r}")
            text = " && ".join(parts[len(makes):])
            if not text:
                continue
        # A command must succeed, but `receipt` may give a verdict of NOT VALID (exit 1) on the
        # reader's own files, unless the line's comment promises `# VALID`.
        comment = body.splitlines()[offset].partition(" #")[2]
        allowed = 1 if text.startswith("receipt ") and not re.match(r"\s*VALID\b", comment) else 0
        script.append(f"{text}\nchecked {allowed} 'README {where}: {text.splitlines()[0].replace(chr(39), '')}'")
    session.run("\n".join(script), f"shell block at line {line}")


def targets_of_the_makefile():
    """Every target the Makefile defines, from make's database (no recipe runs)."""
    database = subprocess.run(["make", "-rpq", "-f", "Makefile", ".readme-no-such-target"], cwd=ROOT,
                              capture_output=True, text=True).stdout
    return {match.group(1) for match in re.finditer(r"^([A-Za-z][\w.-]*):", database, re.M)}


MAKE_TARGETS = targets_of_the_makefile()


def make_targets(command):
    """The goals of a `make ...` line; `all` when it names none."""
    goals = [word for word in command.split()[1:] if "=" not in word and not word.startswith("-")]
    return goals or ["all"]


def check_python(body, line, session):
    uses_spark = re.search(r"\bspark\.", body) is not None
    program = PY_PRELUDE + (SPARK_PRELUDE if uses_spark else "") + body + (SPARK_EPILOGUE if uses_spark else "")
    path = session.scratch / f"block_{int(line)}.py"
    path.write_text(program)
    session.run(f"python3 '{path}'", f"Python block at line {line}")


def c_program(body):
    includes = "\n".join(row for row in body.splitlines() if row.startswith("#include"))
    code = "\n".join(row for row in body.splitlines() if not row.startswith("#include"))
    return C_PRELUDE % {"includes": includes, "block": code}


def check_c(body, line, scratch, env):
    source = scratch / f"block_{int(line)}.c"
    source.write_text(c_program(body))
    program = scratch / f"block_{int(line)}"
    run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-o", str(program), str(source), f"-I{BUILD}/include",
         f"-L{BUILD}/lib", "-lreceipt", f"-Wl,-rpath,{BUILD}/lib"], scratch, env, f"C block at line {line} (build)")
    run([str(program)], scratch, env, f"C block at line {line} (run)")


def check_swift(manifest, main, line, scratch, env):
    package = scratch / "app"
    (package / "Sources" / "app").mkdir(parents=True)
    (scratch / "libreceipt").symlink_to(ROOT)
    (package / "Package.swift").write_text(manifest)
    (package / "Sources" / "app" / "main.swift").write_text(main)
    run(["swift", "build", "-q"], package, env, f"Swift blocks at line {line} (build)", timeout=1800)
    # A program that depends on ReceiptCore resolves no package but this one (the server's sit behind a trait).
    shown = subprocess.run(["swift", "package", "show-dependencies", "--format", "json"], cwd=package, env=env,
                           capture_output=True, text=True, timeout=600)
    tree = json.loads(shown.stdout)
    resolved = [dependency["identity"] for root in tree["dependencies"] for dependency in root.get("dependencies", [])]
    if shown.returncode != 0 or [root["name"] for root in tree["dependencies"]] != ["libreceipt"] or resolved:
        raise SystemExit(f"Swift blocks at line {line}: a program depending on ReceiptCore resolves more than libreceipt: "
                         f"{resolved or shown.stderr[-500:]}")
    run([str(package / ".build" / "debug" / "app")], scratch, env, f"Swift blocks at line {line} (run)")


class Where(int):
    """A block's line number that names its document when shown (README.md:120)."""

    def __new__(cls, document, number):
        where = super().__new__(cls, number)
        where.document = document
        return where

    def __str__(self):
        return f"{self.document}:{int(self)}"

    __format__ = lambda self, spec: str(self)  # noqa: E731


def documents():
    """README.md, then each guide it links to under docs/, in the order it lists them: the blocks of
    one scratch directory run in that order (a later block may use a file an earlier one made)."""
    readme = (ROOT / "README.md").read_text()
    guides = list(dict.fromkeys(re.findall(r"\]\((docs/[\w-]+\.md)\)", readme)))
    if not guides:
        raise SystemExit("README.md links to no guide under docs/")
    return [("README.md", readme)] + [(guide, (ROOT / guide).read_text()) for guide in guides]


def main():
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    counts = {}
    with tempfile.TemporaryDirectory(prefix="readme-") as directory:
        scratch = pathlib.Path(directory)
        (scratch / ".home").mkdir()
        # The reader's environment: nothing of the project's on it (see the docstring).
        reader = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(scratch / ".home"), "LANG": "C.UTF-8",
                  "SPARK_LOCAL_IP": "127.0.0.1"}
        # The harness's own steps (minting the reader's files, building C and Swift blocks).
        harness = dict(os.environ, PATH=f"{BUILD / 'bin'}:{PYTHON.parent}:{os.environ['PATH']}",
                       PKG_CONFIG_PATH=str(BUILD / "lib" / "pkgconfig"))
        prepare(scratch, harness)
        pending_manifest = None
        for document, text in documents():
            session = Session(scratch, reader, document)
            for language, body, number in blocks(text):
                line = Where(document, number)
                if only and language != only:
                    continue
                if language == "sh":
                    check_shell(body, line, session)
                elif language == "python":
                    check_python(body, line, session)
                elif language == "c":
                    check_c(body, line, scratch, harness)
                elif language == "swift":
                    if "PackageDescription" in body:
                        pending_manifest = body
                        continue
                    if pending_manifest is None:
                        raise SystemExit(f"Swift block at {line}: no Package.swift block before it")
                    check_swift(pending_manifest, body, line, scratch, harness)
                    pending_manifest = None
                else:
                    continue
                counts[language] = counts.get(language, 0) + 1
                print(f"readme: {language} block at line {line}: ran")
    if pending_manifest is not None:
        raise SystemExit("README: a Package.swift block with no code block after it")
    ran = sum(counts.values())
    print(f"readme: blocks run: {', '.join(f'{n} {lang}' for lang, n in sorted(counts.items()))}")
    print(f"readme: {ran} passed, 0 failed")


if __name__ == "__main__":
    main()
