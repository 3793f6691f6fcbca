"""Hooks of end2end/fuzz.sh's schemathesis runs.

Each generated request that carries a well-formed `Idempotency-Key` gets a key of its own: the
server replays or refuses (422 `idempotency_key_reused`) a key that came with another request,
as the API promises, and a partner sends a fresh key with each new request. Generated keys
repeat (the shortest strings first), so without this most writes would be refused for reuse.
A case that leaves out a header on purpose is sent as it is.
"""

import itertools
import re

import schemathesis

_WELL_FORMED = re.compile(r"^[\t -~]*[!-~][\t -~]*$")
_SEQUENCE = itertools.count()


def _leaves_out_a_header(case):
    """Whether the case is one that leaves out a header (`Authorization`, say) on purpose.

    Editing such a case's headers has schemathesis judge it again: its remaining headers are
    valid, so it would be sent as a valid request, with the header it means to leave out.
    """
    data = getattr(getattr(case.meta, "phase", None), "data", None)
    scenario = getattr(getattr(data, "scenario", None), "value", None)
    location = getattr(getattr(data, "parameter_location", None), "value", None)
    return scenario == "missing_parameter" and location == "header"


@schemathesis.hook
def before_call(context, case, kwargs):
    if _leaves_out_a_header(case):
        return
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() != "idempotency-key":
            continue
        key = headers[name]
        if isinstance(key, str) and not key.strip(" \t"):
            # Schemathesis reads a header with nothing in it as no header, which the request may
            # leave out; the server refuses an empty key. Send none, as it judges the request.
            del headers[name]
            continue
        if isinstance(key, str) and len(key) <= 255 and _WELL_FORMED.match(key):
            suffix = f"-{next(_SEQUENCE)}"
            headers[name] = key.strip()[: 255 - len(suffix)] + suffix
