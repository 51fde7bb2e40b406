#!/usr/bin/env python3
"""receipt(1) from the argument parser itself: reads `receipt --experimental-dump-help` (JSON)
on standard input and writes a man page (troff, man macros) on standard output, one section
per subcommand with its arguments, so that the page never says other than `--help` does.
    build/bin/receipt --experimental-dump-help | tools/make_manpage.py VERSION > receipt.1"""
import json
import sys


def escape(text):
    """Text safe in troff: backslashes doubled, a leading dot or quote protected, dashes literal."""
    text = (text or "").replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + line if line.startswith((".", "'")) else line) for line in text.splitlines())


def synopsis(argument):
    if argument["kind"] == "positional":
        return f"<{argument['valueName']}>"
    name = argument["preferredName"]
    flag = ("--" if name["kind"] == "long" else "-") + name["name"]
    return flag if argument["kind"] == "flag" else f"{flag} <{argument['valueName']}>"


def arguments(command, out):
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True) or argument.get("valueName") in ("help", "version"):
            continue
        out.append(".TP")
        out.append("\\fB" + escape(synopsis(argument)) + "\\fR")
        text = argument.get("abstract", "")
        if argument.get("defaultValue"):
            text += f" (default: {argument['defaultValue']})"
        out.append(escape(text))


def section(command, path, out):
    if not command.get("shouldDisplay", True) or command["commandName"] == "help":
        return
    out.append(f'.SS "{" ".join(path)}"')  # names as typed (letters, digits and '-'), so the page is searchable by them
    out.append(escape(command.get("abstract", "")))
    if command.get("discussion"):
        out.append(".PP")
        out.append(escape(command["discussion"]))
    arguments(command, out)
    for sub in command.get("subcommands", []) or []:
        section(sub, path + [sub["commandName"]], out)


def main():
    version = sys.argv[1] if len(sys.argv) > 1 else ""
    root = json.load(sys.stdin)["command"]
    # .ad l: ragged right, as URLs and option values cannot be stretched to justify a line.
    out = [f'.TH RECEIPT 1 "" "libreceipt {escape(version)}" "User Commands"', ".ad l", ".SH NAME",
           "receipt \\- " + escape(root.get("abstract", "")), ".SH SYNOPSIS", "\\fBreceipt\\fR <subcommand> [options]",
           ".SH DESCRIPTION", escape(root.get("discussion", "")), ".SH SUBCOMMANDS"]
    for sub in root.get("subcommands", []):
        section(sub, ["receipt", sub["commandName"]], out)
    out += [".SH SEE ALSO", "The README of libreceipt; \\fBreceipt <subcommand> \\-\\-help\\fR."]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
