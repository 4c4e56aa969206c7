"""What the API adds to a command's ``--json`` document: beside every ``plan`` object, its
``plan_text``, written by the one plan formatter (``scalewall.plan.format_plan``), so the page
shows a plan exactly as the CLI and the report do and never formats one itself."""

from __future__ import annotations

from typing import Any

from scalewall.plan.format import format_plan, modules_suffix

PLAN_TEXT = "plan_text"
"""The key added beside each ``plan``."""


def with_plan_texts(doc: Any) -> Any:
    """``doc`` with ``plan_text`` (``format_plan``, the full form) added to every object that
    holds a ``plan`` object, at any depth; everything else as it was."""
    if isinstance(doc, list):
        return [with_plan_texts(v) for v in doc]
    if not isinstance(doc, dict):
        return doc
    out = {k: with_plan_texts(v) for k, v in doc.items()}
    if isinstance(doc.get("plan"), dict):
        out[PLAN_TEXT] = format_plan(doc["plan"]) + modules_suffix(
            doc.get("recompute_modules") or ()
        )
    return out


def without_plan_texts(doc: Any) -> Any:
    """``doc`` as the command printed it: every ``plan_text`` beside a ``plan`` removed."""
    if isinstance(doc, list):
        return [without_plan_texts(v) for v in doc]
    if not isinstance(doc, dict):
        return doc
    drop = PLAN_TEXT if isinstance(doc.get("plan"), dict) else None
    return {k: without_plan_texts(v) for k, v in doc.items() if k != drop}


def api_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of the API's ``kind`` document: the command's (``scalewall schema
    KIND``) with a required string ``plan_text`` beside every ``plan`` property. An input kind
    (a file the user sends) is the command's schema as it is."""
    from scalewall.schemas import INPUT_KINDS, schema

    found = schema(kind)
    return found if kind in INPUT_KINDS else _with_plan_text_property(found)


def _with_plan_text_property(node: Any) -> Any:
    if isinstance(node, list):
        return [_with_plan_text_property(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _with_plan_text_property(v) for k, v in node.items()}
    props = node.get("properties")
    if isinstance(props, dict) and "plan" in props:
        text = {"type": "string", "description": "The plan as one line (format_plan)."}
        out["properties"] = {**out["properties"], PLAN_TEXT: text}
        if "plan" in node.get("required", ()):
            out["required"] = [*node["required"], PLAN_TEXT]
    return out


__all__ = ["PLAN_TEXT", "api_schema", "with_plan_texts", "without_plan_texts"]
