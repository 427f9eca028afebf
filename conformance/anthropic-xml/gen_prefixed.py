#!/usr/bin/env python3
"""Writes the anthropic-xml conformance cases whose input needs the prefixed form.

Some tooling treats the literal prefixed tags as live markup, so they are never typed
out: this script assembles them from pieces and writes each case's input (.txt) and its
expected document (.json). The expected documents are derived by hand from
spec/anthropic-xml.md, like every other case. Run it from this folder:

    python3 gen_prefixed.py
"""
import json

P = "ant" + "ml" + ":"


def o(name, attrs=""):
    """The prefixed opener of `name`."""
    return "<" + P + name + attrs + ">"


def c(name):
    """The prefixed closer of `name`."""
    return "</" + P + name + ">"


def T(t):
    return {"type": "text", "text": t}


def TH(t, closed=True):
    return {"type": "thinking", "text": t, "closed": closed}


def C(name, params, inp, complete=True):
    return {"name": name, "params": params, "input": inp, "complete": complete}


def TC(calls, closed=True, stray=None):
    d = {"type": "tool_calls", "calls": calls, "closed": closed}
    if stray:
        d["stray"] = stray
    return d


def R(id, content, err=False):
    return {"tool_use_id": id, "is_error": err, "content": content}


def TR(results, closed=True):
    return {"type": "tool_results", "results": results, "closed": closed}


CASES = {}


def case(name, text, blocks):
    assert name not in CASES, name
    CASES[name] = (text, blocks)


case("prefixed-single-invoke",
     "I will read it.\n" + o("function_calls") + "\n" + o("invoke", ' name="Read"') + "\n"
     + o("parameter", ' name="path"') + "/a.txt" + c("parameter") + "\n" + c("invoke") + "\n"
     + c("function_calls") + "\nDone.",
     [T("I will read it.\n"), TC([C("Read", {"path": "/a.txt"}, {"path": "/a.txt"})]), T("\nDone.")])
case("prefixed-thinking", o("thinking") + "plan" + c("thinking") + "after",
     [TH("plan"), T("after")])
case("mixed-prefix-thinking",
     "<thinking>a" + c("thinking") + " " + o("thinking") + "b</thinking>",
     [TH("a"), T(" "), TH("b")])
case("mixed-prefix-calls",
     "<function_calls>\n" + o("invoke", ' name="x"') + "\n<parameter name=\"a\">1" + c("parameter")
     + "\n</invoke>\n" + c("function_calls"),
     [TC([C("x", {"a": "1"}, {"a": 1})])])
case("prefixed-results",
     o("function_results") + "\n" + o("result", ' tool_use_id="t"') + "x &amp; y" + c("result") + "\n"
     + o("error") + "e</error>\n</function_results>",
     [TR([R("t", "x & y"), R(None, "e", True)])])
value = "close with " + c("parameter") + " when done"
case("prefixed-parameter-closer-literal-in-value",
     "<function_calls><invoke name=\"f\"><parameter name=\"v\">" + value + "</parameter></invoke></function_calls>",
     [TC([C("f", {"v": value}, {"v": value})])])
case("prefixed-invoke-closer-ends-value",
     "<function_calls><invoke name=\"f\"><parameter name=\"v\">x</parameter>\n" + c("invoke") + "</function_calls>",
     [TC([C("f", {"v": "x"}, {"v": "x"})])])
case("prefixed-parameter-opener-ends-value",
     "<function_calls><invoke name=\"f\"><parameter name=\"a\">x</parameter>" + o("parameter", ' name="b"') + "y"
     + c("parameter") + "</invoke></function_calls>",
     [TC([C("f", {"a": "x", "b": "y"}, {"a": "x", "b": "y"})])])
case("prefixed-block-closer-ends-value",
     "<function_calls><invoke name=\"f\"><parameter name=\"a\">x" + c("parameter") + " " + c("function_calls") + "z",
     [TC([C("f", {"a": "x"}, {"a": "x"}, complete=False)]), T("z")])
case("prefixed-partial-opener-at-end-of-input", "text <" + P + "thin",
     [T("text <" + P + "thin")])
case("prefix-only-partial-at-end-of-input", "text <ant", [T("text <ant")])
lookalikes = o("thinkingcap") + "x" + o("foo") + "<antml;thinking>" + "<THINKING>" + "<" + P + P + "thinking>"
case("prefixed-lookalikes-are-text", lookalikes, [T(lookalikes)])
prose = "use " + o("invoke", ' name="Read"') + " and " + o("result") + "r" + c("result") + " " + c("thinking")
case("prefixed-structure-out-of-place-is-text", prose, [T(prose)])
inner = o("function_calls") + o("invoke", ' name="x"') + c("invoke") + c("function_calls")
case("prefixed-tags-in-thinking-text", "<thinking>plan: " + inner + "</thinking>",
     [TH("plan: " + inner)])
case("prefixed-self-closing-invoke",
     o("function_calls") + "\n<" + P + "invoke name=\"list\"/>\n" + c("function_calls"),
     [TC([C("list", {}, {})])])
case("prefixed-unclosed-block-at-end-of-input",
     o("function_calls") + "\n" + o("invoke", ' name="x"') + "\n" + o("parameter", ' name="a"') + "v",
     [TC([C("x", {"a": "v"}, {"a": "v"}, complete=False)], closed=False)])
case("prefixed-tool-named-get-thinking-notes",
     o("function_calls") + o("invoke", ' name="get_thinking_notes"') + c("invoke") + c("function_calls"),
     [TC([C("get_thinking_notes", {}, {})])])
stray = "\n" + c("thinking") + "\n"
case("prefixed-stray-closer-in-block",
     "<function_calls>" + stray + "<invoke name=\"a\"/></function_calls>",
     [TC([C("a", {}, {})], stray=[stray])])

if __name__ == "__main__":
    for name, (text, blocks) in CASES.items():
        with open(name + ".txt", "wb") as f:
            f.write(text.encode())
        with open(name + ".json", "w") as f:
            f.write(json.dumps({"blocks": blocks}, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {len(CASES)} cases")
