"""MyST markdown (what Jupyter Book renders) turned into plain Markdown (what JupyterLab and Colab render).

- ``{exercise}`` blocks become ``### Exercise N.k: Title`` and their body (the difficulty line stays);
- an admonition with ``:class: dropdown`` (the answers to the prose's questions) and ``{dropdown}``
  become an HTML ``<details>`` block, which JupyterLab and Colab render collapsed;
- other admonitions (``{admonition} Title``, ``{note}``, ``{warning}``, ...) become a blockquote with
  a bold title;
- ``{figure}`` / ``{image}`` become a Markdown image, ``{math}`` a ``$$`` block, ``{glossary}`` a list;
- ``{solution}`` blocks (an answer) are removed; any other directive keeps its body, without fences;
- roles become plain text: {term}`x`, {numref}`label`, {ref}`text <label>`, {doc}`x`, {glue:}`x`,
  {cite}`x` (an exercise's label becomes its name, "Exercise 4.2"); ``(label)=`` targets go.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:.-]+)\}[ \t]*(?P<args>.*)$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
_ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<content>[^`]*)`")
_TARGET = re.compile(r"^\s*\([\w:.-]+\)=\s*$")
_ADMONITIONS = {"note", "warning", "tip", "hint", "important", "caution", "attention", "danger", "error",
                "seealso", "admonition", "margin", "sidebar", "topic", "epigraph", "pull-quote"}


def _split_target(content: str) -> tuple[str, str]:
    """``text <target>`` -> (text, target); ``target`` -> ("", target)."""
    match = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", content.strip(), re.S)
    if match and match.group("text"):
        return match.group("text"), match.group("target")
    return "", content.strip().strip("<>")


def _role(match: re.Match[str], names: dict[str, str]) -> str:
    name, content = match.group("name"), match.group("content")
    text, target = _split_target(content)
    if name in ("math",):
        return f"${content}$"
    if name in ("sub", "sup", "kbd"):
        return f"<{name}>{content}</{name}>"
    if name in ("code", "samp", "file", "command", "envvar", "option", "literal"):
        return f"`{content}`"
    if name.startswith("cite"):
        keys = ", ".join(k.strip() for k in content.split(","))
        return keys if name in ("cite:t", "cite:ts", "cite:author") else f"({keys})"
    if name in ("numref", "ref", "eq", "numref:") or name.startswith("ref"):
        number = names.get(target, "")
        if text:
            return text.replace("%s", number).replace("{number}", number).strip()
        return number or (f"({target})" if name == "eq" else target.replace("-", " "))
    if name == "doc":
        return text or target.rsplit("/", 1)[-1]
    if name == "abbr":
        return re.sub(r"\s*\(.*\)\s*$", "", content)
    return text or target  # term, glue:, glue:text, download, index, any other role


def _directive(name: str, args: str, options: dict[str, str], body: str, names: dict[str, str]) -> str:
    """One directive block (its body already converted) as plain Markdown."""
    classes = options.get("class", "").split()
    if name == "exercise":
        title = args.strip()
        heading = names.get(options.get("label", ""), "Exercise")
        return f"### {heading}: {title}\n\n{body}" if title else f"### {heading}\n\n{body}"
    if name == "solution":
        return ""
    if name == "dropdown" or (name in _ADMONITIONS and "dropdown" in classes):
        summary = args.strip() or name.capitalize()
        return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
    if name in _ADMONITIONS:
        title = args.strip() or ("See also" if name == "seealso" else name.capitalize())
        lines = [f"**{title}**", "", *body.splitlines()] if body else [f"**{title}**"]
        return "\n".join(f"> {line}" if line.strip() else ">" for line in lines)
    if name in ("figure", "image"):
        alt = options.get("alt", "")
        image = f"![{alt or body.splitlines()[0] if body else alt}]({args.strip()})"
        return f"{image}\n\n{body}" if name == "figure" and body else image
    if name == "math":
        return f"$$\n{body}\n$$"
    if name == "glossary":
        entries, term = [], None
        for line in body.splitlines():
            if line.strip() and not line[:1].isspace():
                term = line.strip()
                entries.append([term, []])
            elif line.strip() and term is not None:
                entries[-1][1].append(line.strip())
        return "\n".join(f"- **{t}**: {' '.join(d)}" for t, d in entries)
    if name in ("code-block", "code", "sourcecode"):
        return f"```{args.strip()}\n{body}\n```"
    return body  # any other directive: its content, without the fences


def myst_to_markdown(markdown: str, names: dict[str, str] | None = None) -> str:
    """Convert one markdown cell's MyST to plain Markdown; ``names`` maps labels to names (exercises)."""
    names = names or {}
    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if not opened:
            if not _TARGET.match(lines[i]):
                out.append(lines[i])
            i += 1
            continue
        fence, indent = opened.group("fence"), opened.group("indent")
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        raw = lines[i + 1:end]
        options: dict[str, str] = {}
        if raw and raw[0].strip() == "---":  # YAML-style options between --- lines
            close = next((k for k in range(1, len(raw)) if raw[k].strip() == "---"), 0)
            for line in raw[1:close]:
                key, _, value = line.partition(":")
                options[key.strip()] = value.strip()
            raw = raw[close + 1:]
        while raw and _OPTION.match(raw[0]):
            option = _OPTION.match(raw[0])
            assert option is not None
            options[option.group("key")] = option.group("value")
            raw = raw[1:]
        body = myst_to_markdown("\n".join(line[len(indent):] if line.startswith(indent) else line
                                          for line in raw), names).strip("\n")
        block = _directive(opened.group("name"), opened.group("args"), options, body, names)
        out.extend(indent + line if line else line for line in block.splitlines())
        i = end + 1
    text = "\n".join(out)
    return _ROLE.sub(lambda m: _role(m, names), text)
