#!/usr/bin/env python3
"""Which folders of Sources/ReceiptCore, and of Server/Sources/ReceiptServer, use which others of the
same module, by the names they declare (types, and top-level functions and constants), and
whether each graph follows the layer order of ARCHITECTURE.md with no cycle.
    tools/layers.py [--check]"""
import pathlib
import re
import sys

CHECKOUT = pathlib.Path(__file__).resolve().parents[1]
# Per module (its folder), bottom first. A folder may use only folders listed before it.
LAYERS = {
    "Sources/ReceiptCore": ["Primitives", "Errors", "Dates", "Encoding", "Container", "Payload", "Model", "Crypto", "Verification",
                    "Entitlements", "Subscriptions", "JSON", "AppStore", "ServerAPI", "Service"],
    # The server: what every part uses (answers, deadlines, logs, metrics), the store, the
    # workers that drain it, the settings that make them, the areas that answer, HTTP, the process.
    "Server/Sources/ReceiptServer": ["Support", "Store", "Workers", "Settings", "Endpoints", "HTTP", "Process"],
}
ROOT = CHECKOUT / "Sources" / "ReceiptCore"
DECLARATION = re.compile(r"^(?:public |package |internal |private |fileprivate |final |indirect |@\w+ )*"
                         r"(?:struct|enum|class|protocol|typealias|func|let|var|actor)\s+([A-Za-z_]\w*)", re.M)


def folder_of(path):
    relative = path.relative_to(ROOT)
    return relative.parts[0] if len(relative.parts) > 1 else "(root)"


def code_without_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def graph():
    files = sorted(ROOT.rglob("*.swift"))
    declared = {}
    for path in files:
        # Only top-level declarations (no indentation) name what a folder offers.
        for name in DECLARATION.findall(code_without_comments_and_strings(path.read_text())):
            declared.setdefault(name, set()).add(folder_of(path))
    edges = {}
    for path in files:
        mine = folder_of(path)
        words = set(re.findall(r"\b[A-Za-z_]\w*\b", code_without_comments_and_strings(path.read_text())))
        for word in words:
            for owner in declared.get(word, ()):
                if owner != mine and len(declared[word]) == 1:
                    edges.setdefault((mine, owner), set()).add(f"{word} ({path.name})")
    return edges


def main():
    global ROOT
    failed = False
    for module, order in LAYERS.items():
        ROOT = CHECKOUT / module
        edges = graph()
        wrong = []
        for (user, used), names in sorted(edges.items()):
            ok = user in order and used in order and order.index(used) < order.index(user)
            if not ok:
                wrong.append((user, used, names))
            if "--check" not in sys.argv or not ok:
                print(f"{'ok ' if ok else 'UP '} {module}: {user} -> {used}: {', '.join(sorted(names)[:6])}")
        if "--check" in sys.argv:
            print(f"layers of {module}: {len(edges)} folder dependencies, {len(wrong)} against the order {' < '.join(order)}")
        failed = failed or bool(wrong)
    sys.exit(1 if failed and "--check" in sys.argv else 0)


if __name__ == "__main__":
    main()
