#!/usr/bin/env python3
"""Runs every C, Python, Swift and shell block of README.md and of the guides it links to in docs/,
so that none can drift from the code.

    Tests/readme/check_readme.py [--only c|python|swift|sh]     (make test-docs)

Each block runs in a scratch directory that holds what the README's examples name: receipt.der,
receipt1.der, receipt2.der (minted), transaction.jws (minted), receipts.parquet, and, when ../shared
is beside this checkout, xcode-signed.jws with StoreKitTestingInXcode.pem; tools/, examples/,
bindings/, build/ and the Makefile are linked in. `receipt` and the project's venv come first on PATH.
- shell: the block's lines run in one bash, in order; each must end 0, or 1 for `receipt` (a
  verdict: NOT VALID), never more (a usage error, a missing file, a command not found). A `make`
  line is checked, not run (make test cannot run itself, `make install` would write to the system,
  and even `make -n` runs a recipe's $(MAKE) lines): each goal must be a target of the Makefile.
  `cc app.c …` compiles the README's C example (app.c), with PKG_CONFIG_PATH at build/.
- Python: after `import libreceipt` and `token = open("transaction.jws").read()`; a block that uses
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


def check_shell(body, line, scratch, env):
    script = ["set -o pipefail"]
    for offset, text in commands(body):
        where = f"line {Where(line.document, line + 1 + offset)}"
        if "xcode-signed.jws" in text and not (scratch / "xcode-signed.jws").exists():
            print(f"readme: skipped {where} ({text[:40]}…): ../shared is absent, no Xcode-signed JWS")
            continue
        lines = []
        for part in (part.strip() for part in text.split("&&")):
            if re.match(r"make\b", part):
                # make test cannot run itself, nor make install write to the system, and even
                # `make -n` runs the $(MAKE) lines of a recipe: the targets must exist, statically.
                missing = [target for target in make_targets(part) if target not in MAKE_TARGETS]
                if missing:
                    raise SystemExit(f"README {where}: {part!r} names no target {missing} of the Makefile")
                continue
            lines.append(part)
        for part in lines:
            # `receipt` exits 1 for a verdict (NOT VALID); every other command must succeed.
            allowed = 1 if part.startswith("receipt ") else 0
            script.append(f"{part}\nrc=$?; if [ $rc -gt {allowed} ]; then echo 'README {where}: exit '$rc' from: "
                          f"{part.replace(chr(39), '')}' >&2; exit 1; fi")
    run(["bash", "-c", "\n".join(script)], scratch, env, f"shell block at line {line}")


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


def check_python(body, line, scratch, env):
    uses_spark = re.search(r"\bspark\.", body) is not None
    program = PY_PRELUDE + (SPARK_PRELUDE if uses_spark else "") + body + (SPARK_EPILOGUE if uses_spark else "")
    path = scratch / f"block_{int(line)}.py"
    path.write_text(program)
    run([str(PYTHON), str(path)], scratch, env, f"Python block at line {line}")


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
    env = dict(os.environ, PATH=f"{BUILD / 'bin'}:{PYTHON.parent}:{os.environ['PATH']}",
               RECEIPT_LIBRARY=str(BUILD / "lib" / "libreceipt.so.1"), PYTHONPATH=str(ROOT / "bindings" / "python"),
               SPARK_LOCAL_IP="127.0.0.1", PKG_CONFIG_PATH=str(BUILD / "lib" / "pkgconfig"))
    counts = {}
    with tempfile.TemporaryDirectory(prefix="readme-") as directory:
        scratch = pathlib.Path(directory)
        prepare(scratch, env)
        pending_manifest = None
        for document, text in documents():
            for language, body, number in blocks(text):
                line = Where(document, number)
                if only and language != only:
                    continue
                if language == "sh":
                    check_shell(body, line, scratch, env)
                elif language == "python":
                    check_python(body, line, scratch, env)
                elif language == "c":
                    check_c(body, line, scratch, env)
                elif language == "swift":
                    if "PackageDescription" in body:
                        pending_manifest = body
                        continue
                    if pending_manifest is None:
                        raise SystemExit(f"Swift block at {line}: no Package.swift block before it")
                    check_swift(pending_manifest, body, line, scratch, env)
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
